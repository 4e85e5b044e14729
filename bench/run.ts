// npm run bench — medians and ratios against a spawn-per-call baseline measured in the same run.
// Numbers are printed, never asserted: this machine is shared and noisy.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
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
const BRIDGE_CALLS = quick ? 100 : 500;

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

const everythingServer = path.join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

/** One echo call to a real MCP server made directly with the SDK client: the floor the bridge adds to. */
async function measureDirectToolCall(): Promise<number> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [everythingServer, 'stdio'], stderr: 'ignore' }));
  try {
    for (let i = 0; i < 50; i++) await client.callTool({ name: 'echo', arguments: { message: 'x' } });
    const samples: number[] = [];
    for (let i = 0; i < BRIDGE_CALLS; i++) samples.push(await timed(() => client.callTool({ name: 'echo', arguments: { message: 'x' } })));
    return median(samples);
  } finally {
    await client.close();
  }
}

/** The same call from Python through `code_mode.tools`, timed inside Python around each call. */
async function measureBridgedToolCall(backend: BackendKind): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-bench-'));
  const servers = path.join(dir, 'servers.json');
  fs.writeFileSync(servers, JSON.stringify({ servers: { everything: { command: process.execPath, args: [everythingServer, 'stdio'] } } }));
  const conn = await connectStdio(['--backend', backend, '--servers', servers]);
  try {
    const code = [
      'from code_mode import tools',
      'import json, time',
      'for _ in range(50): tools.everything.echo(message="warm")',
      'samples = []',
      `for _ in range(${BRIDGE_CALLS}):`,
      '    start = time.perf_counter()',
      '    tools.everything.echo(message="x")',
      '    samples.append((time.perf_counter() - start) * 1000)',
      'samples.sort()',
      'print(json.dumps(samples))',
    ].join('\n');
    const { result } = await runPython(conn.client, { code, timeout_s: 300 });
    if (!result.success) throw new Error(`bridge bench failed: ${JSON.stringify(result.diagnostics)}`);
    return median(JSON.parse(result.stdout) as number[]);
  } finally {
    await conn.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
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
  const direct = await measureDirectToolCall();
  console.log(`\nBridge round trip: tools.everything.echo() from Python vs the same call with the SDK client (median of ${BRIDGE_CALLS})`);
  console.log('| backend | from Python (ms) | direct SDK call (ms) | bridge overhead (ms) |');
  console.log('|---|---|---|---|');
  const bridge: Record<string, number> = {};
  for (const backend of ['pyodide', 'python'] as BackendKind[]) {
    bridge[backend] = await measureBridgedToolCall(backend);
    console.log(`| ${backend} | ${fmt(bridge[backend])} | ${fmt(direct)} | ${fmt(bridge[backend] - direct)} |`);
  }
  const outDir = path.join(repoRoot, 'bench', 'results');
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'latest.json'), JSON.stringify({ date: new Date().toISOString(), results, bridge: { direct, ...bridge } }, null, 2));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
