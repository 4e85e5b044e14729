// The bench's command line (its options are described in run.ts's header) and the sizes of a run it sets.
import * as path from 'node:path';
import { parseArgs } from 'node:util';

export const cli = parseArgs({
  options: {
    quick: { type: 'boolean' },
    root: { type: 'string' },
    compare: { type: 'string' },
    memory: { type: 'boolean' },
    'memory-runs': { type: 'string' },
    tokens: { type: 'boolean' },
  },
  strict: true,
}).values;
export const quick = cli.quick ?? false;
export const COLD_RUNS = quick ? 4 : 7;
/** A pause after each server start measured, for what the server leaves ending in the background. */
export const SETTLE_MS = 500;
export const PYODIDE_COLD_RUNS = quick ? 1 : 3;
export const SNAPSHOT_STARTS = quick ? 3 : 7;
export const WARM_CALLS = quick ? 100 : 1000;
export const PARALLEL_CALLS = quick ? 400 : 2000;
export const CALLERS = 8;
export const BRIDGE_CALLS = quick ? 100 : 500;
/** Measured runs of each workspace-write series, per target. */
export const WORKSPACE_WRITE_RUNS = quick ? 10 : 30;
/** Rounds of the 8-way throughput figure, ours and the floor's alternating; the median is shown. */
export const THROUGHPUT_ROUNDS = 3;
/** Calls of every warm series before the measured ones. */
export const WARM_UP_CALLS = 150;
/** Runs on each of the CALLERS clients' servers before their throughput is measured. */
export const THROUGHPUT_WARM_RUNS = 100;
/** The interpreter with jupyter_server and ipykernel that the jupyter backend's local server runs (Debian's on CI). */
export const JUPYTER_PYTHON = process.env.CODE_MODE_TEST_JUPYTER_PYTHON ?? '/usr/bin/python3';
export const CODE = 'print(1+1)';
export const benchDir = __dirname;
export const thisRoot = path.resolve(benchDir, '..');
