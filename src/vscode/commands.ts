import * as vscode from 'vscode';
import type { BackendKind, RunResult, ScriptRun } from '../engine/types';
import { codeToRun } from './codeText';
import type { EngineHost } from './engineHost';
import { offerTimeoutSetting, personRunOptions, scriptOf } from './personRun';
import { updateSetting } from './settings';

export interface ResultsPresenter {
  reveal(runId?: string): void;
}

export interface CommandDeps {
  host: EngineHost;
  runsChannel: vscode.OutputChannel;
  results: ResultsPresenter;
}

const otherBackend = (kind: BackendKind): BackendKind => (kind === 'pyodide' ? 'python' : 'pyodide');

/** The command palette / editor menu front door. Each command returns what it did, for tests and chaining. */
export function registerCommands({ host, runsChannel, results }: CommandDeps): vscode.Disposable[] {
  const run = async (code: string, backend?: BackendKind, script?: ScriptRun): Promise<RunResult | undefined> => {
    if (!code.trim()) {
      void vscode.window.showInformationMessage('Code Mode: nothing to run.');
      return undefined;
    }
    const engine = await host.getEngine();
    runsChannel.show(true);
    const pending = engine.run({ code, backend, script, origin: 'command', ...personRunOptions(host.currentSettings.personRun) });
    results.reveal();
    const result = await pending;
    if (!result.success && result.diagnostics?.error_type === 'INVALID_ARGUMENT') {
      void vscode.window.showWarningMessage(`Code Mode: ${result.diagnostics.message}`);
    }
    offerTimeoutSetting(result);
    return result;
  };

  /** The selection (or line) of the active editor, as code and the script it is part of. */
  const selection = (): { code: string; script?: ScriptRun } | undefined => {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showInformationMessage('Code Mode: open a Python file to run code from it.');
      return undefined;
    }
    const document = editor.document;
    const lines = Array.from({ length: document.lineCount }, (_, i) => document.lineAt(i).text);
    const { start, end } = editor.selection;
    const code = codeToRun(lines, { startLine: start.line, startCharacter: start.character, endLine: end.line, endCharacter: end.character });
    return { code, script: scriptOf(document, start.line + 1, host.currentSettings.personRun) };
  };

  return [
    vscode.commands.registerCommand('codeMode.runSelection', async () => {
      const selected = selection();
      return selected && run(selected.code, undefined, selected.script);
    }),
    vscode.commands.registerCommand('codeMode.runSelectionInOtherBackend', async () => {
      const selected = selection();
      return selected && run(selected.code, otherBackend(host.currentSettings.engine.defaultBackend), selected.script);
    }),
    vscode.commands.registerCommand('codeMode.runFile', async (uri?: vscode.Uri) => {
      const document = uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
      if (!document) {
        void vscode.window.showInformationMessage('Code Mode: open a Python file to run it.');
        return undefined;
      }
      // As the Python extension does: the run reads the file's other lines (tracebacks) from disk.
      if (document.isDirty && document.uri.scheme === 'file') await document.save();
      return run(document.getText(), undefined, scriptOf(document, 1, host.currentSettings.personRun));
    }),
    vscode.commands.registerCommand('codeMode.chooseBackend', async (choice?: BackendKind) => {
      const current = host.currentSettings.engine.defaultBackend;
      const picked =
        choice ??
        (
          await vscode.window.showQuickPick(
            [
              { label: 'pyodide', description: 'WebAssembly, isolated, no set-up', picked: current === 'pyodide' },
              { label: 'python', description: host.interpreterInUse?.path ?? 'the workspace interpreter', picked: current === 'python' },
            ],
            { title: 'Code Mode: default backend', placeHolder: `now: ${current}` },
          )
        )?.label;
      if (picked !== 'pyodide' && picked !== 'python') return undefined;
      await updateSetting('defaultBackend', picked);
      return picked;
    }),
    vscode.commands.registerCommand('codeMode.restartSession', async () => {
      if (!host.isCreated) return false;
      const engine = await host.getEngine();
      const sessions = engine.describeSessions();
      if (sessions.length === 0) return false;
      await Promise.all(sessions.map((s) => engine.resetSession(s.name, s.backend)));
      void vscode.window.showInformationMessage(`Code Mode: restarted ${sessions.length} session(s); their variables are gone.`);
      return true;
    }),
    vscode.commands.registerCommand('codeMode.interrupt', async () => {
      if (!host.isCreated) return false;
      const engine = await host.getEngine();
      const running = engine.describeSessions().filter((s) => s.runningRunId);
      for (const session of running) engine.interrupt(session.name, session.backend);
      if (running.length === 0) void vscode.window.showInformationMessage('Code Mode: nothing is running.');
      return running.length > 0;
    }),
    vscode.commands.registerCommand('codeMode.showOutput', () => runsChannel.show()),
    vscode.commands.registerCommand('codeMode.openResults', (runId?: string) => results.reveal(runId)),
  ];
}
