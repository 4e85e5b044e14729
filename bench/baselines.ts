// What our runs are measured against: spawn-per-call (`python3 -c` per call), the MCP floor servers
// (floorServer.ts, hopFloorServer.ts, pyodideFloorServer.ts) reached with the same SDK client as ours, and a local
// kernel driven directly with jupyter_client (directKernel.py).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { execFile, spawn } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { FLOOR_TOOL } from './floorServer';
import { benchDir, CALLERS, CODE, JUPYTER_PYTHON, quick, thisRoot } from './options';
import { median, percentile, timed, type Series } from './statistics';
import { connect, type Connection } from './targets';

const execFileAsync = promisify(execFile);

export interface SpawnBaseline {
  p50Ms: number;
  p90Ms: number;
  callsPerSecond8Way: number;
}

export async function measureSpawnPerCall(python: string): Promise<SpawnBaseline> {
  const once = () => execFileAsync(python, ['-c', CODE]);
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
  return { p50Ms: median(samples), p90Ms: percentile(samples, 90), callsPerSecond8Way: (total / parallelMs) * 1000 };
}

// From this checkout's folder, where `--import tsx` resolves.
export const connectFloor = () =>
  connect(process.execPath, ['--import', 'tsx', path.join(benchDir, 'floorServer.ts')], thisRoot);
export const connectHopFloor = (python: string, mode: 'echo' | 'exec') =>
  connect(process.execPath, ['--import', 'tsx', path.join(benchDir, 'hopFloorServer.ts'), python, mode], thisRoot);
export const connectPyodideFloor = () =>
  connect(process.execPath, ['--import', 'tsx', path.join(benchDir, 'pyodideFloorServer.ts')], thisRoot);

export async function floorCallSucceeds(conn: Connection): Promise<boolean> {
  const raw = (await conn.client.callTool({ name: FLOOR_TOOL, arguments: { code: CODE } })) as CallToolResult;
  return !raw.isError;
}

/** Calls of a floor server's tool on `conn`; `owned`: closing the series closes the connection. */
export function floorSeries(name: string, conn: Connection, owned: boolean): Series {
  return {
    name,
    call: async () => {
      if (!(await floorCallSucceeds(conn))) throw new Error(`the tool of the ${name} failed`);
    },
    samples: [],
    close: owned ? () => conn.close() : async () => undefined,
  };
}

/** bench/directKernel.py on the jupyter backend's interpreter: one execution per line, answered when the kernel is idle. */
export async function startDirectKernel(): Promise<Series> {
  const child = spawn(JUPYTER_PYTHON, [path.join(benchDir, 'directKernel.py')], { stdio: ['pipe', 'pipe', 'ignore'] });
  const lines: string[] = [];
  let waiting: ((line: string) => void) | undefined;
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    buffered += text;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      if (waiting) {
        const deliver = waiting;
        waiting = undefined;
        deliver(line);
      } else lines.push(line);
    }
  });
  const nextLine = () =>
    new Promise<string>((resolve) => (lines.length ? resolve(lines.shift()!) : (waiting = resolve)));
  if ((await nextLine()) !== 'ready') throw new Error('the direct kernel did not start');
  return {
    name: 'jupyter direct kernel',
    call: async () => {
      child.stdin.write(`${JSON.stringify(CODE)}\n`);
      const printed = JSON.parse(await nextLine()) as string;
      if (printed !== '2\n') throw new Error(`unexpected output from the direct kernel: ${JSON.stringify(printed)}`);
    },
    samples: [],
    close: async () => {
      child.stdin.end();
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
