// Debian packages the tests need, installed with apt-get when this runs as root (as CI does), else a
// message saying what to run. Shared by the VS Code host setup and the system test dependencies.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export class MissingPackagesError extends Error {}

export function onPath(cmd) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && fs.existsSync(path.join(dir, cmd))) return true;
  }
  return false;
}

export function dpkgInstalled(pkg) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && /install ok installed/.test(r.stdout);
}

/** Installs `missing` (Debian package names) with apt-get; `say` logs each step. Throws MissingPackagesError when it cannot. */
export function installDebianPackages(missing, say, hint = '') {
  if (!missing.length) return;
  const cmdLine = `apt-get update && apt-get install -y ${missing.join(' ')}`;
  if (!onPath('apt-get')) {
    throw new MissingPackagesError(
      `missing system packages (${missing.join(', ')}) and no apt-get here; install them${hint}`,
    );
  }
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new MissingPackagesError(
      `missing Debian packages: ${missing.join(' ')}. Not running as root, so not installing them.\n` +
        `  Run as root:  sudo sh -c '${cmdLine}'\n  then run this again.`,
    );
  }
  say(`installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', ...missing]]) {
    say(`$ apt-get ${args.join(' ')}`);
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (r.error) throw new MissingPackagesError(`apt-get could not start: ${r.error.message}`);
    if (r.status !== 0) throw new MissingPackagesError(`apt-get ${args.join(' ')} exited with ${r.status ?? r.signal}`);
  }
}
