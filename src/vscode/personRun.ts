// What makes a person's run different from an agent's: no time limit unless they set one, input() asks them
// in an input box, and a file runs as that script (its folder, `__file__`, `sys.path`), the way
// `python file.py` and the Python extension run it.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunOptions, BackendKind, InputRequest, RunResult, ScriptRun, ToolApprovals } from '../engine/index';
import type { ExtensionSettings, PersonRunSettings } from './settings';
import { openSetting } from './openSetting';

const TIMEOUT_SETTING = 'codeMode.run.timeoutSeconds';
/** A person's own session, apart from the agents' "default". */
export const OWN_SESSION = 'interactive';

/** The backend of a person's runs: their choice, but never an unsandboxed one (workspace Python, Jupyter) in Restricted Mode. */
export function personBackend(settings: ExtensionSettings, trusted: boolean): BackendKind {
  const choice =
    settings.personRun.backend === 'same-as-agents' ? settings.engine.defaultBackend : settings.personRun.backend;
  return choice !== 'pyodide' && !trusted ? 'pyodide' : choice;
}

/** The session of a person's run of `document` (or of no file). */
export function personSession(settings: PersonRunSettings, document?: vscode.TextDocument): string {
  if (settings.session === 'shared-with-agents') return 'default';
  if (settings.session === 'own' || !document) return OWN_SESSION;
  // Session names are short and plain (engine/config.ts): the file's name, and a hash that tells same-named files apart.
  const name = path
    .basename(document.uri.path)
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .slice(0, 48);
  return `${name}-${createHash('sha256').update(document.uri.toString()).digest('hex').slice(0, 8)}`;
}

/**
 * What every run a person starts gets: their time limit (and the setting to name when it is reached), input()
 * answered in an input box, and the window's tool-approval question (asked only when codeMode.tools.approvePersonRuns
 * is off).
 */
export function personRunOptions(
  settings: PersonRunSettings,
  toolApprovals: ToolApprovals,
): Pick<RunOptions, 'timeoutS' | 'timeoutSource' | 'onInput' | 'toolApprovals'> {
  return {
    timeoutS: settings.timeoutS,
    timeoutSource: `setting ${TIMEOUT_SETTING}`,
    onInput: askInInputBox,
    toolApprovals,
  };
}

/** input() in a person's run: an input box that stays open while they look elsewhere; Escape is end of file. */
async function askInInputBox(request: InputRequest, stopped: AbortSignal): Promise<string | undefined> {
  const cancel = new vscode.CancellationTokenSource();
  const onStop = () => cancel.cancel();
  stopped.addEventListener('abort', onStop, { once: true });
  try {
    return await vscode.window.showInputBox(
      {
        title: request.password
          ? 'Code Mode: the running code asks for a password'
          : 'Code Mode: the running code asks for input',
        prompt: request.prompt.trim() || 'input()',
        password: request.password,
        ignoreFocusOut: true,
        placeHolder: 'Enter answers; Escape sends end of file (EOFError)',
      },
      cancel.token,
    );
  } finally {
    stopped.removeEventListener('abort', onStop);
    cancel.dispose();
  }
}

/** The script a document's lines run as, from `firstLine` (1-based); undefined for an unsaved, untitled one. */
export function scriptOf(
  document: vscode.TextDocument,
  firstLine: number,
  settings: PersonRunSettings,
): ScriptRun | undefined {
  if (document.uri.scheme !== 'file') return undefined;
  const file = realPath(document.uri.fsPath);
  const workspaceFolder = vscode.workspace.getWorkspaceFolder(document.uri)?.uri.fsPath;
  const cwd = settings.cwd === 'workspace' && workspaceFolder ? realPath(workspaceFolder) : path.dirname(file);
  return { path: file, firstLine, cwd };
}

/** A stopped run says which setting stopped it, with a way to change it. */
export function offerTimeoutSetting(result: RunResult): void {
  if (result.diagnostics?.error_type !== 'TIMEOUT') return;
  void vscode.window.showWarningMessage(`Code Mode: ${result.diagnostics.message}`, 'Open Setting').then((choice) => {
    if (choice) void openSetting(TIMEOUT_SETTING);
  });
}

function realPath(file: string): string {
  try {
    return fs.realpathSync.native(file);
  } catch {
    return file;
  }
}
