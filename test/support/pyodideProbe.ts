// How hostile code in Pyodide reaches JavaScript: through `import js`, in the worker's own realm, or in a
// fresh realm (a nested Worker) where nothing the worker withholds is withheld. Promise callbacks run after
// a cell ends, so a probe parks its outcome in a JS global that the next cells read.
import type { RunResult } from '../../src/engine/types';

export type Run = (code: string) => Promise<RunResult>;

/**
 * Evaluates `jsExpression` (a promise) in the Pyodide worker's realm: "ok:<value>" or "refused:<error>", or
 * "reset:<reason>" when the session's interpreter was lost meanwhile (and the run that noticed said so).
 */
export async function settleInWorker(run: Run, jsExpression: string): Promise<string> {
  await run(
    `import js\njs.globalThis.probe = "pending"\n` +
      `js.eval(${JSON.stringify(`Promise.resolve().then(() => ${jsExpression})`)}).then(` +
      `lambda v: setattr(js.globalThis, "probe", "ok:" + str(v)), lambda e: setattr(js.globalThis, "probe", "refused:" + str(e)))`,
  );
  for (let i = 0; i < 100; i++) {
    const { stdout, diagnostics, session_reset, reset_reason } = await run('import js\nprint(js.globalThis.probe)');
    if (session_reset) return `reset:${reset_reason}`;
    if (diagnostics) return `failed:${diagnostics.error_type}: ${diagnostics.message}`;
    if (stdout.trim() !== 'pending') return stdout.trim();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return 'pending';
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
