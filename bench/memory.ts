// npm run bench -- --memory [--memory-runs N] [--root <checkout>]
//
// A long session's memory: N runs (default 200) of 20 displays of 5 MiB each (the most the documented limits
// allow: 100 MiB a run) through the engine, with a RunHistory fed by its run events as the CLI and the extension
// have one. The workspace-Python backend is used: it moves displays fastest (Pyodide's Python-to-JavaScript
// string conversion is far slower), and what the server keeps of them does not depend on the backend.
// RSS, heap and the history's retained bytes are printed before the first run, after the first 10 and at the end,
// each after a full collection. Heavy (N × 100 MiB through a pipe), hence its own flag. Never asserted: the last
// line says whether memory stayed flat (RSS at the end within 32 MiB of RSS after 10 runs).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type EngineModule = typeof import('../src/engine/index');
type HistoryModule = typeof import('../src/engine/history');

const DISPLAYS_PER_RUN = 20;
/** PNG bytes whose base64 is exactly 5 MiB. */
const CODE = `png = b"\\x89PNG\\r\\n\\x1a\\n" + bytes(3932152)\nfor i in range(${DISPLAYS_PER_RUN}):\n    display(png)`;
const FLAT_MARGIN_BYTES = 32 * 1024 * 1024;
const SAMPLE_EVERY = Number(process.env.CODE_MODE_BENCH_SAMPLE_EVERY ?? 50);
const MIB = 1024 * 1024;

interface Sample {
  label: string;
  rss: number;
  heapUsed: number;
  external: number;
  retained: number | undefined;
}

/** A full collection, also when node was started without --expose-gc. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

export async function measureMemory(root: string, runs: number): Promise<void> {
  const load = (file: string): Promise<unknown> => import(pathToFileURL(path.join(root, 'src', 'engine', file)).href);
  const { createEngine } = (await load('index.ts')) as EngineModule;
  const { RunHistory } = (await load('history.ts')) as HistoryModule;
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-bench-memory-'));
  const workspace = path.join(storage, 'workspace');
  fs.mkdirSync(workspace);
  const gc = collector();
  const engine = createEngine({ storageDir: storage, workspaceRoots: [workspace] });
  const history = new RunHistory();
  engine.onRunEvent((event) => history.handle(event));
  const samples: Sample[] = [];
  const sample = async (label: string): Promise<void> => {
    // Past the turn that still holds the last result; twice, with a pause, so freed pages go back to the system.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    await new Promise((resolve) => setTimeout(resolve, 200));
    gc();
    const usage = process.memoryUsage();
    const retained = (history as { retainedBytes?: number }).retainedBytes;
    samples.push({ label, rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external, retained });
  };
  const mb = (bytes: number | undefined) => (bytes === undefined ? 'n/a' : (bytes / MIB).toFixed(1));
  console.log(
    `memory bench: ${runs} runs of ${DISPLAYS_PER_RUN} × 5 MiB displays on the python backend; ${root}; node ${process.version}; ${os.cpus().length} CPUs; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  try {
    const warm = await engine.run({ code: 'print(1)', backend: 'python', timeoutS: 0 });
    if (!warm.success) throw new Error(`the python backend does not run: ${JSON.stringify(warm.diagnostics)}`);
    await sample('before (interpreter started)');
    const started = performance.now();
    let displays = 0;
    // In a function of its own, so no variable here still holds the last result when memory is sampled.
    const once = async (i: number): Promise<number> => {
      const result = await engine.run({ code: CODE, backend: 'python', timeoutS: 0 });
      if (!result.success) throw new Error(`run ${i} failed: ${JSON.stringify(result.diagnostics)}`);
      return result.displays?.length ?? 0;
    };
    for (let i = 1; i <= runs; i++) {
      displays += await once(i);
      if (i === 10 || i === runs || i % SAMPLE_EVERY === 0) await sample(`after ${i} runs`);
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(`| when | RSS (MiB) | heap used (MiB) | external (MiB) | history retained (MiB) |`);
    console.log(`|---|---|---|---|---|`);
    for (const s of samples)
      console.log(`| ${s.label} | ${mb(s.rss)} | ${mb(s.heapUsed)} | ${mb(s.external)} | ${mb(s.retained)} |`);
    const afterTen = samples.find((s) => s.label === 'after 10 runs') ?? samples[samples.length - 1];
    const last = samples[samples.length - 1];
    const history100 = history.all().filter((r) => r.displays.length > 0).length;
    console.log(
      `\n${runs} runs, ${displays} displays (${((displays * 5) / 1024).toFixed(1)} GiB) in ${seconds.toFixed(0)} s; the history lists ${history.all().length} runs, ${history100} of them with displays still kept`,
    );
    const flat = last.rss <= afterTen.rss + FLAT_MARGIN_BYTES;
    console.log(
      `flat: ${flat ? 'yes' : 'NO'} (RSS at the end ${mb(last.rss)} MiB, after 10 runs ${mb(afterTen.rss)} MiB, margin ${mb(FLAT_MARGIN_BYTES)} MiB)`,
    );
  } finally {
    await engine.dispose();
    fs.rmSync(storage, { recursive: true, force: true });
  }
}

export interface TreeMemory {
  /** Resident memory of the process and all its descendants. */
  rssBytes: number;
  /** Their proportional share (shared pages split between the processes that map them): what they add. */
  pssBytes: number;
  processes: number;
}

/** RSS and PSS of `pid` and its descendants (Linux /proc); undefined elsewhere or once it is gone. */
export function processTreeMemory(pid: number): TreeMemory | undefined {
  try {
    const children = new Map<number, number[]>();
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        // ppid is the second field after the ")" that ends the command name.
        const ppid = Number(fs.readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
        children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
      } catch {
        // ended meanwhile
      }
    }
    const tree = [pid];
    for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]) ?? []));
    let rssBytes = 0;
    let pssBytes = 0;
    for (const member of tree) {
      const rollup = fs.readFileSync(`/proc/${member}/smaps_rollup`, 'utf8');
      rssBytes += Number(/^Rss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
      pssBytes += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
    }
    return { rssBytes, pssBytes, processes: tree.length };
  } catch {
    return undefined;
  }
}
