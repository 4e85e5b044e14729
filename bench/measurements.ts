// What one bench run measured, as the report and the summary read it.
import type { SandboxChoice } from '../src/engine/sandbox/index';
import type { BackendKind } from '../src/engine/types';
import type { SpawnBaseline } from './baselines';
import type { BridgeFigures } from './bridge';
import type { ClientThroughput, Throughput, Warm } from './calls';
import type { TreeMemory } from './memory';
import type { MechanismFigures, PyodideStart } from './pyodide';
import { median, percentile } from './statistics';
import type { Target } from './targets';
import type { WriteFigures } from './workspaceWrites';

export interface Measurements {
  targets: Target[];
  backends: BackendKind[];
  spawnPerCall: SpawnBaseline;
  starts: Map<Target, PyodideStart>;
  /** Server spawn → first result, keyed `${label} ${backend}`. */
  serverStarts: Map<string, number[]>;
  warm: Warm;
  mechanisms: Map<SandboxChoice, MechanismFigures>;
  /** CALLERS callers on one connection. */
  oneConnection: Throughput;
  /** CALLERS clients, a server each. */
  clients: ClientThroughput;
  spareMemory: TreeMemory | undefined;
  bridge: Map<string, BridgeFigures>;
  /** Python writing into a writable workspace folder through the Pyodide sandbox. */
  workspaceWrites: Map<Target, WriteFigures>;
  loadAtStart: number[];
  loadAtEnd: number[];
  /** Share of the machine's CPU time that went to processes other than the bench's own tree; undefined off Linux. */
  othersShare: number | undefined;
  elapsedS: number;
}

/** The warm medians the report and the summary both read; `p50`/`p90` take `${label} ${backend} mcp|engine`. */
export function warmFigures({ warm }: Measurements) {
  return {
    floorP50: median(warm.floor.samples),
    execFloorP50: median(warm.execFloor.samples),
    pyodideFloorP50: median(warm.pyodideFloor.samples),
    directP50: warm.directKernel && median(warm.directKernel.samples),
    p50: (key: string) => median(warm.byKey.get(key)!.samples),
    p90: (key: string) => percentile(warm.byKey.get(key)!.samples, 90),
  };
}
