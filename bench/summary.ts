// bench/results/latest.json: the run's figures for a program to read (the report prints the same ones).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { warmFigures, type Measurements } from './measurements';
import { benchDir, quick } from './options';
import { median, percentile } from './statistics';

export function writeSummary(m: Measurements): void {
  const { targets, backends, starts, serverStarts, warm, clients, spareMemory, bridge } = m;
  const { spawnPerCall, loadAtStart, loadAtEnd, othersShare, elapsedS } = m;
  const { floorP50, execFloorP50, pyodideFloorP50, directP50, p50, p90 } = warmFigures(m);
  const throughput = m.oneConnection.ours;
  const floorThroughputMedian = m.oneConnection.floor;
  const outDir = path.join(benchDir, 'results');
  fs.mkdirSync(outDir, { recursive: true });
  const summary = {
    date: new Date().toISOString(),
    quick,
    cpus: os.cpus().length,
    loadAtEnd,
    elapsedS,
    othersCpuShare: othersShare,
    spawnPerCall,
    loadAtStart,
    mcpFloor: {
      p50Ms: floorP50,
      p90Ms: percentile(warm.floor.samples, 90),
      callsPerSecond8Way: floorThroughputMedian,
      callsPerSecond8Clients: clients.floor,
    },
    hopFloorP50Ms: median(warm.hopFloor.samples),
    execFloorP50Ms: execFloorP50,
    pyodideFloorP50Ms: pyodideFloorP50,
    directKernelP50Ms: directP50,
    directKernelsCallsPerSecond8Clients: clients.directKernels,
    spareHost: spareMemory,
    pyodideSessionHost: warm.pyodideSessionMemory,
    targets: targets.map((t) => ({
      label: t.label,
      root: t.root,
      pyodideStart: {
        sandbox: starts.get(t)!.sandbox,
        firstMs: median(starts.get(t)!.firstMs),
        coldMs: median(starts.get(t)!.coldMs),
        snapshotMs: median(starts.get(t)!.snapshotMs),
        snapshotHostLoadMs: median(starts.get(t)!.snapshotHostLoadMs),
      },
      toolsList: warm.toolsList.get(t),
      backends: Object.fromEntries(
        backends.map((b) => [
          b,
          {
            serverSpawnToFirstResultMs: median(serverStarts.get(`${t.label} ${b}`)!),
            warmP50Ms: p50(`${t.label} ${b} mcp`),
            warmP90Ms: p90(`${t.label} ${b} mcp`),
            warmP50OverFloor: p50(`${t.label} ${b} mcp`) / floorP50,
            engineOnlyP50Ms: p50(`${t.label} ${b} engine`),
            callsPerSecond8Way: throughput.get(`${t.label} ${b}`),
            callsPerSecond8Clients: clients.ours.get(`${t.label} ${b}`),
            bridge: bridge.get(`${t.label} ${b}`),
          },
        ]),
      ),
    })),
  };
  fs.writeFileSync(path.join(outDir, 'latest.json'), JSON.stringify(summary, null, 2));
}
