// How hostile code in Pyodide reaches JavaScript: through `import js`, in the worker's own realm, or in a
// fresh realm (a nested Worker) where nothing the worker withholds is withheld. Promise callbacks run after
// a cell ends, so a probe parks its outcome in a JS global that the next cells read. Used by the escape suite
// (test/sandbox/, against an engine made as the CLI makes it) and by the real-VS-Code suite (test/vscode/,
// against the engine the extension builds), so it imports nothing but types.
import type { RunResult } from '../../src/engine/types';

export type Run = (code: string) => Promise<RunResult>;

/** Only a guard against a probe that never settles: a slow machine waits longer, it never fails sooner. */
const PROBE_DEADLINE_MS = 120_000;

/**
 * Evaluates `jsExpression` (a promise) in the Pyodide worker's realm: "ok:<value>" or "refused:<error>", or
 * "reset:<reason>" when the session's interpreter was lost meanwhile (and the run that noticed said so).
 * It waits for the promise however long it takes (up to a generous guard against one that never settles).
 */
export async function settleInWorker(run: Run, jsExpression: string): Promise<string> {
  const started = await run(
    `import js\njs.globalThis.probe = "pending"\n` +
      `_probe = js.eval(${JSON.stringify(`Promise.resolve().then(() => ${jsExpression})`)}).then(` +
      `lambda v: setattr(js.globalThis, "probe", "ok:" + str(v)), lambda e: setattr(js.globalThis, "probe", "refused:" + str(e)))`,
  );
  // What the expression does may end the process before the run that started it has returned (a reset during the
  // run is in its diagnostics; one announced from before the run is not this probe's).
  if (started.diagnostics?.session_reset) return `reset:${started.reset_reason}`;
  const deadline = Date.now() + PROBE_DEADLINE_MS;
  for (;;) {
    const { stdout, diagnostics, session_reset, reset_reason } = await run('import js\nprint(js.globalThis.probe)');
    if (session_reset) return `reset:${reset_reason}`;
    if (diagnostics) return `failed:${diagnostics.error_type}: ${diagnostics.message}`;
    if (stdout.trim() !== 'pending') return stdout.trim();
    if (Date.now() > deadline) return 'pending';
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A JS expression that runs `body` (an async function body) in a new Worker created from Python's realm, and
 * resolves to "ok:<returned>" or "err:<message>".
 */
export function inNestedWorker(body: string): string {
  const source = `const { parentPort } = require('node:worker_threads');
(async () => { ${body} })().then((v) => parentPort.postMessage('ok:' + v), (e) => parentPort.postMessage('err:' + (e && e.message)));`;
  return `import('node:worker_threads').then((wt) => new Promise((resolve, reject) => {
  const worker = new wt.Worker(${JSON.stringify(source)}, { eval: true });
  worker.once('message', (m) => { resolve(m); void worker.terminate(); });
  worker.once('error', reject);
}))`;
}

/**
 * Nested-worker statements that write `bytes` (a JS expression) to the host's channel to the server (fd 4): as a
 * file descriptor, or, where descriptors are not files to JavaScript (Deno), as a socket on it.
 */
export function writeToChannel(bytes: string): string {
  return `const bytes = ${bytes}; try { require('node:fs').writeSync(4, bytes); } catch { await new Promise((resolve, reject) => { const s = new (require('node:net').Socket)({ fd: 4, readable: false, writable: true }); s.on('error', reject); s.write(bytes, resolve); }); }`;
}

/** A nested-worker body that connects to `port` on loopback, or to the Unix socket at `socketPath`. */
export function connectBody(target: { port: number; host?: string } | { socketPath: string }): string {
  const args =
    'socketPath' in target
      ? JSON.stringify(target.socketPath)
      : `${target.port}, ${JSON.stringify(target.host ?? '127.0.0.1')}`;
  return `return await new Promise((resolve, reject) => { const s = require('node:net').connect(${args}); s.on('connect', () => { s.destroy(); resolve('connected'); }); s.on('error', reject); })`;
}

/**
 * Node built-ins that start processes, load native code or open files, each as a nested-worker body: every one
 * must end in "ok:err:" (refused) inside the sandbox.
 */
export const SPAWN_LOAD_OPEN_ATTEMPTS: Record<string, string> = {
  'child_process.execSync': `return require('node:child_process').execSync('id').toString()`,
  'child_process.spawnSync': `return String(require('node:child_process').spawnSync('id').stdout)`,
  'child_process.fork': `require('node:child_process').fork('/bin/true'); return 'forked'`,
  'child_process.execFile': `return await new Promise((res, rej) => require('node:child_process').execFile('id', (e, out) => (e ? rej(e) : res(out))))`,
  'cluster.fork': `require('node:cluster').fork(); return 'forked'`,
  'process.binding(spawn_sync)': `const { spawn } = process.binding('spawn_sync'); if (typeof spawn !== 'function') throw new Error('no spawn_sync binding'); return typeof spawn`,
  'process.dlopen': `process.dlopen({ exports: {} }, '/usr/lib/x86_64-linux-gnu/libc.so.6'); return 'loaded'`,
  'inspector.open': `require('node:inspector').open(0); return require('node:inspector').url()`,
  'a worker asking for --allow-child-process': `return await new Promise((resolve, reject) => { const w = new (require('node:worker_threads').Worker)("require('node:worker_threads').parentPort.postMessage(String(require('node:child_process').execSync('id')))", { eval: true, execArgv: ['--allow-child-process'] }); w.on('message', resolve); w.on('error', reject); })`,
  'module.createRequire outside': `return require('node:module').createRequire('/etc/')('./passwd')`,
  'fs.openSync outside': `return require('node:fs').openSync('/proc/1/environ', 'r')`,
  'wasi on the host file system': `const { WASI } = require('node:wasi'); new WASI({ version: 'preview1', preopens: { '/': '/' } }); return 'preopened /'`,
};
