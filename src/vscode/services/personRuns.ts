// The one way a person's run starts, whoever starts it (Run File/Selection, the results page's Re-run, the
// explorer's Run and Re-run), and what makes it different from an agent's: no time limit unless they set one,
// input() asks them in an input box, a file runs as that script (its folder, `__file__`, `sys.path`) the way
// `python file.py` and the Python extension run it, and the same follow-ups after it: the results brought into
// sight, the runs channel when asked for, the failing line in Problems, and the offers a failure calls for (a time
// limit's setting, a missing module's install).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { BackendKind, InputRequest, RunOrigin, RunResult, ScriptRun, ToolApprovals } from '../../engine/index';
import type * as commandsApis from '../common/commands.apis';
import type * as windowApis from '../common/window.apis';
import type * as workspaceApis from '../common/workspace.apis';
import { missingModuleOffer } from '../missingModule';
import type { RunProblems } from '../runProblems';
import type { ExtensionSettings, PersonRunSettings, SettingsService } from '../settings';
import type { EngineService } from './engineService';

const TIMEOUT_SETTING = 'codeMode.run.timeoutSeconds';
/** A person's own session, apart from the agents' "default". */
const OWN_SESSION = 'interactive';

/** The backend of a person's runs: their choice, but never an unsandboxed one (workspace Python, Jupyter) in Restricted Mode. */
export function personBackend(settings: ExtensionSettings, trusted: boolean): BackendKind {
  const choice =
    settings.personRun.backend === 'same-as-agents' ? settings.engine.defaultBackend : settings.personRun.backend;
  return choice !== 'pyodide' && !trusted ? 'pyodide' : choice;
}

/** The session of a person's run of `document` (or of no file). */
export function personSession(
  settings: PersonRunSettings,
  document?: { uri: Pick<vscode.Uri, 'path' | 'toString'> },
): string {
  if (settings.session === 'shared-with-agents') return 'default';
  if (settings.session === 'own' || !document) return OWN_SESSION;
  // Session names are short and plain (engine/config.ts): the file's name, and a hash that tells same-named files apart.
  const name = path
    .basename(document.uri.path)
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .slice(0, 48);
  return `${name}-${createHash('sha256').update(document.uri.toString()).digest('hex').slice(0, 8)}`;
}

/** Where a person's run shows, besides the engine's run events. */
export interface PersonRunViews {
  /** Brings the run into sight without taking the side bar from another view (ResultsView.present). */
  present(): Promise<void>;
  /** Brings the runs channel into view, the focus left where it is. */
  revealRunsChannel(): void;
}

export interface PersonRunServiceDeps {
  engine: Pick<EngineService, 'get'>;
  settings: Pick<SettingsService, 'current'>;
  /** The workspace interpreter in use, if one was chosen yet (named in the missing-module offer). */
  interpreterPath: () => string | undefined;
  /** The window's tool-approval question (asked only when codeMode.tools.approvePersonRuns is off). */
  toolApprovals: ToolApprovals;
  views: PersonRunViews;
  problems: Pick<RunProblems, 'update'>;
  /** Opens the Settings editor at a setting (openSetting.ts). */
  openSetting: (key: string) => Promise<void>;
  window: Pick<
    typeof windowApis,
    'showInformationMessage' | 'showWarningMessage' | 'showErrorMessage' | 'showInputBox'
  >;
  workspace: Pick<typeof workspaceApis, 'isTrusted' | 'workspaceFolders' | 'getWorkspaceFolder'>;
  commands: Pick<typeof commandsApis, 'executeCommand' | 'getCommands'>;
}

export interface PersonRunRequest {
  code: string;
  origin: Extract<RunOrigin, 'command' | 'explorer'>;
  /** Default: the backend of a person's runs (personBackend). */
  backend?: BackendKind;
  /** Default: the session of a person's run of `document` (personSession). */
  session?: string;
  /** The editor's document the code comes from, which picks the session. */
  document?: vscode.TextDocument;
  /** The code is a file's, or lines of one: it runs as that script, and its failing line goes to Problems. */
  script?: ScriptRun;
  /** Show the value of the last expression (default); Run File runs the file as `python file.py` does, without. */
  echoLastExpression?: boolean;
}

export class PersonRunService {
  constructor(private readonly deps: PersonRunServiceDeps) {}

  /** The backend a person's runs use now: their choice, never an unsandboxed one in Restricted Mode. */
  backend(): BackendKind {
    return personBackend(this.deps.settings.current, this.deps.workspace.isTrusted());
  }

  /** The script a document's lines run as, from `firstLine` (1-based); undefined for an unsaved, untitled one. */
  scriptOf(document: vscode.TextDocument, firstLine: number): ScriptRun | undefined {
    if (document.uri.scheme !== 'file') return undefined;
    const file = realPath(document.uri.fsPath);
    const workspaceFolder = this.deps.workspace.getWorkspaceFolder(document.uri)?.uri.fsPath;
    const cwd =
      this.deps.settings.current.personRun.cwd === 'workspace' && workspaceFolder
        ? realPath(workspaceFolder)
        : path.dirname(file);
    return { path: file, firstLine, cwd };
  }

  /** Runs `code` as the person's; undefined (and a notice) when there is no code to run. */
  async run(request: PersonRunRequest): Promise<RunResult | undefined> {
    const { window } = this.deps;
    if (!request.code.trim()) {
      void window.showInformationMessage('Code Mode: nothing to run.');
      return undefined;
    }
    const engine = await this.deps.engine.get();
    const settings = this.deps.settings.current.personRun;
    const backend = request.backend ?? this.backend();
    const { code, origin, script, echoLastExpression } = request;
    const session = request.session ?? personSession(settings, request.document);
    const pending = engine.run({
      code,
      backend,
      script,
      ...(echoLastExpression === false ? { echoLastExpression } : {}),
      session,
      origin,
      timeoutS: settings.timeoutS,
      timeoutSource: `setting ${TIMEOUT_SETTING}`,
      onInput: (input, stopped) => this.askInInputBox(input, stopped),
      toolApprovals: this.deps.toolApprovals,
    });
    const { views } = this.deps;
    await views.present();
    // The runs channel is always written; the result is in the Results view, so it opens only when asked to.
    if (settings.showRunsChannel) views.revealRunsChannel();
    const result = await pending;
    if (!result.success && result.diagnostics?.error_type === 'INVALID_ARGUMENT') {
      void window.showWarningMessage(`Code Mode: ${result.diagnostics.message}`);
    }
    this.offerTimeoutSetting(result);
    void this.offerMissingModule(result, backend, script);
    if (script) this.deps.problems.update(script, result);
    return result;
  }

  /** input() in a person's run: an input box that stays open while they look elsewhere; Escape is end of file. */
  private askInInputBox(request: InputRequest, stopped: AbortSignal): Promise<string | undefined> {
    return this.deps.window.showInputBox(
      {
        title: request.password
          ? 'Code Mode: the running code asks for a password'
          : 'Code Mode: the running code asks for input',
        prompt: request.prompt.trim() || 'input()',
        password: request.password,
        ignoreFocusOut: true,
        placeHolder: 'Enter answers; Escape sends end of file (EOFError)',
      },
      stopped,
    );
  }

  /** A stopped run says which setting stopped it, with a way to change it. */
  private offerTimeoutSetting(result: RunResult): void {
    if (result.diagnostics?.error_type !== 'TIMEOUT') return;
    void this.deps.window
      .showWarningMessage(`Code Mode: ${result.diagnostics.message}`, 'Open Setting')
      .then((choice) => {
        if (choice) void this.deps.openSetting(TIMEOUT_SETTING);
      });
  }

  /** A module the workspace interpreter lacks: the offer to install it, or to make an environment pip will install into. */
  private async offerMissingModule(
    result: RunResult,
    backend: BackendKind,
    script: ScriptRun | undefined,
  ): Promise<void> {
    const { window, workspace, commands } = this.deps;
    const offer = await missingModuleOffer(result, backend, this.deps.interpreterPath(), script, {
      workspace,
      commands,
    });
    if (!offer) return;
    const choice = await window.showErrorMessage(offer.message, offer.action.title);
    if (choice) await commands.executeCommand(offer.action.command, ...offer.action.args);
  }
}

function realPath(file: string): string {
  try {
    return fs.realpathSync.native(file);
  } catch {
    return file;
  }
}
