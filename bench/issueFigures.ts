// The issue's figures, the first table printed: each a ratio of figures measured in the same run, against the
// target the issue set for it (✓ or ✗).
import { BACKEND_NAMES, fmt, table, times } from './format';
import { warmFigures, type Measurements } from './measurements';
import { CALLERS, COLD_RUNS, PYODIDE_COLD_RUNS, THROUGHPUT_ROUNDS } from './options';
import { median } from './statistics';
import type { Target } from './targets';

export function printIssueFigures(m: Measurements): void {
  const { targets, backends, starts, serverStarts, clients } = m;
  const { floorP50, execFloorP50, pyodideFloorP50, directP50, p50 } = warmFigures(m);
  const throughput = m.oneConnection.ours;
  const floorThroughputMedian = m.oneConnection.floor;
  const percentOf = (callsPerS: number, floor: number) =>
    `${fmt(callsPerS)} calls/s = ${((callsPerS / floor) * 100).toFixed(0)} %`;
  const ratioCell = (a: number, b: number, unit: string) =>
    `${fmt(a)} / ${fmt(b)} ${unit} = ${times(a / b).replace('.0×', '×')}`;
  const issueRows: {
    figure: string;
    target: string;
    value(t: Target): string;
    holds(t: Target): boolean | undefined;
  }[] = [
    {
      figure: `Pyodide first result from a server spawn (snapshot saved earlier) / the workspace-Python backend's (median of ${COLD_RUNS})`,
      target: '≤ 2×',
      value: (t) =>
        ratioCell(
          median(serverStarts.get(`${t.label} pyodide`)!),
          median(serverStarts.get(`${t.label} python`)!),
          'ms',
        ),
      holds: (t) =>
        median(serverStarts.get(`${t.label} pyodide`)!) / median(serverStarts.get(`${t.label} python`)!) <= 2,
    },
    {
      figure: `Pyodide's very first start, empty cache as a fresh install has it (the snapshot shipped with the build): backend spawn → ready (median of ${PYODIDE_COLD_RUNS})`,
      target: '≤ 1,500 ms',
      value: (t) => `${fmt(median(starts.get(t)!.firstMs))} ms`,
      holds: (t) => median(starts.get(t)!.firstMs) <= 1500,
    },
    {
      figure: `Pyodide's start with no snapshot at all (empty cache, none shipped; the snapshot is made on the way): backend spawn → ready (median of ${PYODIDE_COLD_RUNS})`,
      target: '—',
      value: (t) => `${fmt(median(starts.get(t)!.coldMs))} ms`,
      holds: () => undefined,
    },
    {
      figure: 'warm run_python p50, Pyodide / the MCP floor',
      target: '≤ 1.8×',
      // The least any design could reach: what a target leaves for everything but CPython's own work.
      value: (t) =>
        `${ratioCell(p50(`${t.label} pyodide mcp`), floorP50, 'ms')}; the least a run could cost (the floor + Pyodide on a worker thread of its process, no sandbox): ${times(pyodideFloorP50 / floorP50)}`,
      holds: (t) => p50(`${t.label} pyodide mcp`) / floorP50 <= 1.8,
    },
    {
      figure: 'warm p50, workspace Python / the MCP floor',
      target: '≤ 1.4×',
      value: (t) =>
        `${ratioCell(p50(`${t.label} python mcp`), floorP50, 'ms')}; the least a run could cost (the floor + a Python process compiling and running the code): ${times(execFloorP50 / floorP50)}`,
      holds: (t) => p50(`${t.label} python mcp`) / floorP50 <= 1.4,
    },
    ...(directP50 === undefined
      ? []
      : [
          {
            figure: 'warm p50, Jupyter backend (local server) / a kernel driven directly with jupyter_client',
            target: '≤ 1.2×',
            value: (t: Target) => ratioCell(p50(`${t.label} jupyter mcp`), directP50, 'ms'),
            holds: (t: Target) => p50(`${t.label} jupyter mcp`) / directP50 <= 1.2,
          },
        ]),
    {
      figure: `${CALLERS} concurrent callers on one connection, calls/s, each backend / the floor's (${fmt(floorThroughputMedian)}; median of ${THROUGHPUT_ROUNDS} rounds)`,
      target: '≥ 40 %',
      value: (t) =>
        backends
          .map(
            (b) =>
              `${BACKEND_NAMES[b]} ${((throughput.get(`${t.label} ${b}`)! / floorThroughputMedian) * 100).toFixed(0)} %`,
          )
          .join(', ') +
        // A kernel runs one cell at a time, so one session's calls/s cannot pass 1 / a direct kernel's p50.
        (directP50 === undefined
          ? ''
          : `; one kernel driven directly, one cell at a time: at most ${percentOf(1000 / directP50, floorThroughputMedian)}`),
      holds: (t) => backends.every((b) => throughput.get(`${t.label} ${b}`)! / floorThroughputMedian >= 0.4),
    },
    {
      figure: `${CALLERS} concurrent clients, each with its own stdio server, calls/s, each backend / the floor's (${fmt(clients.floor)}; median of ${THROUGHPUT_ROUNDS} rounds)`,
      target: '≥ 40 %',
      value: (t) =>
        backends
          .map(
            (b) => `${BACKEND_NAMES[b]} ${((clients.ours.get(`${t.label} ${b}`)! / clients.floor) * 100).toFixed(0)} %`,
          )
          .join(', ') +
        (clients.directKernels === undefined
          ? ''
          : `; ${CALLERS} kernels driven directly with jupyter_client: ${percentOf(clients.directKernels, clients.floor)}`),
      holds: (t) => backends.every((b) => clients.ours.get(`${t.label} ${b}`)! / clients.floor >= 0.4),
    },
  ];
  const verdict = (holds: boolean | undefined) => (holds === undefined ? '' : holds ? ' ✓' : ' ✗');
  table(
    ['figure', 'target', ...targets.map((t) => t.label)],
    issueRows.map((row) => [row.figure, row.target, ...targets.map((t) => `${row.value(t)}${verdict(row.holds(t))}`)]),
  );
}
