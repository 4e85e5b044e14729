// What an agent may set through the environment tool is saved, read back by every later server on the same storage
// and, in VS Code, written to the person's settings. A setting that names an executable is therefore a way to turn
// something an agent wrote into something the host runs: an agent confined to Pyodide points python_path at a
// script it left in its scratch folder (or in the workspace, when it may write there), and the next server, or the
// person's next Run File, runs it on the host. So an agent may set python_path only where it can already run the
// workspace interpreter, and never to a file in a folder code can write. The person's own settings (--python,
// codeMode.pythonPath typed in the Settings editor) are theirs and are not checked here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Engine } from './engine';
import { isInside } from './sandbox/fileView';
import type { SettingValue } from './userSettings';

/** Why an agent may not make `change` here, or undefined when it may. */
export function agentSettingRefusal(engine: Engine, change: SettingValue): string | undefined {
  if (change.key !== 'python_path' || change.value === '') return undefined;
  const disabled = engine.disabledReason('python');
  if (disabled)
    return `python_path cannot be set by an agent while the python backend is off (${disabled}): an interpreter is chosen by the person running the server`;
  const target = realPath(change.value as string);
  const folder = engine.codeWritableFolders.find((dir) => isInside(target, realPath(dir)));
  if (folder)
    return `python_path cannot be set by an agent to a file inside ${folder}, which code run here can write: choose an interpreter outside it, or set it yourself (--python, codeMode.pythonPath)`;
  return undefined;
}

/** Where a link leads, as the host would reach it when it runs the file; the path as given when it does not exist. */
function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}
