// What makes a person's run different from an agent's: no time limit unless they set one, and a file runs
// as that script (its folder, `__file__`, `sys.path`), the way `python file.py` and the Python extension run it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunOptions } from '../engine/engine';
import type { RunResult, ScriptRun } from '../engine/types';
import type { PersonRunSettings } from './settings';

const TIMEOUT_SETTING = 'codeMode.run.timeoutSeconds';

/** The time limit of a person's run, and the setting to name when it is reached. */
export function personRunLimits(settings: PersonRunSettings): Pick<RunOptions, 'timeoutS' | 'timeoutSource'> {
  return { timeoutS: settings.timeoutS, timeoutSource: `setting ${TIMEOUT_SETTING}` };
}

/** The script a document's lines run as, from `firstLine` (1-based); undefined for an unsaved, untitled one. */
export function scriptOf(document: vscode.TextDocument, firstLine: number, settings: PersonRunSettings): ScriptRun | undefined {
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
    if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', TIMEOUT_SETTING);
  });
}

function realPath(file: string): string {
  try {
    return fs.realpathSync.native(file);
  } catch {
    return file;
  }
}
