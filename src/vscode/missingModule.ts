// A person's run on the workspace interpreter failed with ModuleNotFoundError: the notification offers to install
// the package into that interpreter, or, when the operating system manages it (PEP 668) and pip would refuse, says
// so and offers a virtual environment through the Python extension.
import * as vscode from 'vscode';
import {
  isExternallyManaged,
  distributionForImport,
  missingTopLevelModule,
  findLocalModule,
  type BackendKind,
  type RunResult,
  type ScriptRun,
} from '../engine/index';
import * as path from 'node:path';

/** The Python extension's command that makes a .venv or conda environment and selects it. */
export const CREATE_ENVIRONMENT_COMMAND = 'python.createEnvironment';

/** What the notification says and the one action it offers (a command with its arguments). */
export interface MissingModuleOffer {
  message: string;
  action: { title: string; command: string; args: unknown[] };
}

/** The advice for an interpreter pip will not install into, and the action that helps. */
export async function virtualEnvironmentAction(): Promise<MissingModuleOffer['action']> {
  return (await vscode.commands.getCommands(true)).includes(CREATE_ENVIRONMENT_COMMAND)
    ? { title: 'Create Environment', command: CREATE_ENVIRONMENT_COMMAND, args: [] }
    : // Without the Python extension: a venv made in a terminal, then chosen from what is found.
      { title: 'Select Interpreter', command: 'codeMode.selectInterpreter', args: [] };
}

/**
 * The offer for a failed run, or undefined when there is none to make: not a missing top-level module, not a
 * backend that installs with pip, or a module that is the person's own file (a path problem, not a package).
 */
export async function missingModuleOffer(
  result: RunResult,
  backend: BackendKind,
  python: string | undefined,
  script: ScriptRun | undefined,
): Promise<MissingModuleOffer | undefined> {
  const diagnostics = result.diagnostics;
  if (backend !== 'python' || diagnostics?.exception !== 'ModuleNotFoundError') return undefined;
  const module = missingTopLevelModule(diagnostics.message);
  if (!module) return undefined;
  const folders = [
    ...(script ? [path.dirname(script.path)] : []),
    ...(vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
  ];
  if (findLocalModule(module, folders)) return undefined;
  const distribution = distributionForImport(module);
  const interpreter = python ?? 'python3 on PATH';
  if (python && (await isExternallyManaged(python))) {
    return {
      message: `Code Mode: No module named '${module}'. ${interpreter} is managed by the operating system (PEP 668), so pip will not install ${distribution} into it: create a virtual environment for this workspace and install it there.`,
      action: await virtualEnvironmentAction(),
    };
  }
  return {
    message: `Code Mode: No module named '${module}'. Install ${distribution} into ${interpreter}?`,
    action: { title: `Install ${distribution}`, command: 'codeMode.installPackages', args: [[distribution], backend] },
  };
}

/** Shows the offer (when there is one) after a person's run. */
export async function offerMissingModule(
  result: RunResult,
  backend: BackendKind,
  python: string | undefined,
  script: ScriptRun | undefined,
): Promise<void> {
  const offer = await missingModuleOffer(result, backend, python, script);
  if (!offer) return;
  const choice = await vscode.window.showErrorMessage(offer.message, offer.action.title);
  if (choice) await vscode.commands.executeCommand(offer.action.command, ...offer.action.args);
}
