// npm run bench — medians and ratios against baselines measured in the same run:
//   * a spawn-per-call baseline (`python3 -c` per call),
//   * the MCP floor: an SDK stdio server whose tool runs nothing (bench/floorServer.ts), and the same plus one
//     round trip to a Python process that echoes, or that compiles and runs the code (bench/hopFloorServer.ts), or
//     plus Pyodide running it on a worker thread (bench/pyodideFloorServer.ts): the least a run of each backend
//     could cost; called with the same SDK client as ours, interleaved call by call with our run_python calls and
//     with the engine alone,
//   * Pyodide's first start on an empty cache as a fresh install has it (from the snapshot shipped with the build),
//     and with no snapshot at all (none shipped: it is made on the way),
//   * the Pyodide sandbox's two mechanisms (bubblewrap, Deno), start from the snapshot and warm runs alternating,
//   * a local ipykernel driven directly with jupyter_client (bench/directKernel.py), interleaved with the jupyter
//     backend's calls, and 8 of them, a caller each, beside the 8 clients' servers: what any Jupyter client gets,
//   * 8 concurrent callers, two ways: sharing one connection (and so one session, whose runs queue), and as 8 clients
//     with a stdio server each (as 8 agents would have), each against the floor's servers taken the same way,
// and the memory of a spare Pyodide host and of a Pyodide session's host after the warm calls.
// The figures (the first table printed) are ratios of figures measured in the same run.
// Numbers are printed, never asserted: this machine is shared and noisy.
//
//   npm run bench [-- --quick] [--root <checkout>] [--compare <checkout>]
//     --root     the checkout to measure (default: this one); its dist/ must be built
//     --compare  another built checkout measured in the same run, interleaved with --root (e.g. a `git worktree`
//                of an older commit with node_modules linked in): its rows, and how --root changed against it
//
//   npm run bench -- --memory [--memory-runs N] [--root <checkout>]
//     only the memory of a long session (bench/memory.ts): N runs (default 200) of 20 × 5 MiB displays
//
//   npm run bench -- --tokens [--root <checkout>]
//     only the input tokens an agent's model reads for one real task, direct tool calls vs code mode (bench/tokens.ts)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { BackendKind } from '../src/engine/types';
import { measureSpawnPerCall } from './baselines';
import { measureBridge } from './bridge';
import { measureClientThroughput, measureConnectionThroughput, measureServerStarts, measureWarm } from './calls';
import { measureMemory } from './memory';
import { cli, JUPYTER_PYTHON, quick, thisRoot } from './options';
import { measurePyodideStarts, measureSandboxMechanisms, measureSpare } from './pyodide';
import { measureWorkspaceWrites } from './workspaceWrites';
import { printReport } from './report';
import { writeSummary } from './summary';
import { backendFile, loadTarget } from './targets';
import { measureTokens } from './tokens';

type InterpreterModule = typeof import('../src/engine/backends/python/interpreter');

/**
 * CPU ticks (Linux): busy and total of the whole machine, and what this process and its reaped descendants (our
 * servers, their Pyodide and Python processes) used. Elsewhere undefined.
 */
function cpuTicks(): { busy: number; total: number; ours: number } | undefined {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    // utime, stime, cutime, cstime: fields 14-17, counted after the ")" that ends the command name.
    const own = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ').slice(11, 15).map(Number);
    return { busy: total - fields[3] - fields[4], total, ours: own.reduce((a, b) => a + b, 0) };
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  if (cli.tokens) {
    await measureTokens(path.resolve(cli.root ?? thisRoot));
    return;
  }
  if (cli.memory) {
    const runs = Number(cli['memory-runs'] ?? 200);
    if (!Number.isInteger(runs) || runs < 1)
      throw new Error(`--memory-runs takes a whole number of runs, not ${cli['memory-runs']}`);
    await measureMemory(path.resolve(cli.root ?? thisRoot), runs);
    return;
  }
  const targets = [await loadTarget(cli.root ?? thisRoot)];
  if (cli.compare) targets.push(await loadTarget(cli.compare));
  if (targets.length > 1 && targets[0].label === targets[1].label) targets[1].label += ' (compare)';
  const [primary] = targets;
  // The jupyter backend is measured where every target has it and this machine can serve it.
  const backends: BackendKind[] = ['pyodide', 'python'];
  const servesJupyter = targets.every((t) => fs.existsSync(backendFile(t.root, 'jupyter/backend.ts')));
  if (servesJupyter) {
    const local = (await import(
      pathToFileURL(backendFile(primary.root, 'jupyter/localServer.ts')).href
    )) as typeof import('../src/engine/backends/jupyter/localServer');
    const missing = await local.missingJupyterModules(JUPYTER_PYTHON);
    if (missing) console.log(`(the jupyter backend is not measured: ${missing})`);
    else backends.push('jupyter');
  }
  try {
    const interpreter = (await import(
      pathToFileURL(backendFile(primary.root, 'python/interpreter.ts')).href
    )) as InterpreterModule;
    const python = interpreter.resolvePythonInterpreter();
    const loadAtStart = os.loadavg();
    console.log(
      `bench: ${quick ? 'quick' : 'full'} run; node ${process.version}; python ${python}; ${os.cpus().length} CPUs; load ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`,
    );
    for (const target of targets) console.log(`  ${target.label}: ${target.root}`);

    const cpuAtStart = cpuTicks();
    const startedAt = performance.now();
    const spawnPerCall = await measureSpawnPerCall(python);
    const starts = await measurePyodideStarts(targets);
    const serverStarts = await measureServerStarts(targets, backends);
    const warm = await measureWarm(targets, backends, python);
    const mechanisms = await measureSandboxMechanisms(primary);
    const oneConnection = await measureConnectionThroughput(warm);
    const clients = await measureClientThroughput(targets, backends);
    const spareMemory = await measureSpare(primary);
    const bridge = await measureBridge(targets, backends);
    const workspaceWrites = await measureWorkspaceWrites(targets);
    const loadAtEnd = os.loadavg();
    const cpuAtEnd = cpuTicks();
    const elapsedS = (performance.now() - startedAt) / 1000;
    // Share of the machine's CPU time that went to processes other than the bench's own tree: others' noise.
    const othersShare =
      cpuAtStart && cpuAtEnd
        ? (cpuAtEnd.busy - cpuAtStart.busy - (cpuAtEnd.ours - cpuAtStart.ours)) / (cpuAtEnd.total - cpuAtStart.total)
        : undefined;
    const measured = {
      targets,
      backends,
      spawnPerCall,
      starts,
      serverStarts,
      warm,
      mechanisms,
      oneConnection,
      clients,
      spareMemory,
      bridge,
      workspaceWrites,
      loadAtStart,
      loadAtEnd,
      othersShare,
      elapsedS,
    };
    printReport(measured);
    writeSummary(measured);
  } finally {
    for (const target of targets) fs.rmSync(target.storage, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
