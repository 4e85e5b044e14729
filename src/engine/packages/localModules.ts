// A ModuleNotFoundError for a module that exists as the user's own file is a path problem, not a missing
// package: installing a PyPI package of the same name would be wrong, and possibly hostile (typosquatting
// on a local module's name). So auto-install first looks for it where the user keeps code.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Folders never searched: environments, dependencies and VCS data hold other people's modules. */
const SKIPPED = new Set([
  'node_modules',
  '.git',
  '.hg',
  '.venv',
  'venv',
  'env',
  '__pycache__',
  'site-packages',
  'dist',
  'build',
]);

/**
 * Where `module` exists as `module.py` or a `module/` package: in `folders` themselves and the folders
 * below them, `depth` levels down. The first found, or undefined.
 */
export function findLocalModule(module: string, folders: string[], depth = 2): string | undefined {
  for (const folder of folders) {
    const found = search(module, folder, depth);
    if (found) return found;
  }
  return undefined;
}

function search(module: string, folder: string, depth: number): string | undefined {
  for (const candidate of [path.join(folder, `${module}.py`), path.join(folder, module)]) {
    const stat = fs.statSync(candidate, { throwIfNoEntry: false });
    if (stat?.isFile() || (stat?.isDirectory() && fs.existsSync(path.join(candidate, '__init__.py')))) return candidate;
  }
  if (depth === 0) return undefined;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(folder, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith('.') || SKIPPED.has(entry.name)) continue;
    const found = search(module, path.join(folder, entry.name), depth - 1);
    if (found) return found;
  }
  return undefined;
}
