// The escape suite: every clause of the Pyodide sandbox contract (SECURITY.md, docs/sandbox.md), attacked the way
// hostile code would, from Python's own realm and from a fresh JavaScript realm it creates. Each attack must
// fail with an error Python sees; the server (this process), other processes and other sessions carry on.
// This part: the boundary reported, processes and signals, the network, the environment. The others: files
// (escape-files), Node's and Deno's APIs that spawn, load or open (escape-runtime-apis), the channel to the server
// (escape-channel); test/support/escapeTarget.ts sets up the host they all attack.
// On Linux every case runs (the sandbox is bubblewrap there and `npm test` installs it); nothing is skipped.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import { connectRefused, escapeTarget, linux, signalRefused } from '../support/escapeTarget';
import { settleInWorker } from '../support/pyodideProbe';
import { expectedMechanism, sandboxUnderTest, underDeno } from '../support/sandboxUnderTest';

describe('Pyodide sandbox escape suite', () => {
  const host = escapeTarget();
  const { attacker, nested, assertUnharmed } = host;

  test('the boundary on this machine is the one SECURITY.md promises', () => {
    const sandbox = host.engine.sandbox('pyodide');
    assert.ok(sandbox, 'the environment tool has no sandbox report');
    if (expectedMechanism) {
      assert.equal(
        sandbox.mechanism,
        expectedMechanism,
        `not the sandbox asked for (${sandboxUnderTest}): ${sandbox.gaps.join('; ')}`,
      );
      assert.equal(sandbox.complete, true);
    } else {
      assert.equal(sandbox.complete, false, 'a platform without an OS sandbox must not claim a complete one');
      assert.ok(sandbox.gaps.length > 0);
    }
    assert.equal(sandbox.network, 'off');
  });

  describe(
    'processes and signals',
    { skip: !linux && !underDeno && 'signals are bounded only by the OS sandbox (Linux) or Deno' },
    () => {
      test('a nested worker cannot see or signal the server or any other process', async () => {
        const server = await nested(`process.kill(${process.pid}, 0); return 'the server is visible'`);
        assert.match(server, signalRefused);
        const other = await nested(
          `process.kill(${host.bystanders.witness.pid}, 'SIGKILL'); return 'killed the witness'`,
        );
        assert.match(other, signalRefused);
        if (underDeno) {
          // Deno lets a process signal itself only: not its process group, which it shares with the server.
          for (const pid of [0, -1, -process.pid])
            assert.match(await nested(`process.kill(${pid}, 'SIGKILL'); return 'signalled ${pid}'`), signalRefused);
        }
        await assertUnharmed();
      });

      test('SIGUSR1 cannot reach the server, so its inspector never opens', async () => {
        const outcome = await nested(`process.kill(${process.pid}, 'SIGUSR1'); return 'signalled'`);
        assert.match(outcome, signalRefused);
        await assertUnharmed();
      });

      test('the inspector chain: an inspector listening on the host is out of reach', async () => {
        const socket = await nested(
          `return await new Promise((resolve, reject) => { const s = require('node:net').connect(${host.inspectorPort}, '127.0.0.1'); s.on('connect', () => resolve('connected to the inspector')); s.on('error', reject); })`,
        );
        assert.match(socket, connectRefused);
        const python = await attacker(
          `import _socket\ns = _socket.socket()\ns.connect(("127.0.0.1", ${host.inspectorPort}))`,
        );
        assert.equal(python.success, false);
        assert.match(python.diagnostics?.message ?? '', /Error/);
        await assertUnharmed();
      });

      test("Python's own realm has no process.kill, and killing its own sandbox only resets its session", async () => {
        const refused = await attacker('import js\njs.process.kill(js.process.ppid, 9)');
        assert.match(refused.diagnostics?.message ?? '', /process\.kill is not available/);
        const killed = await nested(`process.kill(process.pid, 'SIGKILL'); return 'killed myself'`);
        // bubblewrap reports its child's death as its own exit status; Deno, which lets a process signal only itself, dies of the signal.
        assert.match(
          killed,
          /^reset:.*the Pyodide process (exited with code 137|was killed \(SIGKILL\))/,
          'the lost state was not announced',
        );
        const next = await attacker('print("fresh")');
        assert.equal(next.stdout, 'fresh\n');
        await assertUnharmed();
      });
    },
  );

  describe('network', () => {
    test('fetch, pyodide.http and sockets are refused with an error naming the setting', async () => {
      const fetched = await settleInWorker(attacker, `fetch('http://127.0.0.1:${host.webPort}/')`);
      assert.match(fetched, /^refused:.*codeMode\.pyodide\.network/);
      const pyfetch = await attacker(
        `import asyncio, js\nfrom pyodide.http import pyfetch\njs.globalThis.pyfetchTask = asyncio.ensure_future(pyfetch("http://127.0.0.1:${host.webPort}/"))`,
      );
      assert.equal(pyfetch.success, true, JSON.stringify(pyfetch.diagnostics));
      const socket = await attacker(`import socket\nsocket.create_connection(("127.0.0.1", ${host.webPort}))`);
      assert.match(socket.diagnostics?.message ?? '', /PermissionError: .*codeMode\.pyodide\.network/);
      const resolved = await attacker('import socket\nsocket.getaddrinfo("example.com", 80)');
      assert.match(resolved.diagnostics?.message ?? '', /codeMode\.pyodide\.network/);
      assert.equal(host.webHits, 0, 'a request reached the host');
    });

    test(
      'a fresh realm gets no network from the operating system either',
      { skip: !linux && !underDeno && 'network isolation needs bubblewrap (Linux) or Deno' },
      async () => {
        const connect = await nested(
          `return await new Promise((resolve, reject) => { const s = require('node:net').connect(${host.webPort}, '127.0.0.1'); s.on('connect', () => resolve('connected')); s.on('error', reject); })`,
        );
        assert.match(connect, connectRefused);
        const outward = await nested(
          `return await new Promise((resolve, reject) => { const s = require('node:net').connect(80, '1.1.1.1'); s.on('connect', () => resolve('connected')); s.on('error', reject); })`,
        );
        assert.match(outward, underDeno ? connectRefused : /^ok:err:connect ENETUNREACH/);
        const workerFetch = await nested(`return await (await fetch('http://127.0.0.1:${host.webPort}/')).text()`);
        assert.match(workerFetch, /^ok:err:/);
        const dns = await nested(`return (await require('node:dns').promises.lookup('example.com')).address`);
        assert.match(dns, /^ok:err:/);
        const raw = await attacker(`import _socket\ns = _socket.socket()\ns.connect(("127.0.0.1", ${host.webPort}))`);
        assert.equal(raw.success, false);
        assert.equal(host.webHits, 0, 'a request reached the host');
        await assertUnharmed();
      },
    );

    test(
      'a port opened inside the sandbox is not a port on the host',
      { skip: !linux && !underDeno && 'network isolation needs bubblewrap (Linux) or Deno' },
      async () => {
        const listening = await nested(
          // Deno refuses from a later tick, as an uncaught error (which would end the process): caught here too.
          `return await new Promise((resolve, reject) => { process.once('uncaughtException', reject); const srv = require('node:net').createServer(); srv.on('error', reject); srv.listen(0, '127.0.0.1', () => resolve(srv.address().port)); })`,
        );
        if (underDeno) {
          // Deno refuses to listen at all without --allow-net: there is no port to reach.
          assert.match(listening, /^ok:err:Requires net access/);
          return;
        }
        const port = Number(/^ok:ok:(\d+)$/.exec(listening)?.[1]);
        assert.ok(port > 0, listening);
        const reached = await new Promise<boolean>((resolve) => {
          const socket = net.connect(port, '127.0.0.1');
          socket.on('connect', () => (socket.destroy(), resolve(true)));
          socket.on('error', () => resolve(false));
        });
        assert.equal(reached, false, 'the host reached a port opened in the sandbox');
      },
    );
  });

  test("the host's environment variables never reach Python", async () => {
    if (underDeno) {
      // Deno hands the process no environment access at all: reading it is refused, from either realm.
      const python = await attacker(
        'import js, os\nprint(os.environ.get("CODE_MODE_TEST_SECRET"))\nprint(list(js.Object.keys(js.process.env)))',
      );
      assert.equal(python.stdout, 'None\n');
      assert.match(python.diagnostics?.message ?? '', /Requires env access/);
      assert.match(await nested(`return Object.keys(process.env).join(',') || 'none'`), /^ok:err:Requires env access/);
      return;
    }
    const result = await attacker(
      'import js, os\nprint(os.environ.get("CODE_MODE_TEST_SECRET"), getattr(js.process.env, "CODE_MODE_TEST_SECRET", None), list(js.Object.keys(js.process.env)))',
    );
    assert.equal(result.stdout, 'None None []\n');
    const nestedEnv = await nested(`return Object.keys(process.env).join(',') || 'none'`);
    assert.equal(nestedEnv, 'ok:ok:none');
  });
});
