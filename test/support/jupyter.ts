// The real Jupyter Server the jupyter backend's tests use: Debian's jupyter-server and python3-ipykernel on
// /usr/bin/python3 (installed by scripts/system-deps.mjs), which need not be the first python3 on PATH.
import * as fs from 'node:fs';
import type { JupyterSettings } from '../../src/engine/index';

/** The interpreter with jupyter_server and ipykernel. */
export const jupyterPython = process.env.CODE_MODE_TEST_JUPYTER_PYTHON ?? '/usr/bin/python3';

if (!fs.existsSync(jupyterPython))
  throw new Error(
    `${jupyterPython} is missing: run "npm run test:system" (installs jupyter-server and python3-ipykernel)`,
  );

/** A local server started on first use from `jupyterPython`, as the CLI's `--jupyter-url local` does. */
export const localJupyter: JupyterSettings = { url: 'local', python: jupyterPython };

/** What the CLI needs to offer the jupyter backend on this machine: a local server from `jupyterPython`. */
export function jupyterCliArgs(backend: string): string[] {
  return backend === 'jupyter' ? ['--jupyter-url', 'local', '--python', jupyterPython] : [];
}
