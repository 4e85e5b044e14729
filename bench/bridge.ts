// The code-mode bridge: one echo call to a real MCP server (server-everything) from Python through
// `code_mode.tools`, against the same call made directly with the SDK client.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BackendKind } from '../src/engine/types';
import { BRIDGE_CALLS, thisRoot } from './options';
import { median, timed } from './statistics';
import { backendArgs, connect, connectCli, runPython, type Target } from './targets';

const everythingServer = path.join(
  thisRoot,
  'node_modules',
  '@modelcontextprotocol',
  'server-everything',
  'dist',
  'index.js',
);

/** One echo call to a real MCP server made directly with the SDK client: the floor the bridge adds to. */
async function measureDirectToolCall(): Promise<number> {
  const conn = await connect(process.execPath, [everythingServer, 'stdio']);
  try {
    for (let i = 0; i < 50; i++) await conn.client.callTool({ name: 'echo', arguments: { message: 'x' } });
    const samples: number[] = [];
    for (let i = 0; i < BRIDGE_CALLS; i++)
      samples.push(await timed(() => conn.client.callTool({ name: 'echo', arguments: { message: 'x' } })));
    return median(samples);
  } finally {
    await conn.close();
  }
}

/** The same call from Python through `code_mode.tools`, timed inside Python around each call. */
async function measureBridgedToolCall(target: Target, backend: BackendKind): Promise<number> {
  const servers = path.join(target.storage, 'bench-servers.json');
  fs.writeFileSync(
    servers,
    JSON.stringify({ servers: { everything: { command: process.execPath, args: [everythingServer, 'stdio'] } } }),
  );
  const conn = await connectCli(target, [...backendArgs(backend), '--servers', servers]);
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
    const result = await runPython(conn.client, { code, timeout_s: 300 });
    if (!result.success) throw new Error(`bridge bench failed: ${JSON.stringify(result.diagnostics)}`);
    return median(JSON.parse(result.stdout) as number[]);
  } finally {
    await conn.close();
  }
}

export interface BridgeFigures {
  bridged: number;
  direct: number;
}

/** Both calls for each target and backend, keyed `${label} ${backend}`. */
export async function measureBridge(targets: Target[], backends: BackendKind[]): Promise<Map<string, BridgeFigures>> {
  // Each bridged figure is paired with a direct one taken just before it, so both see the same load.
  const bridge = new Map<string, BridgeFigures>();
  for (const target of targets) {
    for (const backend of backends) {
      const direct = await measureDirectToolCall();
      bridge.set(`${target.label} ${backend}`, { direct, bridged: await measureBridgedToolCall(target, backend) });
    }
  }
  return bridge;
}
