import * as vscode from 'vscode';
import { scopeIn, settingsCommandFor } from './settingsCommand';

const EXTENSION_ID = 'code-mode.code-mode-python';

/** The Settings editor at `key`, in the tab where it can be set (a machine-scoped one in a remote window: Remote). */
export async function openSetting(key: string): Promise<void> {
  const manifest = vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON ?? {};
  await vscode.commands.executeCommand(settingsCommandFor(scopeIn(manifest, key), vscode.env.remoteName), key);
}
