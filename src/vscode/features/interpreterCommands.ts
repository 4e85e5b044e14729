import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { describeDefaultInterpreter, findInterpreters, type FoundInterpreter } from '../../engine/index';

/** The Python extension's own picker: where it is installed, it chooses the workspace interpreter. */
const PYTHON_EXTENSION_ID = 'ms-python.python';
const PYTHON_EXTENSION_PICKER = 'python.setInterpreter';
const SETTING = 'pythonPath';

export interface InterpreterCommandDeps {
  /** The interpreter in use now (the setting's, or undefined for the default). */
  current: () => string | undefined;
}

type Pick = vscode.QuickPickItem & { choose: () => Promise<string | undefined | null> };

/**
 * **Select Interpreter…**: the workspace-Python backend's interpreter, chosen from what is on this machine (PATH,
 * pyenv, the workspace's venvs, conda), each shown with its full path and version, or entered as a path; it is
 * kept in codeMode.pythonPath. With the Python extension installed its own picker opens instead: it stays the
 * source. A caller may pass the path to use.
 */
export function registerInterpreterCommands({ current }: InterpreterCommandDeps): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('codeMode.selectInterpreter', async (given?: string): Promise<boolean> => {
      if (typeof given !== 'string' && vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) {
        await vscode.commands.executeCommand(PYTHON_EXTENSION_PICKER);
        return true;
      }
      const chosen = typeof given === 'string' ? given : await pickInterpreter(current());
      if (chosen === null) return false;
      await vscode.workspace
        .getConfiguration('codeMode')
        .update(
          SETTING,
          chosen ?? undefined,
          vscode.workspace.workspaceFolders ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global,
        );
      return true;
    }),
  ];
}

/** The path chosen, undefined for the default, null when the person chose nothing. */
async function pickInterpreter(inUse: string | undefined): Promise<string | undefined | null> {
  const picker = vscode.window.createQuickPick<Pick>();
  picker.title = 'Code Mode: interpreter of the workspace-Python backend';
  picker.placeholder = 'Looking for Python interpreters (PATH, pyenv, the workspace, conda)…';
  picker.busy = true;
  picker.matchOnDescription = true;
  picker.matchOnDetail = true;
  picker.show();
  const roots = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
  const [found, fallback] = await Promise.all([
    findInterpreters({ workspaceRoots: roots }),
    describeDefaultInterpreter(),
  ]);
  picker.items = items(found, fallback, inUse);
  picker.busy = false;
  picker.placeholder = "Choose the interpreter your runs and the agents' python backend use";
  return new Promise((resolve) => {
    let settled = false;
    const settle = (value: string | undefined | null) => {
      if (settled) return;
      settled = true;
      resolve(value);
      picker.dispose();
    };
    picker.onDidAccept(() => {
      const item = picker.selectedItems[0];
      if (!item) return;
      picker.hide();
      void item.choose().then(settle);
    });
    picker.onDidHide(() => setTimeout(() => settle(null), 0));
  });
}

function items(
  found: FoundInterpreter[],
  fallback: { path: string; executable: string; version: string } | undefined,
  inUse: string | undefined,
): Pick[] {
  const mark = (active: boolean) => (active ? '$(check) ' : '');
  const list: Pick[] = found.map((interpreter) => ({
    label: `${mark(interpreter.path === inUse)}Python ${interpreter.version}`,
    description: interpreter.where,
    detail:
      interpreter.executable === interpreter.path
        ? interpreter.path
        : `${interpreter.path} → ${interpreter.executable}`,
    choose: async () => interpreter.path,
  }));
  list.push(
    {
      label: '',
      kind: vscode.QuickPickItemKind.Separator,
      choose: async () => null,
    },
    {
      label: '$(folder-opened) Enter interpreter path…',
      choose: async () => {
        const picked = await vscode.window.showOpenDialog({
          title: 'Code Mode: Python interpreter',
          canSelectFiles: true,
          canSelectFolders: false,
          canSelectMany: false,
        });
        const file = picked?.[0]?.fsPath;
        return file && fs.existsSync(file) ? file : null;
      },
    },
    {
      label: `${mark(inUse === undefined)}$(search) Use the default`,
      description: fallback ? `Python ${fallback.version}` : 'no python3 on PATH',
      detail: fallback
        ? `$CODE_MODE_PYTHON, else python3 on PATH: now ${fallback.path}${fallback.executable === fallback.path ? '' : ` → ${fallback.executable}`}`
        : '$CODE_MODE_PYTHON, else python3 on PATH',
      choose: async () => undefined,
    },
  );
  return list;
}
