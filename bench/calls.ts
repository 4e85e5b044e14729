// Our servers and engines against the floors, same run: server spawn → first result, warm calls interleaved call by
// call, and calls/s of CALLERS callers, on one connection or as many clients with a server each.
import type { BackendKind } from '../src/engine/types';
import {
  connectFloor,
  connectHopFloor,
  connectPyodideFloor,
  floorCallSucceeds,
  floorSeries,
  startDirectKernel,
} from './baselines';
import { processTreeMemory, type TreeMemory } from './memory';
import {
  CALLERS,
  CODE,
  COLD_RUNS,
  JUPYTER_PYTHON,
  PARALLEL_CALLS,
  SETTLE_MS,
  THROUGHPUT_ROUNDS,
  THROUGHPUT_WARM_RUNS,
  WARM_CALLS,
  WARM_UP_CALLS,
} from './options';
import { median, timed, type Series } from './statistics';
import { backendArgs, connectCli, runOnePlusOne, runPythonSucceeds, type Connection, type Target } from './targets';

/** Server spawn → first run_python result, with the snapshot cached; targets and backends alternate. */
export async function measureServerStarts(targets: Target[], backends: BackendKind[]): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>();
  for (let i = 0; i < COLD_RUNS; i++) {
    for (const target of targets) {
      for (const backend of backends) {
        const ms = await timed(async () => {
          const conn = await connectCli(target, backendArgs(backend));
          try {
            await runOnePlusOne(conn.client);
          } finally {
            await conn.close();
          }
        });
        const key = `${target.label} ${backend}`;
        samples.set(key, [...(samples.get(key) ?? []), ms]);
        // The server's processes (a Pyodide host, a Jupyter Server and its kernel) end after the client has closed:
        // not inside the next start.
        await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      }
    }
  }
  return samples;
}

// ---- warm calls, interleaved ----------------------------------------------------------------------------

export interface Warm {
  floor: Series;
  /** The floor plus one round trip to a Python process (hopFloorServer.ts). */
  hopFloor: Series;
  /** The floor plus a Python process compiling and running the code: the least a workspace-Python run could cost. */
  execFloor: Series;
  /** The floor plus Pyodide running the code on a worker thread, no sandbox: the least a Pyodide run could cost. */
  pyodideFloor: Series;
  /** The floor's connection, left open for its throughput figure. */
  floorConn: Connection;
  /** A local kernel driven with jupyter_client, when the jupyter backend is measured. */
  directKernel?: Series;
  /** Memory of the primary target's in-process Pyodide session host after the warm calls. */
  pyodideSessionMemory?: TreeMemory;
  /** `${label} ${backend} mcp` and `${label} ${backend} engine`. */
  byKey: Map<string, Series>;
  /** Our servers, left open for the throughput and tools/list figures. */
  servers: Map<string, Connection>;
  toolsList: Map<Target, { bytes: number; tools: number }>;
}

/**
 * Every series answers `print(1+1)` (the floor answers a constant) WARM_CALLS times; each round calls every
 * series once, starting from a different one each round, so load from elsewhere lands on all of them alike.
 */
export async function measureWarm(targets: Target[], backends: BackendKind[], python: string): Promise<Warm> {
  const floorConn = await connectFloor();
  const hopFloor = floorSeries('MCP floor + one process hop', await connectHopFloor(python, 'echo'), true);
  const execFloor = floorSeries(
    'MCP floor + a Python process running the code',
    await connectHopFloor(python, 'exec'),
    true,
  );
  const pyodideFloor = floorSeries('MCP floor + Pyodide on a worker thread', await connectPyodideFloor(), true);
  // The floor's connection stays open for its throughput figure.
  const floor = floorSeries('MCP floor', floorConn, false);
  const directKernel = backends.includes('jupyter') ? await startDirectKernel() : undefined;
  const byKey = new Map<string, Series>();
  const servers = new Map<string, Connection>();
  const toolsList = new Map<Target, { bytes: number; tools: number }>();
  for (const target of targets) {
    for (const backend of backends) {
      const conn = await connectCli(target, backendArgs(backend));
      servers.set(`${target.label} ${backend}`, conn);
      byKey.set(`${target.label} ${backend} mcp`, {
        name: `${backend} mcp`,
        call: () => runOnePlusOne(conn.client),
        samples: [],
        close: async () => undefined,
      });
      if (backend === 'pyodide') {
        const list = await conn.client.listTools();
        toolsList.set(target, { bytes: Buffer.byteLength(JSON.stringify(list)), tools: list.tools.length });
      }
    }
    const jupyter = backends.includes('jupyter') ? { jupyter: { url: 'local', python: JUPYTER_PYTHON } } : {};
    const engine = target.engines.createEngine({
      storageDir: target.storage,
      workspaceRoots: [target.workspace],
      ...jupyter,
    });
    for (const backend of backends) {
      byKey.set(`${target.label} ${backend} engine`, {
        name: `${backend} engine`,
        call: async () => {
          const result = await engine.run({ code: CODE, backend });
          if (result.stdout !== '2\n') throw new Error(`unexpected result ${JSON.stringify(result)}`);
        },
        samples: [],
        close: async () => undefined,
      });
    }
    byKey.get(`${target.label} python engine`)!.close = async () => {
      const pid = target === targets[0] ? engine.backendInfo('pyodide').pid : undefined;
      if (pid !== undefined) pyodideSessionMemory = processTreeMemory(pid);
      await engine.dispose();
    };
  }
  let pyodideSessionMemory: TreeMemory | undefined;
  const all = [floor, hopFloor, execFloor, pyodideFloor, ...(directKernel ? [directKernel] : []), ...byKey.values()];
  // Past the first hundred or so runs of a fresh Pyodide instance, which are slower while V8 tiers up its WebAssembly.
  for (let i = 0; i < WARM_UP_CALLS; i++) for (const series of all) await series.call();
  for (let round = 0; round < WARM_CALLS; round++) {
    for (let k = 0; k < all.length; k++) {
      const series = all[(round + k) % all.length];
      series.samples.push(await timed(() => series.call()));
    }
  }
  for (const series of all) await series.close();
  return {
    floor,
    hopFloor,
    execFloor,
    pyodideFloor,
    floorConn,
    directKernel,
    pyodideSessionMemory,
    byKey,
    servers,
    toolsList,
  };
}

/** Calls/s: the floor's and ours, keyed `${label} ${backend}`. */
export interface Throughput {
  floor: number;
  ours: Map<string, number>;
}

export interface ClientThroughput extends Throughput {
  /** As many local kernels driven directly, a caller each, when the jupyter backend is measured. */
  directKernels?: number;
}

/**
 * Calls/s of CALLERS callers, PARALLEL_CALLS calls in all; `call(caller)` says whether a call succeeded. The callers
 * share one connection, or each has its own (see measureClientThroughput).
 */
async function measureThroughput(call: (caller: number) => Promise<boolean>): Promise<number> {
  let next = 0;
  let ok = 0;
  const caller = async (index: number) => {
    while (next < PARALLEL_CALLS) {
      next++;
      if (await call(index)) ok++;
    }
  };
  const parallelMs = await timed(() => Promise.all(Array.from({ length: CALLERS }, (_, index) => caller(index))));
  return (ok / parallelMs) * 1000;
}

/**
 * CALLERS callers sharing one connection (and so one session, whose runs queue): calls/s of the floor's server and
 * of each of ours, the connections measureWarm left open, which this closes.
 */
export async function measureConnectionThroughput(warm: Warm): Promise<Throughput> {
  // Rounds alternate the floor and each of our servers, so load from elsewhere lands on all of them alike.
  const throughputRounds = new Map<string, number[]>();
  const floorThroughput: number[] = [];
  for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
    floorThroughput.push(await measureThroughput(() => floorCallSucceeds(warm.floorConn)));
    for (const [key, conn] of warm.servers)
      throughputRounds.set(key, [
        ...(throughputRounds.get(key) ?? []),
        await measureThroughput(() => runPythonSucceeds(conn)),
      ]);
  }
  await warm.floorConn.close();
  for (const conn of warm.servers.values()) await conn.close();
  return {
    floor: median(floorThroughput),
    ours: new Map([...throughputRounds].map(([key, rounds]) => [key, median(rounds)])),
  };
}

/**
 * CALLERS clients at once, each with the server of its own that an MCP client starts over stdio (and so its own
 * interpreter): calls/s of the floor's servers and of ours for each backend, in alternating rounds. Our servers keep
 * no spare Pyodide interpreter here: a spare only speeds a first run, and its start would land in a round.
 */
export async function measureClientThroughput(targets: Target[], backends: BackendKind[]): Promise<ClientThroughput> {
  // One at a time, each with its interpreter started before the next: once, one of eight local Jupyter Servers
  // started at the same moment missed the backend's start bound, and the whole bench ended with it.
  const openMany = async (open: () => Promise<Connection>, warm: (conn: Connection) => Promise<void>) => {
    const conns: Connection[] = [];
    for (let i = 0; i < CALLERS; i++) {
      conns.push(await open());
      await warm(conns[i]);
    }
    return conns;
  };
  const floorConns = await openMany(connectFloor, async (conn) => void (await floorCallSucceeds(conn)));
  const ourConns = new Map<string, Connection[]>();
  for (const target of targets)
    for (const backend of backends) {
      const conns = await openMany(
        () => connectCli(target, [...backendArgs(backend), '--no-pyodide-spare']),
        (conn) => runOnePlusOne(conn.client),
      );
      // Steady state, as the warm figures are: a fresh Pyodide instance runs its first hundred or so cells slower
      // while V8 tiers up CPython's WebAssembly (the compiler's above all), which eight at once on two cores
      // would spend inside the first round.
      for (let i = 0; i < THROUGHPUT_WARM_RUNS; i++) await Promise.all(conns.map((conn) => runOnePlusOne(conn.client)));
      ourConns.set(`${target.label} ${backend}`, conns);
    }
  // The most any Jupyter client gets from this machine: as many kernels, each driven directly by its own caller.
  const directKernels: Series[] = [];
  if (backends.includes('jupyter')) for (let i = 0; i < CALLERS; i++) directKernels.push(await startDirectKernel());
  const floorRounds: number[] = [];
  const ourRounds = new Map<string, number[]>();
  const directRounds: number[] = [];
  try {
    for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
      floorRounds.push(await measureThroughput((caller) => floorCallSucceeds(floorConns[caller])));
      for (const [key, conns] of ourConns)
        ourRounds.set(key, [
          ...(ourRounds.get(key) ?? []),
          await measureThroughput((caller) => runPythonSucceeds(conns[caller])),
        ]);
      if (directKernels.length > 0)
        directRounds.push(await measureThroughput(async (caller) => (await directKernels[caller].call(), true)));
    }
  } finally {
    await Promise.all([...floorConns, ...[...ourConns.values()].flat()].map((conn) => conn.close()));
    await Promise.all(directKernels.map((kernel) => kernel.close()));
  }
  return {
    floor: median(floorRounds),
    ours: new Map([...ourRounds].map(([key, rounds]) => [key, median(rounds)])),
    ...(directRounds.length > 0 ? { directKernels: median(directRounds) } : {}),
  };
}
