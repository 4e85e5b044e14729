// The least a Pyodide run could cost, for `npm run bench`: the floor's server (floorServer.ts) whose tool has
// Pyodide, on a worker thread of the server's own process, compile and run the code with its standard output
// captured. No sandbox, no process of its own, no harness around CPython's work: what is left of a sandboxed run
// once everything of ours is taken away but the thread that keeps the server free while Python runs.
//   node --import tsx bench/pyodideFloorServer.ts
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { serveFloor } from './floorServer';

const worker = new Worker(path.join(__dirname, 'pyodideFloorWorker.cjs'), {
  workerData: { indexURL: path.join(__dirname, '..', 'dist', 'pyodide') + '/' },
});
const loaded = new Promise<void>((resolve, reject) => {
  worker.once('message', () => resolve());
  worker.once('error', reject);
});
let answered: ((printed: string) => void) | undefined;
void loaded.then(() =>
  worker.on('message', (printed: string) => {
    const answer = answered;
    answered = undefined;
    answer?.(printed);
  }),
);

serveFloor('code-mode-bench-pyodide-floor', async (code) => {
  await loaded;
  const printed = await new Promise<string>((resolve) => {
    answered = resolve;
    worker.postMessage(code);
  });
  // It must have run the code: a wrong answer fails the call, and the bench with it.
  if (printed !== '2\n') throw new Error(`the code printed ${JSON.stringify(printed)}`);
})
  .then(() => worker.unref())
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
