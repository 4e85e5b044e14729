// npm run bench — medians and ratios against a spawn-per-call baseline measured in the same run.
// Numbers are printed, never asserted: this machine is shared and noisy.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { resolvePythonInterpreter } from '../src/engine/python/interpreter';
import type { BackendKind } from '../src/engine/types';
import { connectStdio, repoRoot, runPython } from '../test/support/mcp';

const execFileAsync = promisify(execFile);
const quick = process.argv.includes('--quick');
const COLD_RUNS = quick ? 2 : 5;
const WARM_CALLS = quick ? 100 : 1000;
const PARALLEL_CALLS = quick ? 400 : 2000;
const CALLERS = 8;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function timed<T>(fn: () => Promise<T>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

interface Figures {
  coldFirstResultMs: number;
  warmP50Ms: number;
  warmP90Ms: number;
  callsPerSecond8Way: number;
}

async function measureServer(backend: BackendKind): Promise<Figures> {
  const cold: number[] = [];
  for (let i = 0; i < COLD_RUNS; i++) {
    cold.push(
      await timed(async () => {
        const conn = await connectStdio(['--backend', backend]);
        const { result } = await runPython(conn.client, { code: 'print(1+1)' });
        if (result.stdout !== '2\n') throw new Error(`unexpected output ${JSON.stringify(result)}`);
        await conn.close();
      }),
    );
  }

  const conn = await connectStdio(['--backend', backend]);
  try {
    for (let i = 0; i < 50; i++) await runPython(conn.client, { code: 'print(1+1)' });
    const warm: number[] = [];
    for (let i = 0; i < WARM_CALLS; i++) warm.push(await timed(() => runPython(conn.client, { code: 'print(1+1)' })));

    let next = 0;
    let ok = 0;
    const caller = async () => {
      while (next < PARALLEL_CALLS) {
        next++;
        const { result } = await runPython(conn.client, { code: 'print(1+1)' });
        if (result.success && result.stdout === '2\n') ok++;
      }
    };
    const parallelMs = await timed(() => Promise.all(Array.from({ length: CALLERS }, caller)));
    return {
      coldFirstResultMs: median(cold),
      warmP50Ms: median(warm),
      warmP90Ms: percentile(warm, 90),
      callsPerSecond8Way: (ok / parallelMs) * 1000,
    };
  } finally {
    await conn.close();
  }
}

async function measureSpawnPerCall(python: string): Promise<Figures> {
  const once = () => execFileAsync(python, ['-c', 'print(1+1)']);
  const samples: number[] = [];
  for (let i = 0; i < (quick ? 10 : 30); i++) samples.push(await timed(once));
  const total = quick ? 40 : 120;
  let next = 0;
  const caller = async () => {
    while (next < total) {
      next++;
      await once();
    }
  };
  const parallelMs = await timed(() => Promise.all(Array.from({ length: CALLERS }, caller)));
  return {
    coldFirstResultMs: median(samples),
    warmP50Ms: median(samples),
    warmP90Ms: percentile(samples, 90),
    callsPerSecond8Way: (total / parallelMs) * 1000,
  };
}

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(3));

async function main(): Promise<void> {
  const python = resolvePythonInterpreter();
  console.log(`bench: ${quick ? 'quick' : 'full'} run; node ${process.version}; python ${python}`);
  const baseline = await measureSpawnPerCall(python);
  const results: Record<string, Figures> = { 'spawn-per-call baseline': baseline };
  for (const backend of ['pyodide', 'python'] as BackendKind[]) results[backend] = await measureServer(backend);

  console.log('\n| figure | ' + Object.keys(results).join(' | ') + ' |');
  console.log('|---|' + Object.keys(results).map(() => '---').join('|') + '|');
  const rows: [string, keyof Figures, 'lower' | 'higher'][] = [
    ['server spawn → first result (ms, median)', 'coldFirstResultMs', 'lower'],
    ['warm run_python print(1+1) p50 (ms)', 'warmP50Ms', 'lower'],
    ['warm p90 (ms)', 'warmP90Ms', 'lower'],
    [`${CALLERS}-way throughput on one session (calls/s)`, 'callsPerSecond8Way', 'higher'],
  ];
  for (const [label, key, better] of rows) {
    const cells = Object.entries(results).map(([name, f]) => {
      if (name === 'spawn-per-call baseline') return fmt(f[key]);
      const ratio = better === 'lower' ? baseline[key] / f[key] : f[key] / baseline[key];
      return `${fmt(f[key])} (${ratio.toFixed(1)}× baseline)`;
    });
    console.log(`| ${label} | ${cells.join(' | ')} |`);
  }
  const outDir = path.join(repoRoot, 'bench', 'results');
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'latest.json'), JSON.stringify({ date: new Date().toISOString(), results }, null, 2));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
