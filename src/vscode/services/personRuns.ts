// The one way a person's run starts, whoever starts it (Run File/Selection, the results page's Re-run, the
// explorer's Run and Re-run): their backend, session, time limit and input box, and the same follow-ups after
// it: the results brought into sight, the runs channel when asked for, the failing line in Problems, and the
// offers a failure calls for (a time limit's setting, a missing module's install).
import * as vscode from 'vscode';
import type { BackendKind, RunOrigin, RunResult, ScriptRun, ToolApprovals } from '../../engine/index';
import { offerMissingModule } from '../missingModule';
import { offerTimeoutSetting, personBackend, personRunOptions, personSession } from '../personRun';
import { RunProblems } from '../runProblems';
import type { EngineService } from './engineService';
import type { SettingsCache } from './settingsCache';

/** Where a person's run shows, besides the engine's run events (the views exist after the container). */
export interface PersonRunViews {
  /** Brings the run into sight without taking the side bar from another view (ResultsView.present). */
  present(): Promise<void>;
  /** Brings the runs channel into view, the focus left where it is. */
  revealRunsChannel(): void;
}

export interface PersonRunServiceDeps {
  engine: Pick<EngineService, 'get'>;
  settings: Pick<SettingsCache, 'current'>;
  /** The workspace interpreter in use, if one was chosen yet (named in the missing-module offer). */
  interpreterPath: () => string | undefined;
  /** The window's tool-approval question. */
  toolApprovals: ToolApprovals;
  views: () => PersonRunViews;
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

export class PersonRunService implements vscode.Disposable {
  private readonly problems = new RunProblems();

  constructor(private readonly deps: PersonRunServiceDeps) {}

  /** The backend a person's runs use now: their choice, never an unsandboxed one in Restricted Mode. */
  backend(): BackendKind {
    return personBackend(this.deps.settings.current, vscode.workspace.isTrusted);
  }

  /** Runs `code` as the person's; undefined (and a notice) when there is no code to run. */
  async run(request: PersonRunRequest): Promise<RunResult | undefined> {
    if (!request.code.trim()) {
      void vscode.window.showInformationMessage('Code Mode: nothing to run.');
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
      ...personRunOptions(settings, this.deps.toolApprovals),
    });
    const views = this.deps.views();
    await views.present();
    // The runs channel is always written; the result is in the Results view, so it opens only when asked to.
    if (settings.showRunsChannel) views.revealRunsChannel();
    const result = await pending;
    if (!result.success && result.diagnostics?.error_type === 'INVALID_ARGUMENT') {
      void vscode.window.showWarningMessage(`Code Mode: ${result.diagnostics.message}`);
    }
    offerTimeoutSetting(result);
    void offerMissingModule(result, backend, this.deps.interpreterPath(), script);
    if (script) this.problems.update(script, result);
    return result;
  }

  dispose(): void {
    this.problems.dispose();
  }
}
