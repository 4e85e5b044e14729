// Thin wrapper over the Python extension's API (@vscode/python-extension), an optional extension: see
// workspace.apis.ts for why the edge reaches it through wrappers.
import { PythonExtension } from '@vscode/python-extension';
import * as vscode from 'vscode';

const PYTHON_EXTENSION_ID = 'ms-python.python';

export type PythonEnvironments = PythonExtension['environments'];

export function isPythonExtensionInstalled(): boolean {
  return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

/** The Python extension's environments API (activates that extension). */
export async function pythonEnvironments(): Promise<PythonEnvironments> {
  return (await PythonExtension.api()).environments;
}
