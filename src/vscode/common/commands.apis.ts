// Thin wrappers over vscode.commands (see workspace.apis.ts for why).
import * as vscode from 'vscode';

export function executeCommand(command: string, ...args: unknown[]): Thenable<unknown> {
  return vscode.commands.executeCommand(command, ...args);
}

/** Every command, internal ones left out. */
export function getCommands(): Thenable<string[]> {
  return vscode.commands.getCommands(true);
}
