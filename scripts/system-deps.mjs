#!/usr/bin/env node
// What the engine's own tests need from the operating system, installed idempotently:
//   - bubblewrap (Linux): the Pyodide sandbox, and the PID namespace of each workspace-Python session; the escape
//     suite must run, never skip, on Linux.
//   - util-linux's setpriv and unshare (Linux): the other way to that namespace, which the escape suite tries too.
//   - jupyter-server and python3-ipykernel (Debian): a real Jupyter Server and kernel for the jupyter backend's
//     tests, on Debian's own /usr/bin/python3 (which need not be the first python3 on PATH); python3-pip, which
//     the kernel's installs run (the tests give it a venv over the system packages).
//   - jupyterhub (Debian, with its configurable-http-proxy): a real JupyterHub for the jupyter backend's hub tests
//     (test/support/jupyterhub.ts), on loopback only, with a throw-away user.
// Usage: node scripts/system-deps.mjs
import { dpkgInstalled, installDebianPackages, MissingPackagesError, onPath } from './debian.mjs';

const say = (msg) => process.stdout.write(`[system-deps] ${msg}\n`);
const missing = [];
if (process.platform === 'linux' && !onPath('bwrap')) missing.push('bubblewrap');
if (process.platform === 'linux' && (!onPath('setpriv') || !onPath('unshare'))) missing.push('util-linux');
if (onPath('dpkg-query')) {
  for (const pkg of ['jupyter-server', 'python3-ipykernel', 'python3-pip', 'jupyterhub'])
    if (!dpkgInstalled(pkg)) missing.push(pkg);
}
try {
  installDebianPackages(
    missing,
    say,
    ' (bubblewrap is the Pyodide sandbox on Linux; jupyter-server, python3-ipykernel and jupyterhub serve the jupyter backend tests)',
  );
  say(missing.length ? `installed ${missing.join(', ')}` : 'up to date');
} catch (e) {
  process.stderr.write(`[system-deps] FAILED: ${e instanceof MissingPackagesError ? e.message : e?.stack || e}\n`);
  process.exit(1);
}
