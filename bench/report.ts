// The report a bench run prints: the issue's figures, then where a warm run's time goes, each measurement's table, and
// with --compare how the checkout changed against the other.
import type { BackendKind } from '../src/engine/types';
import { BACKEND_NAMES, fmt, percent, table, times } from './format';
import { printIssueFigures } from './issueFigures';
import { warmFigures, type Measurements } from './measurements';
import type { TreeMemory } from './memory';
import { SANDBOX_CHOICES } from './pyodide';
import {
  BRIDGE_CALLS,
  CALLERS,
  PYODIDE_COLD_RUNS,
  SNAPSHOT_STARTS,
  WARM_CALLS,
  WARM_UP_CALLS,
  WORKSPACE_WRITE_RUNS,
} from './options';
import { median, percentile } from './statistics';
import type { Target } from './targets';
import { writeMedians } from './workspaceWrites';

export function printReport(m: Measurements): void {
  const { targets, backends, starts, serverStarts, warm, mechanisms, clients, spareMemory, bridge, workspaceWrites } =
    m;
  const { spawnPerCall: baseline, loadAtStart, loadAtEnd: loadAfter, othersShare, elapsedS } = m;
  const [primary] = targets;
  const { floorP50, execFloorP50, pyodideFloorP50, directP50, p50, p90 } = warmFigures(m);
  const throughput = m.oneConnection.ours;
  const multi = targets.length > 1;
  const column = (target: Target, backend: BackendKind) =>
    `${BACKEND_NAMES[backend]}${multi ? ` @ ${target.label}` : ''}`;

  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  const others =
    othersShare === undefined
      ? ''
      : `; CPU used by processes outside the bench: ${(Math.max(0, othersShare) * 100).toFixed(0)} % of the machine's`;
  console.log(
    `\nThe issue's figures, each a ratio of figures measured in this run (medians; load average ${load(loadAtStart)} at the start, ${load(loadAfter)} at the end${others})`,
  );
  printIssueFigures(m);
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
  const memoryLine = (what: string, memory: TreeMemory | undefined) =>
    memory
      ? `${what}: RSS ${mib(memory.rssBytes)}, PSS ${mib(memory.pssBytes)} (${memory.processes} processes)`
      : `${what}: not measured`;
  console.log(
    `\n${memoryLine(`a spare Pyodide host at ${primary.label} (restored from the snapshot, idle)`, spareMemory)}`,
  );
  console.log(
    memoryLine(
      `a Pyodide session's host at ${primary.label} after ${WARM_CALLS + WARM_UP_CALLS} warm runs`,
      warm.pyodideSessionMemory,
    ),
  );

  console.log(
    `\nWhere a warm run_python print(1+1) goes at ${primary.label} (differences of p50s measured interleaved in this run)`,
  );
  table(
    [
      'backend',
      'warm p50 (ms)',
      'the MCP floor: client, SDK server, two process hops',
      'our MCP layer beyond the floor (handler, result shaping, events, history)',
      'the engine and its interpreter (engine.run)',
    ],
    backends.map((b) => {
      const mcp = p50(`${primary.label} ${b} mcp`);
      const engine = p50(`${primary.label} ${b} engine`);
      const kernel =
        b === 'jupyter' && directP50 !== undefined ? `; of it a kernel driven directly: ${fmt(directP50)}` : '';
      return [BACKEND_NAMES[b], fmt(mcp), fmt(floorP50), fmt(mcp - engine - floorP50), `${fmt(engine)}${kernel}`];
    }),
  );

  console.log(
    `\nOver MCP stdio with the SDK's client, against spawn-per-call (\`python3 -c\` per call) measured in the same run`,
  );
  const columns = targets.flatMap((t) => backends.map((b) => [t, b] as const));
  table(
    ['figure', 'spawn-per-call', ...columns.map(([t, b]) => column(t, b))],
    [
      [
        'server spawn → first result (ms, median)',
        fmt(baseline.p50Ms),
        ...columns.map(([t, b]) => fmt(median(serverStarts.get(`${t.label} ${b}`)!))),
      ],
      [
        'warm run_python print(1+1) p50 (ms)',
        fmt(baseline.p50Ms),
        ...columns.map(
          ([t, b]) =>
            `${fmt(p50(`${t.label} ${b} mcp`))} (${(baseline.p50Ms / p50(`${t.label} ${b} mcp`)).toFixed(0)}× faster)`,
        ),
      ],
      ['warm p90 (ms)', fmt(baseline.p90Ms), ...columns.map(([t, b]) => fmt(p90(`${t.label} ${b} mcp`)))],
      [
        `${CALLERS}-way throughput on one session (calls/s)`,
        fmt(baseline.callsPerSecond8Way),
        ...columns.map(([t, b]) => fmt(throughput.get(`${t.label} ${b}`)!)),
      ],
      [
        `${CALLERS} clients, a server each (calls/s)`,
        fmt(baseline.callsPerSecond8Way),
        ...columns.map(([t, b]) => fmt(clients.ours.get(`${t.label} ${b}`)!)),
      ],
    ],
  );

  console.log(
    `\nWarm calls, interleaved call by call (${WARM_CALLS} rounds; the floor is an SDK stdio server whose tool returns a constant)`,
  );
  const warmRows: string[][] = [
    ['MCP floor (SDK server, tool runs nothing)', fmt(floorP50), fmt(percentile(warm.floor.samples, 90)), '1.0×'],
    [
      'MCP floor + one round trip over a pipe to a Python process that echoes',
      fmt(median(warm.hopFloor.samples)),
      fmt(percentile(warm.hopFloor.samples, 90)),
      times(median(warm.hopFloor.samples) / floorP50),
    ],
    [
      'MCP floor + a Python process compiling and running the code, its output captured (the least a workspace-Python run could cost)',
      fmt(execFloorP50),
      fmt(percentile(warm.execFloor.samples, 90)),
      times(execFloorP50 / floorP50),
    ],
    [
      'MCP floor + Pyodide running the code on a worker thread of its process, no sandbox (the least a Pyodide run could cost)',
      fmt(pyodideFloorP50),
      fmt(percentile(warm.pyodideFloor.samples, 90)),
      times(pyodideFloorP50 / floorP50),
    ],
  ];
  if (warm.directKernel)
    warmRows.push([
      'a local kernel driven directly with jupyter_client (no server)',
      fmt(directP50!),
      fmt(percentile(warm.directKernel.samples, 90)),
      times(directP50! / floorP50),
    ]);
  for (const [t, b] of columns) {
    const mcp = `${t.label} ${b} mcp`;
    const engine = `${t.label} ${b} engine`;
    warmRows.push([
      `${column(t, b)}: run_python over MCP stdio`,
      fmt(p50(mcp)),
      fmt(p90(mcp)),
      times(p50(mcp) / floorP50),
    ]);
    warmRows.push([
      `${column(t, b)}: engine only (in-process engine.run)`,
      fmt(p50(engine)),
      fmt(p90(engine)),
      times(p50(engine) / floorP50),
    ]);
  }
  table(['row', 'p50 (ms)', 'p90 (ms)', 'p50 / MCP floor p50'], warmRows);

  console.log(`\nPyodide start, backend spawn → ready (new backend each time, as a fresh server starts it)`);
  table(
    [
      'target',
      'sandbox',
      `first start, empty cache: the shipped snapshot (ms, median of ${PYODIDE_COLD_RUNS})`,
      `cold, no snapshot at all (ms, median of ${PYODIDE_COLD_RUNS})`,
      `from the snapshot (ms, median of ${SNAPSHOT_STARTS})`,
      'host-reported load from the snapshot (ms, median)',
    ],
    targets.map((t) => {
      const s = starts.get(t)!;
      return [
        t.label,
        s.sandbox,
        fmt(median(s.firstMs)),
        fmt(median(s.coldMs)),
        fmt(median(s.snapshotMs)),
        fmt(median(s.snapshotHostLoadMs)),
      ];
    }),
  );

  console.log(
    `\nThe Pyodide sandbox's mechanisms at ${primary.label}, alternating in the same run (a new backend for each start; engine.run for warm runs)`,
  );
  table(
    [
      'asked for',
      'ran under',
      `from the snapshot (ms, median of ${SNAPSHOT_STARTS})`,
      'host-reported load (ms, median)',
      'warm print(1+1) p50 (ms)',
      'warm p90 (ms)',
    ],
    SANDBOX_CHOICES.map((choice) => {
      const m = mechanisms.get(choice)!;
      return [
        choice,
        m.mechanism,
        fmt(median(m.snapshotMs)),
        fmt(median(m.snapshotHostLoadMs)),
        fmt(median(m.warm)),
        fmt(percentile(m.warm, 90)),
      ];
    }),
  );

  console.log(
    `\ntools/list from our server: ${targets.map((t) => `${multi ? `${t.label}: ` : ''}${warm.toolsList.get(t)!.bytes} bytes of JSON, ${warm.toolsList.get(t)!.tools} tools`).join('; ')}`,
  );

  console.log(
    `\nBridge round trip: tools.everything.echo() from Python vs the same call with the SDK client (median of ${BRIDGE_CALLS})`,
  );
  table(
    ['backend', 'from Python (ms)', 'direct SDK call (ms)', 'bridge overhead (ms)'],
    columns.map(([t, b]) => {
      const { bridged, direct } = bridge.get(`${t.label} ${b}`)!;
      return [column(t, b), fmt(bridged), fmt(direct), fmt(bridged - direct)];
    }),
  );

  console.log(
    `\nPython writing into a writable workspace folder through the Pyodide sandbox (median of ${WORKSPACE_WRITE_RUNS} runs each, targets alternating)`,
  );
  table(
    ['target', 'sandbox', '8 MiB in 8 KiB writes (ms)', '100 files of 100 bytes (ms)'],
    targets.map((t) => {
      const figures = workspaceWrites.get(t)!;
      const { bigFileMs, smallFilesMs } = writeMedians(figures);
      return [t.label, figures.sandbox, fmt(bigFileMs), fmt(smallFilesMs)];
    }),
  );

  if (multi) {
    const [, ref] = targets;
    const change = (now: number, before: number) => `${fmt(before)} → ${fmt(now)} (${percent(now / before)})`;
    console.log(`\n${primary.label} against ${ref.label}, same run`);
    table(
      ['figure', `${ref.label} → ${primary.label}`],
      [
        [
          'Pyodide first start, empty cache (ms)',
          change(median(starts.get(primary)!.firstMs), median(starts.get(ref)!.firstMs)),
        ],
        [
          'Pyodide cold start, no snapshot at all (ms)',
          change(median(starts.get(primary)!.coldMs), median(starts.get(ref)!.coldMs)),
        ],
        [
          'Pyodide start from the snapshot (ms)',
          change(median(starts.get(primary)!.snapshotMs), median(starts.get(ref)!.snapshotMs)),
        ],
        [
          'Pyodide server spawn → first result (ms)',
          change(
            median(serverStarts.get(`${primary.label} pyodide`)!),
            median(serverStarts.get(`${ref.label} pyodide`)!),
          ),
        ],
        ...backends.flatMap((b) => [
          [
            `${BACKEND_NAMES[b]} warm run_python p50 (ms)`,
            change(p50(`${primary.label} ${b} mcp`), p50(`${ref.label} ${b} mcp`)),
          ],
          [
            `${BACKEND_NAMES[b]} warm p50 / MCP floor`,
            `${times(p50(`${ref.label} ${b} mcp`) / floorP50)} → ${times(p50(`${primary.label} ${b} mcp`) / floorP50)}`,
          ],
          [
            `${BACKEND_NAMES[b]} engine only p50 (ms)`,
            change(p50(`${primary.label} ${b} engine`), p50(`${ref.label} ${b} engine`)),
          ],
        ]),
      ],
    );
  }
  console.log(
    `\n${elapsedS.toFixed(0)} s; load average at the end ${loadAfter.map((l) => l.toFixed(2)).join(' ')}${others}`,
  );
}
