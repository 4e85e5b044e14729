import * as vscode from 'vscode';
import type { SessionDescription, BackendKind, RunResult, ScriptRun } from '../../engine/index';
import { codeToRun } from '../codeText';
import type { RunOutputWriter } from '../views/runOutput';
import type { EngineService } from '../services/engineService';
import { personSession, type PersonRunService } from '../services/personRuns';
import type { ExtensionSettings, PersonRunSettings, SettingsService } from '../settings';
import { openSetting } from '../openSetting';

export interface ResultsPresenter {
  /** Shows the results, scrolled to one run when given (an explicit request: Show Results, a Recent Runs entry). */
  reveal(runId?: string): Promise<void>;
  /** Brings a person's run into sight without taking the side bar from another view (see ResultsView.present). */
  present(): Promise<void>;
}

export interface RunCommandDeps {
  settings: Pick<SettingsService, 'current' | 'update'>;
  engine: Pick<EngineService, 'ifCreated'>;
  /** The workspace interpreter in use, if one was chosen yet. */
  interpreterPath: () => string | undefined;
  runsChannel: Pick<RunOutputWriter, 'reveal'>;
  results: Pick<ResultsPresenter, 'reveal'>;
  personRuns: Pick<PersonRunService, 'run' | 'backend' | 'scriptOf'>;
}

const otherBackend = (kind: BackendKind): BackendKind => (kind === 'pyodide' ? 'python' : 'pyodide');

/** The command palette / editor menu front door. Each command returns what it did, for tests and chaining. */
export function registerRunCommands({
  settings,
  engine: engines,
  interpreterPath,
  runsChannel,
  results,
  personRuns,
}: RunCommandDeps): vscode.Disposable[] {
  const run = (
    code: string,
    document: vscode.TextDocument,
    backend?: BackendKind,
    script?: ScriptRun,
    echoLastExpression?: boolean,
  ): Promise<RunResult | undefined> =>
    personRuns.run({ code, document, backend, script, origin: 'command', echoLastExpression });

  /** The selection (or line) of the editor of `uri` (else the active one), as code and the script it is part of. */
  const selection = (
    uri?: vscode.Uri,
  ): { code: string; document: vscode.TextDocument; script?: ScriptRun } | undefined => {
    const editor = uri
      ? vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === uri.toString())
      : vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showInformationMessage('Code Mode: open a Python file to run code from it.');
      return undefined;
    }
    const document = editor.document;
    const lines = Array.from({ length: document.lineCount }, (_, i) => document.lineAt(i).text);
    const { start, end } = editor.selection;
    const code = codeToRun(lines, {
      startLine: start.line,
      startCharacter: start.character,
      endLine: end.line,
      endCharacter: end.character,
    });
    return { code, document, script: personRuns.scriptOf(document, start.line + 1) };
  };

  return [
    vscode.commands.registerCommand('codeMode.runSelection', async (uri?: vscode.Uri) => {
      const selected = selection(uri instanceof vscode.Uri ? uri : undefined);
      return selected && run(selected.code, selected.document, undefined, selected.script);
    }),
    vscode.commands.registerCommand('codeMode.runSelectionInOtherBackend', async () => {
      const selected = selection();
      return selected && run(selected.code, selected.document, otherBackend(personRuns.backend()), selected.script);
    }),
    vscode.commands.registerCommand('codeMode.runFile', async (uri?: vscode.Uri) => {
      const document = uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
      if (!document) {
        void vscode.window.showInformationMessage('Code Mode: open a Python file to run it.');
        return undefined;
      }
      // As the Python extension does: the run reads the file's other lines (tracebacks) from disk.
      if (document.isDirty && document.uri.scheme === 'file') await document.save();
      // As `python file.py`: what the file prints, not the value of its last line (Run Selection shows that).
      const script = personRuns.scriptOf(document, 1);
      return run(document.getText(), document, undefined, script, false);
    }),
    vscode.commands.registerCommand('codeMode.chooseBackend', async (choice?: PersonRunSettings['backend']) => {
      const python = interpreterPath() ?? 'python3 on PATH';
      // Its version is known once one of its sessions has started.
      const engine = await engines.ifCreated();
      const version = engine?.describeSessions().find((s) => s.backend === 'python' && s.info.pythonVersion)
        ?.info.pythonVersion;
      const jupyterUrl = settings.current.backends.jupyter.url;
      const items = backendChoices(
        settings.current,
        vscode.workspace.isTrusted,
        version ? `Workspace Python ${version}` : 'Workspace Python',
        python,
      );
      const picked =
        choice ??
        (
          await vscode.window.showQuickPick(items, {
            title: 'Code Mode: backend for your runs',
            placeHolder: 'Agents keep codeMode.defaultBackend',
          })
        )?.value;
      if (picked !== 'pyodide' && picked !== 'python' && picked !== 'jupyter' && picked !== 'same-as-agents')
        return undefined;
      if (picked === 'jupyter' && !jupyterUrl && choice === undefined) {
        await openSetting('codeMode.jupyter.url');
        return undefined;
      }
      await settings.update('run.backend', picked);
      return picked;
    }),
    vscode.commands.registerCommand(
      'codeMode.restartSession',
      async (target?: { session: string; backend: BackendKind }) => {
        const engine = await engines.ifCreated();
        const live = engine?.describeSessions() ?? [];
        if (!engine || live.length === 0) {
          void vscode.window.showInformationMessage(
            'Code Mode: no session is running yet, so there is nothing to restart; the next run starts a fresh one.',
          );
          return false;
        }
        const reason = 'the session was restarted from VS Code';
        // One live session is the one meant: asking "which?" with a single answer is a click for nothing.
        const only = live.length === 1 ? [{ session: live[0]!.name, backend: live[0]!.backend }] : undefined;
        const chosen = target
          ? [target]
          : (only ??
            (await pickSessions(
              live,
              personSession(settings.current.personRun, vscode.window.activeTextEditor?.document),
            )));
        if (!chosen || chosen.length === 0) return false;
        await Promise.all(chosen.map((s) => engine.resetSession(s.session, s.backend, reason)));
        const names = chosen.map((s) => `"${s.session}" (${s.backend})`).join(', ');
        void vscode.window.showInformationMessage(`Code Mode: restarted ${names}; its variables are gone.`);
        return true;
      },
    ),
    vscode.commands.registerCommand('codeMode.interrupt', async () => {
      const engine = await engines.ifCreated();
      if (!engine) return false;
      // Every run the person sees as running: those running or starting their interpreter, and those queued.
      const runIds = engine
        .describeSessions()
        .flatMap((s) => [...(s.runningRunId ? [s.runningRunId] : []), ...s.queuedRunIds]);
      const stopped = runIds.filter((runId) => engine.cancelRun(runId));
      if (stopped.length === 0) void vscode.window.showInformationMessage('Code Mode: nothing is running.');
      return stopped.length > 0;
    }),
    vscode.commands.registerCommand('codeMode.showOutput', () => runsChannel.reveal()),
    vscode.commands.registerCommand('codeMode.openResults', (runId?: string) => results.reveal(runId)),
  ];
}

/** The items of Choose Backend: where your runs can go here, the current one checked. */
export function backendChoices(settings: ExtensionSettings, trusted: boolean, pythonLabel: string, python: string) {
  const current = settings.personRun.backend;
  const jupyterUrl = settings.backends.jupyter.url;
  return [
    // The unsandboxed backends are not offered where they would not run (Restricted Mode).
    ...(trusted ? [{ label: pythonLabel, description: python, value: 'python' as const }] : []),
    { label: 'Pyodide (WebAssembly)', description: 'sandboxed, no set-up', value: 'pyodide' as const },
    // Offered without a server too, saying what it needs: picking it then opens the setting.
    ...(trusted
      ? [
          {
            label: 'Jupyter kernel',
            description: !jupyterUrl
              ? 'set a server first (codeMode.jupyter.url)'
              : jupyterUrl === 'local'
                ? 'a local Jupyter Server'
                : jupyterUrl,
            value: 'jupyter' as const,
          },
        ]
      : []),
    {
      label: "Same as agents'",
      description: `now ${settings.engine.defaultBackend} (codeMode.defaultBackend)`,
      value: 'same-as-agents' as const,
    },
  ].map((item) => ({
    ...item,
    label: item.value === current ? `$(check) ${item.label}` : item.label,
    picked: item.value === current,
  }));
}

/** Which live sessions to restart: the active editor's first, or all of them. */
async function pickSessions(
  live: SessionDescription[],
  editorSession: string,
): Promise<{ session: string; backend: BackendKind }[] | undefined> {
  const sessions = [...live].sort((a, b) => Number(b.name === editorSession) - Number(a.name === editorSession));
  const items = [
    ...sessions.map((s) => ({
      label: `session "${s.name}"`,
      description: `${s.backend}${s.name === editorSession ? ' · this editor' : ''}${s.name === 'default' ? ' · agents' : ''}`,
      targets: [{ session: s.name, backend: s.backend }],
    })),
    ...(sessions.length > 1
      ? [
          {
            label: 'All sessions',
            description: `${sessions.length} live`,
            targets: sessions.map((s) => ({ session: s.name, backend: s.backend })),
          },
        ]
      : []),
  ];
  return (
    await vscode.window.showQuickPick(items, {
      title: 'Code Mode: restart which session?',
      placeHolder: 'Its variables, imports and installs will be gone',
    })
  )?.targets;
}
