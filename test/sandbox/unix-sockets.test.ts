// "Network off" means no connection to anything outside the sandbox, Unix sockets included: a project's database
// or app server listening on a socket file in the workspace (or deeper in it), and an abstract socket of the host,
// must not answer code in Pyodide, from the worker's realm or a fresh one. Each server here counts its
// connections; the control (the same server reached from this process, and from the sandbox with the network on)
// shows the attack would be seen if it got through. Runs under bubblewrap and again under Deno.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { testStorageDir } from '../support/mcp';
import { connectBody, inNestedWorker, settleInWorker, type Run } from '../support/pyodideProbe';
import { onlyBubblewrap, sandboxUnderTest, underDeno } from '../support/sandboxUnderTest';

const linux = process.platform === 'linux';
/** bubblewrap's filter refuses the socket itself; Deno refuses the path it would reach. */
const refused = underDeno ? /^ok:err:(Requires (read|write|net) access|.*NotCapable)/ : /^ok:err:.*EPERM/;

interface CountingServer {
  address: string;
  connections: () => number;
  close: () => void;
}

async function countingServer(address: string): Promise<CountingServer> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    // The caller may be gone before the answer is written.
    socket.on('error', () => {});
    socket.end('reached the host\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address, resolve);
  });
  return { address, connections: () => connections, close: () => server.close() };
}

/** The connection this process makes itself: proof the server answers, so a zero count means the sandbox did not. */
function reachable(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(address);
    socket.on('connect', () => (socket.end(), resolve(true)));
    socket.on('error', () => resolve(false));
  });
}

describe('Unix sockets with the network off', { skip: !linux && 'the sockets here are Linux paths' }, () => {
  let engine: Engine;
  let online: Engine;
  let workspace: string;
  const servers: CountingServer[] = [];
  const run: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'unix-sockets' });
  const runOnline: Run = (code) => online.run({ code, backend: 'pyodide', session: 'unix-sockets-online' });

  before(async () => {
    workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-sockets-')));
    fs.mkdirSync(path.join(workspace, 'run', 'postgresql'), { recursive: true });
    servers.push(await countingServer(path.join(workspace, 'app.sock')));
    servers.push(await countingServer(path.join(workspace, 'run', 'postgresql', '.s.PGSQL.5432')));
    servers.push(await countingServer(`\0code-mode-test-${process.pid}`));
    for (const server of servers) assert.equal(await reachable(server.address), true, 'the control: it answers');
    engine = createEngine({
      storageDir: testStorageDir,
      workspaceRoots: [workspace],
      pyodide: { sandbox: sandboxUnderTest, workspaceWritable: true },
    });
    online = createEngine({
      storageDir: testStorageDir,
      workspaceRoots: [workspace],
      pyodide: { sandbox: sandboxUnderTest, network: 'on' },
    });
  });

  after(async () => {
    await engine?.dispose();
    await online?.dispose();
    for (const server of servers) server.close();
    fs.rmSync(workspace, { recursive: true, force: true });
  });

  const hits = () => servers.reduce((sum, server) => sum + server.connections(), 0);

  test('a socket file in the workspace, at its top or deep in it, does not answer a fresh JavaScript realm', async () => {
    const before = hits();
    for (const server of servers.slice(0, 2)) {
      const outcome = await settleInWorker(run, inNestedWorker(connectBody({ socketPath: server.address })));
      assert.match(outcome, refused, server.address);
    }
    assert.equal(hits() - before, 0, 'no server saw a connection');
  });

  test("nor the worker's own realm, through node:net or through Python's socket module", async () => {
    const before = hits();
    const socketPath = JSON.stringify(servers[0]!.address);
    const fromWorker = await settleInWorker(
      run,
      `import('node:net').then((net) => new Promise((resolve, reject) => { const s = net.connect(${socketPath}); s.on('connect', () => { s.destroy(); resolve('connected'); }); s.on('error', reject); }))`,
    );
    assert.doesNotMatch(fromWorker, /connected/);
    const fromPython = await run(
      `import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(${socketPath})\n    print("connected")\nexcept OSError as e:\n    print("refused", type(e).__name__)`,
    );
    assert.doesNotMatch(fromPython.stdout, /connected/);
    assert.equal(hits() - before, 0, 'no server saw a connection');
  });

  test(
    "an abstract socket of the host is out of the sandbox's reach",
    { skip: onlyBubblewrap('Deno has no network namespace; it refuses a Unix socket by its path') },
    async () => {
      const before = hits();
      const outcome = await settleInWorker(run, inNestedWorker(connectBody({ socketPath: servers[2]!.address })));
      assert.match(outcome, /^ok:err:/);
      assert.equal(hits() - before, 0);
    },
  );

  test('a socket created in the workspace by the code cannot serve the host either', async () => {
    const made = path.join(workspace, 'made-inside.sock');
    const outcome = await settleInWorker(
      run,
      inNestedWorker(
        `return await new Promise((resolve, reject) => { process.once('uncaughtException', reject); const srv = require('node:net').createServer(); srv.on('error', reject); srv.listen(${JSON.stringify(made)}, () => resolve('listening')); })`,
      ),
    );
    assert.match(outcome, refused);
    assert.equal(fs.existsSync(made), false);
  });

  test(
    'the control: with the network on, the same socket answers (the count would have seen it)',
    { skip: onlyBubblewrap('Deno grants a Unix socket by path, not by the network setting') },
    async () => {
      const before = hits();
      const outcome = await settleInWorker(runOnline, inNestedWorker(connectBody({ socketPath: servers[0]!.address })));
      assert.equal(outcome, 'ok:ok:connected');
      assert.equal(hits() - before, 1);
    },
  );
});
