// Thin wrappers over vscode.window (see workspace.apis.ts for why).
import * as vscode from 'vscode';

export function showInformationMessage(message: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showInformationMessage(message, ...items);
}

export function showWarningMessage(message: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(message, ...items);
}

export function showErrorMessage(message: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showErrorMessage(message, ...items);
}

/** An input box, closed (undefined) when `closeOn` aborts. */
export async function showInputBox(options: vscode.InputBoxOptions, closeOn: AbortSignal): Promise<string | undefined> {
  const cancel = new vscode.CancellationTokenSource();
  const onAbort = () => cancel.cancel();
  closeOn.addEventListener('abort', onAbort, { once: true });
  try {
    return await vscode.window.showInputBox(options, cancel.token);
  } finally {
    closeOn.removeEventListener('abort', onAbort);
    cancel.dispose();
  }
}
