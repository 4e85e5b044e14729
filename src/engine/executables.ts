// Finding programs without a shell: PATH is searched here, so no shell ever sees a path or a command line.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The first executable file named `command` in a PATH directory, trying PATHEXT's extensions on Windows. */
export function findOnPath(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const searchPath = env.PATH ?? env.Path ?? '';
  const extensions = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';') : [''];
  for (const dir of searchPath.split(path.delimiter)) {
    // An empty entry would mean the working directory; a program is never taken from there implicitly.
    if (!dir) continue;
    for (const extension of extensions) {
      const candidate = path.join(dir, command + extension);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/** A system tool (bwrap, unshare, prlimit): on PATH, else in the usual system folders, which a GUI-started editor's PATH may lack. */
export function findSystemCommand(command: string): string | undefined {
  const found = findOnPath(command);
  if (found) return found;
  return ['/usr/bin', '/bin', '/usr/sbin', '/sbin'].map((dir) => path.join(dir, command)).find(isExecutableFile);
}

/** An existing regular file this process may execute. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
