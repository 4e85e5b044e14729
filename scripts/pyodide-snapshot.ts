// Makes the Pyodide memory snapshots the build ships in dist/pyodide-snapshot/ (esbuild.mjs runs it after the
// bundles, bundled to out/build/). Each is made by a first start of the real backend on an empty cache, with the
// built host and worker in dist/, so it is what a first start would make; an empty cache then starts from a copy
// (snapshotCache.ts). One for Node, and one for Deno when its binary is here (the sandbox where bubblewrap cannot
// run). A snapshot already there for this worker bundle and this Pyodide build is kept, so a build that changed
// neither costs nothing here; snapshots of other builds are removed, so a package carries only its own.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPyodideBackend } from '../src/engine/backends/pyodide/backend';
import { SHIPPED_SNAPSHOT_DIR, snapshotFileName } from '../src/engine/backends/pyodide/snapshotCache';
import { assetsDir } from '../src/engine/paths';
import { sandboxReport, type SandboxChoice } from '../src/engine/sandbox/index';
import type { Logger } from '../src/engine/types';

/** The sandbox choice that starts the host under each runtime: 'bubblewrap' runs Node (under Node's permission model alone where bubblewrap cannot run). */
const RUNTIMES: { choice: SandboxChoice; runtime?: 'deno' }[] = [
  { choice: 'bubblewrap' },
  { choice: 'deno', runtime: 'deno' },
];

const dist = assetsDir();
const shippedDir = path.join(dist, SHIPPED_SNAPSHOT_DIR);

function say(message: string): void {
  process.stdout.write(`[pyodide-snapshot] ${message}\n`);
}

/** A first start on an empty cache under `choice`; returns the folder holding the snapshot it made. */
async function firstStart(choice: SandboxChoice, name: string): Promise<string> {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-build-snapshot-'));
  const lines: string[] = [];
  const log: Logger = { info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) };
  const session = createPyodideBackend({ cacheDir, sandbox: choice, shippedSnapshotDir: false, log }).create({
    session: 'build',
    log,
    hostCall: async () => {
      throw new Error('no host calls while building');
    },
  });
  try {
    await session.start();
  } finally {
    await session.dispose();
  }
  if (!lines.some((line) => line.includes('cold (snapshot created)')) || !fs.existsSync(path.join(cacheDir, name))) {
    throw new Error(`the first start under ${choice} made no snapshot ${name}:\n${lines.join('\n')}`);
  }
  return cacheDir;
}

/** Makes the shipped snapshot `name` for `choice`'s runtime, unless it is there already. */
async function ship(choice: SandboxChoice, runtime: 'deno' | undefined, name: string): Promise<void> {
  const target = path.join(shippedDir, name);
  if (fs.existsSync(target) && fs.existsSync(`${target}.sha256`)) return;
  const mechanism = sandboxReport('off', choice).mechanism;
  if (runtime === 'deno' && mechanism !== 'deno') {
    say(`Deno is not here: no Deno snapshot is shipped (its users' first start makes one)`);
    return;
  }
  const started = performance.now();
  fs.rmSync(`${target}.sha256`, { force: true });
  let cacheDir: string;
  try {
    cacheDir = await firstStart(choice, name);
  } catch (error) {
    // Node's failing means the built host cannot start Pyodide: the build fails. Deno is the other sandbox, and a
    // Deno that cannot run here should not stop a build: its users' first start makes the snapshot instead.
    if (runtime !== 'deno') throw error;
    say(`no Deno snapshot is shipped: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  try {
    // The hash goes last: a snapshot counts as there (above, and for the backend) only with its hash beside it.
    fs.copyFileSync(path.join(cacheDir, name), target);
    fs.copyFileSync(path.join(cacheDir, `${name}.sha256`), `${target}.sha256`);
  } finally {
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
  say(
    `made ${path.relative(process.cwd(), target)} (${mechanism}, ${(fs.statSync(target).size / 1024 / 1024).toFixed(1)} MiB) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

async function main(): Promise<void> {
  fs.mkdirSync(shippedDir, { recursive: true });
  const worker = path.join(dist, 'pyodide-worker.cjs');
  const pyodideDir = path.join(dist, 'pyodide');
  const names = RUNTIMES.map(({ runtime }) => snapshotFileName(pyodideDir, worker, runtime));
  // One after the other: side by side took no less time on two busy cores.
  for (const [i, { choice, runtime }] of RUNTIMES.entries()) await ship(choice, runtime, names[i]);
  const wanted = new Set(names.flatMap((name) => [name, `${name}.sha256`]));
  for (const name of fs.readdirSync(shippedDir))
    if (!wanted.has(name)) fs.rmSync(path.join(shippedDir, name), { force: true });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[pyodide-snapshot] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
