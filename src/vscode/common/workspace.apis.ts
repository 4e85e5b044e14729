// Thin wrappers over vscode.workspace, as vscode-python-environments' src/common/*.apis.ts: the edge's logic takes
// these as parameters (importing their types only), so its unit tests hand it stand-ins; the `vscode` module
// exists only inside VS Code.
import * as vscode from 'vscode';

export function getConfiguration(section: string): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(section);
}

export function onDidChangeConfiguration(
  listener: (event: vscode.ConfigurationChangeEvent) => void,
): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration(listener);
}

/** Writes `section.key` in the user's settings. */
export async function updateUserSetting(section: string, key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration(section).update(key, value, vscode.ConfigurationTarget.Global);
}

export function isTrusted(): boolean {
  return vscode.workspace.isTrusted;
}

export function workspaceFolders(): readonly vscode.WorkspaceFolder[] {
  return vscode.workspace.workspaceFolders ?? [];
}

export function getWorkspaceFolder(uri: vscode.Uri): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.getWorkspaceFolder(uri);
}
