// How long a warm run takes on the jupyter backend against the test JupyterHub (test/support/jupyterhub.ts): a
// stock single-user server, reached through the hub's proxy. Prints the median and quartiles of RUNS runs.
// Usage (as root, with Debian's jupyterhub installed): node --import tsx scripts/hub-latency.ts [runs]
import { performance } from 'node:perf_hooks';
import { createEngine } from '../src/engine/index';
import { startTestHub } from '../test/support/jupyterhub';

const RUNS = Number(process.argv[2] ?? 100);

async function main(): Promise<void> {
  const hub = await startTestHub();
  try {
    await hub.startServer();
    const engine = createEngine({ jupyter: { url: hub.userUrl, token: hub.token } });
    try {
      const first = await engine.run({ code: 'x = 0', backend: 'jupyter' });
      if (!first.success) throw new Error(JSON.stringify(first.diagnostics));
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const started = performance.now();
        const result = await engine.run({ code: 'x += 1', backend: 'jupyter' });
        times.push(performance.now() - started);
        if (!result.success) throw new Error(JSON.stringify(result.diagnostics));
      }
      times.sort((a, b) => a - b);
      const at = (q: number) => times[Math.floor(q * (times.length - 1))]!.toFixed(1);
      process.stdout.write(
        `${RUNS} warm runs: median ${at(0.5)} ms, quartiles ${at(0.25)}-${at(0.75)} ms, min ${at(0)} ms, max ${at(1)} ms\n`,
      );
    } finally {
      await engine.dispose();
    }
  } finally {
    await hub.stop();
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
