// A person's run on the workspace interpreter failed with ModuleNotFoundError: the notification offers to install
// the package into that interpreter, or, when the operating system manages it (PEP 668) and pip would refuse, says
// so and offers a virtual environment through the Python extension.
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
import type * as commandsApis from './common/commands.apis';
import type * as workspaceApis from './common/workspace.apis';

/** The Python extension's command that makes a .venv or conda environment and selects it. */
export const CREATE_ENVIRONMENT_COMMAND = 'python.createEnvironment';

/** What the notification says and the one action it offers (a command with its arguments). */
export interface MissingModuleOffer {
  message: string;
  action: { title: string; command: string; args: unknown[] };
}

/** What of VS Code the offer looks at: the workspace folders (a module of their own) and the commands there are. */
export interface MissingModuleApis {
  workspace: Pick<typeof workspaceApis, 'workspaceFolders'>;
  commands: Pick<typeof commandsApis, 'getCommands'>;
}

/** The advice for an interpreter pip will not install into, and the action that helps. */
export async function virtualEnvironmentAction(
  commands: Pick<typeof commandsApis, 'getCommands'>,
): Promise<MissingModuleOffer['action']> {
  return (await commands.getCommands()).includes(CREATE_ENVIRONMENT_COMMAND)
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
  apis: MissingModuleApis,
): Promise<MissingModuleOffer | undefined> {
  const diagnostics = result.diagnostics;
  if (backend !== 'python' || diagnostics?.exception !== 'ModuleNotFoundError') return undefined;
  const module = missingTopLevelModule(diagnostics.message);
  if (!module) return undefined;
  const folders = [
    ...(script ? [path.dirname(script.path)] : []),
    ...apis.workspace.workspaceFolders().map((f) => f.uri.fsPath),
  ];
  if (findLocalModule(module, folders)) return undefined;
  const distribution = distributionForImport(module);
  const interpreter = python ?? 'python3 on PATH';
  if (python && (await isExternallyManaged(python))) {
    return {
      message: `Code Mode: No module named '${module}'. ${interpreter} is managed by the operating system (PEP 668), so pip will not install ${distribution} into it: create a virtual environment for this workspace and install it there.`,
      action: await virtualEnvironmentAction(apis.commands),
    };
  }
  return {
    message: `Code Mode: No module named '${module}'. Install ${distribution} into ${interpreter}?`,
    action: { title: `Install ${distribution}`, command: 'codeMode.installPackages', args: [[distribution], backend] },
  };
}
