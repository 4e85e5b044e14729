// Run by a copy of Node placed somewhere (test/sandbox/runtime-location.test.ts), as `<node> --import tsx
// runtimeProbe.ts '<json>'`: makes an engine as the CLI does, runs Python in Pyodide and, from a nested worker
// inside the sandbox, tries to read each of `paths` and to connect to it as a Unix socket. Node's permission
// model refuses the reads whether or not the file is there; a connect is outside that model (Node 20), so its
// error tells whether the path exists in the sandbox's file system at all: ENOENT, or ECONNREFUSED for a file
// that is not a socket. With the network off no Unix socket can be made at all, so the connects go through a second
// engine with the network on, whose sandbox mounts the same files. Prints one JSON line.
import { createEngine } from '../../src/engine/index';
import { testStorageDir } from './mcp';
import { connectBody, inNestedWorker, settleInWorker, type Run } from './pyodideProbe';

interface ProbeRequest {
  paths: string[];
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? '{}') as ProbeRequest;
  const engine = createEngine({ storageDir: testStorageDir });
  const online = createEngine({ storageDir: testStorageDir, pyodide: { network: 'on' } });
  try {
    const run: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'runtime-probe' });
    const python = await run('import sys\nprint("Pyodide ran, Python", sys.version_info.major)');
    const nested = (body: string) => settleInWorker(run, inNestedWorker(body));
    const runOnline: Run = (code) => online.run({ code, backend: 'pyodide', session: 'runtime-probe-online' });
    const inside = await nested('return JSON.stringify({ pid: process.pid, execPath: process.execPath })');
    const reads: Record<string, string> = {};
    const connects: Record<string, string> = {};
    for (const file of request.paths) {
      reads[file] = await nested(`return require('node:fs').readFileSync(${JSON.stringify(file)}, 'utf8')`);
      connects[file] = await settleInWorker(runOnline, inNestedWorker(connectBody({ socketPath: file })));
    }
    const result = {
      execPath: process.execPath,
      sandbox: engine.sandbox('pyodide'),
      python: { stdout: python.stdout, diagnostics: python.diagnostics },
      inside,
      reads,
      connects,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await engine.dispose();
    await online.dispose();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
