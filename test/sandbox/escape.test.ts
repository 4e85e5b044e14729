// The escape suite: every clause of the Pyodide sandbox contract (SECURITY.md, docs/sandbox.md), attacked the way
// hostile code would, from Python's own realm and from a fresh JavaScript realm it creates. Each attack must
// fail with an error Python sees; the server (this process), other processes and other sessions carry on.
// On Linux every case runs (the sandbox is bubblewrap there and `npm test` installs it); nothing is skipped.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as inspector from 'node:inspector';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { codeCacheKeepsImports } from '../../src/engine/backends/pyodide/emscriptenScript';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { testStorageDir } from '../support/mcp';
import { Bystanders } from '../support/bystanders';
import {
  inNestedWorker,
  settleInWorker,
  SPAWN_LOAD_OPEN_ATTEMPTS,
  writeToChannel,
  type Run,
} from '../support/pyodideProbe';
import { expectedMechanism, sandboxUnderTest, underDeno } from '../support/sandboxUnderTest';

const linux = process.platform === 'linux';
/** How each boundary refuses: bubblewrap hides every other process and the host's network; Deno refuses the call itself. */
const signalRefused = underDeno ? /^ok:err:Requires run access/ : /^ok:err:kill ESRCH/;
const connectRefused = underDeno ? /^ok:err:Requires net access/ : /^ok:err:connect (ECONNREFUSED|ENETUNREACH)/;

describe('Pyodide sandbox escape suite', () => {
  let engine: Engine;
  let outside: string;
  let workspace: string;
  let bystanders: Bystanders;
  let web: http.Server;
  let webPort = 0;
  let webHits = 0;
  let inspectorPort = 0;
  const attacker: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'attacker' });
  const bystander: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'bystander' });
  const nested = (body: string) => settleInWorker(attacker, inNestedWorker(body));

  const assertUnharmed = () => bystanders.assertUnharmed();

  before(async () => {
    process.env.CODE_MODE_TEST_SECRET = 'do-not-leak';
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-outside-'));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'host secret');
    workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-workspace-')));
    fs.writeFileSync(path.join(workspace, 'notes.txt'), 'the workspace');
    // Links a person's workspace may hold, leading out of it: to a file, to a folder, and to nothing yet.
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'secret-link.txt'));
    fs.symlinkSync(outside, path.join(workspace, 'outside-link'));
    fs.symlinkSync(path.join(outside, 'not-yet.txt'), path.join(workspace, 'dangling-link.txt'));
    bystanders = new Bystanders(bystander);
    web = http.createServer((_req, res) => {
      webHits++;
      res.end('reached the host');
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    webPort = (web.address() as net.AddressInfo).port;
    // An inspector listening on loopback, as a Node process opens one on SIGUSR1: the target of the chain.
    inspector.open(0, '127.0.0.1', false);
    inspectorPort = Number(new URL(inspector.url()!).port);
    // The network setting named as VS Code names it (src/vscode/settings.ts): the engine names none of its own.
    engine = createEngine({
      storageDir: testStorageDir,
      workspaceRoots: [workspace],
      pyodide: { sandbox: sandboxUnderTest },
      config: { settingNames: { pyodideNetwork: 'setting codeMode.pyodide.network' } },
    });
    await bystanders.settle();
  });

  after(async () => {
    inspector.close();
    web.close();
    bystanders.dispose();
    await engine?.dispose();
    fs.rmSync(outside, { recursive: true, force: true });
    fs.rmSync(workspace, { recursive: true, force: true });
    delete process.env.CODE_MODE_TEST_SECRET;
  });

  test('the boundary on this machine is the one SECURITY.md promises', () => {
    const sandbox = engine.sandbox('pyodide');
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
        const other = await nested(`process.kill(${bystanders.witness.pid}, 'SIGKILL'); return 'killed the witness'`);
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
          `return await new Promise((resolve, reject) => { const s = require('node:net').connect(${inspectorPort}, '127.0.0.1'); s.on('connect', () => resolve('connected to the inspector')); s.on('error', reject); })`,
        );
        assert.match(socket, connectRefused);
        const python = await attacker(
          `import _socket\ns = _socket.socket()\ns.connect(("127.0.0.1", ${inspectorPort}))`,
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
      const fetched = await settleInWorker(attacker, `fetch('http://127.0.0.1:${webPort}/')`);
      assert.match(fetched, /^refused:.*codeMode\.pyodide\.network/);
      const pyfetch = await attacker(
        `import asyncio, js\nfrom pyodide.http import pyfetch\njs.globalThis.pyfetchTask = asyncio.ensure_future(pyfetch("http://127.0.0.1:${webPort}/"))`,
      );
      assert.equal(pyfetch.success, true, JSON.stringify(pyfetch.diagnostics));
      const socket = await attacker(`import socket\nsocket.create_connection(("127.0.0.1", ${webPort}))`);
      assert.match(socket.diagnostics?.message ?? '', /PermissionError: .*codeMode\.pyodide\.network/);
      const resolved = await attacker('import socket\nsocket.getaddrinfo("example.com", 80)');
      assert.match(resolved.diagnostics?.message ?? '', /codeMode\.pyodide\.network/);
      assert.equal(webHits, 0, 'a request reached the host');
    });

    test(
      'a fresh realm gets no network from the operating system either',
      { skip: !linux && !underDeno && 'network isolation needs bubblewrap (Linux) or Deno' },
      async () => {
        const connect = await nested(
          `return await new Promise((resolve, reject) => { const s = require('node:net').connect(${webPort}, '127.0.0.1'); s.on('connect', () => resolve('connected')); s.on('error', reject); })`,
        );
        assert.match(connect, connectRefused);
        const outward = await nested(
          `return await new Promise((resolve, reject) => { const s = require('node:net').connect(80, '1.1.1.1'); s.on('connect', () => resolve('connected')); s.on('error', reject); })`,
        );
        assert.match(outward, underDeno ? connectRefused : /^ok:err:connect ENETUNREACH/);
        const workerFetch = await nested(`return await (await fetch('http://127.0.0.1:${webPort}/')).text()`);
        assert.match(workerFetch, /^ok:err:/);
        const dns = await nested(`return (await require('node:dns').promises.lookup('example.com')).address`);
        assert.match(dns, /^ok:err:/);
        const raw = await attacker(`import _socket\ns = _socket.socket()\ns.connect(("127.0.0.1", ${webPort}))`);
        assert.equal(raw.success, false);
        assert.equal(webHits, 0, 'a request reached the host');
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

  describe('files', () => {
    test('host files outside the allowed folders can be neither read nor written, from either realm', async () => {
      const secret = path.join(outside, 'secret.txt');
      const written = path.join(outside, 'written.txt');
      for (const attempt of [
        await settleInWorker(
          attacker,
          `import('node:fs').then((fs) => fs.readFileSync(${JSON.stringify(secret)}, 'utf8'))`,
        ),
        await nested(`return require('node:fs').readFileSync(${JSON.stringify(secret)}, 'utf8')`),
        await nested(`return require('node:fs').readFileSync('/etc/passwd', 'utf8')`),
        await nested(`return require('node:fs').readdirSync(${JSON.stringify(os.homedir())}).join(',')`),
        await nested(`require('node:fs').writeFileSync(${JSON.stringify(written)}, 'x'); return 'written'`),
      ]) {
        assert.doesNotMatch(attempt, /host secret|root:|^ok:ok:|^ok:(?!err)/, attempt);
      }
      assert.equal(fs.existsSync(written), false);
      const python = await attacker(`print(open(${JSON.stringify(secret)}).read())`);
      assert.match(python.diagnostics?.message ?? '', /FileNotFoundError/);
      await assertUnharmed();
    });

    test('symbolic links in the workspace that lead out of it lead nowhere, from either realm', async () => {
      const links = ['secret-link.txt', path.join('outside-link', 'secret.txt')].map((name) =>
        path.join(workspace, name),
      );
      for (const link of links) {
        const python = await attacker(`print(open(${JSON.stringify(link)}).read())`);
        assert.equal(python.success, false, `Python read ${link}: ${python.stdout}`);
        const fresh = await nested(`return require('node:fs').readFileSync(${JSON.stringify(link)}, 'utf8')`);
        assert.match(fresh, /^ok:err:/, `a fresh realm read ${link}: ${fresh}`);
      }
      const dangling = await nested(
        `require('node:fs').writeFileSync(${JSON.stringify(path.join(workspace, 'dangling-link.txt'))}, 'x'); return 'created'`,
      );
      assert.match(dangling, /^ok:err:/);
      assert.equal(
        fs.existsSync(path.join(outside, 'not-yet.txt')),
        false,
        'a write through a link created a file outside',
      );
      await assertUnharmed();
    });

    test("the workspace can be read but not changed, even from a fresh realm that skips Pyodide's file layer", async () => {
      const notes = path.join(workspace, 'notes.txt');
      assert.equal((await attacker(`print(open(${JSON.stringify(notes)}).read())`)).stdout, 'the workspace\n');
      for (const attempt of [
        await nested(`require('node:fs').writeFileSync(${JSON.stringify(notes)}, 'changed'); return 'changed'`),
        await nested(
          `require('node:fs').writeFileSync(${JSON.stringify(path.join(workspace, 'dropped.txt'))}, 'x'); return 'dropped'`,
        ),
        await settleInWorker(attacker, `import('node:fs').then((fs) => fs.unlinkSync(${JSON.stringify(notes)}))`),
      ]) {
        assert.doesNotMatch(attempt, /^ok:ok:|^ok:(?!err)/, attempt);
      }
      assert.equal(fs.readFileSync(notes, 'utf8'), 'the workspace');
      assert.equal(fs.existsSync(path.join(workspace, 'dropped.txt')), false);
    });

    test('the snapshot and code cache other sessions start from cannot be changed', async () => {
      const cacheDir = fs.realpathSync(path.join(testStorageDir, 'pyodide-cache'));
      // Each runtime keeps its own snapshot (snapshotCache.ts): the one this engine's sessions start from. Where the
      // runtime can use one (emscriptenScript.ts), V8's code cache of Pyodide's script is loaded the same way.
      const names = fs.readdirSync(cacheDir);
      const snapshot = names.find(
        (name) => name.endsWith('.snapshot') && name.endsWith('.deno.snapshot') === underDeno,
      );
      assert.ok(snapshot, 'no snapshot was cached');
      const codeCache = names.find((name) => name.endsWith('.codecache'));
      assert.equal(codeCache !== undefined, !underDeno && (await codeCacheKeepsImports()), `code cache: ${codeCache}`);
      for (const file of [snapshot, ...(codeCache ? [codeCache] : [])].map((name) => path.join(cacheDir, name))) {
        const digest = () => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
        const before = digest();
        for (const attempt of [
          await nested(`require('node:fs').writeFileSync(${JSON.stringify(file)}, 'poison'); return 'overwritten'`),
          await nested(
            `require('node:fs').appendFileSync(${JSON.stringify(`${file}.sha256`)}, 'x'); return 'appended'`,
          ),
          await nested(`require('node:fs').rmSync(${JSON.stringify(file)}); return 'removed'`),
          await settleInWorker(
            attacker,
            `import('node:fs').then((fs) => fs.writeFileSync(${JSON.stringify(file)}, 'poison'))`,
          ),
        ]) {
          assert.doesNotMatch(attempt, /^ok:ok:|^ok:(?!err)/, attempt);
        }
        assert.equal(digest(), before, file);
      }
      const fresh = await engine.run({ code: 'print(1 + 1)', backend: 'pyodide', session: 'after-snapshot-attack' });
      assert.equal(fresh.stdout, '2\n');
      await engine.resetSession('after-snapshot-attack', 'pyodide');
    });
  });

  describe('Node built-ins that spawn, load or open', () => {
    for (const [name, body] of Object.entries(SPAWN_LOAD_OPEN_ATTEMPTS)) {
      test(`${name} is refused in a nested worker`, async () => {
        const outcome = await nested(body);
        assert.match(outcome, /^ok:err:/, `${name} was not refused: ${outcome}`);
      });
    }
    test("a worker cannot be given execArgv, which would start it without Node's permission model", async () => {
      for (const execArgv of ['[]', "['--no-warnings']", "['--allow-fs-write=/']"]) {
        const outcome = await nested(
          `return await new Promise((resolve, reject) => { const w = new (require('node:worker_threads').Worker)("require('node:worker_threads').parentPort.postMessage(typeof process.permission)", { eval: true, execArgv: ${execArgv} }); w.on('message', resolve); w.on('error', reject); })`,
        );
        assert.match(outcome, /^ok:err:.*execArgv/, `a worker with execArgv ${execArgv} started: ${outcome}`);
      }
      const fromPython = await settleInWorker(
        attacker,
        `import('node:worker_threads').then((wt) => { new wt.Worker('1', { eval: true, execArgv: [] }); return 'started'; })`,
      );
      assert.match(fromPython, /^refused:.*execArgv/);
    });

    test("workers started from workers, however deep, keep the process's permission model", async () => {
      // Node's model shows as process.permission; Deno's as run access never granted, in every realm.
      const model = `(typeof Deno === 'object' ? 'run ' + Deno.permissions.querySync({ name: 'run' }).state : typeof process.permission)`;
      const grandchild = `new Promise((resolve, reject) => { const w = new (require('node:worker_threads').Worker)(${JSON.stringify(`const { parentPort, Worker } = require('node:worker_threads'); try { new Worker('1', { eval: true, execArgv: [] }); parentPort.postMessage('great-grandchild started') } catch (e) { parentPort.postMessage(`)} + ${JSON.stringify(model)} + " + ' ' + e.code) }", { eval: true }); w.on('message', resolve); w.on('error', reject); })`;
      const outcome = await nested(`return ${model} + ' / ' + (await ${grandchild})`);
      assert.equal(
        outcome,
        underDeno ? 'ok:ok:run prompt / run prompt ERR_ACCESS_DENIED' : 'ok:ok:object / object ERR_ACCESS_DENIED',
      );
    });

    test('after all of that, the server and the other session are unharmed', assertUnharmed);
  });

  describe(
    "Deno's own API, reachable from Python as js.Deno",
    { skip: !underDeno && 'the host runs under Node here: there is no Deno API' },
    () => {
      const denoAttempts: Record<string, string> = {
        'Deno.Command': `return new Deno.Command('/usr/bin/id').outputSync().code`,
        'Deno.kill of the server': `Deno.kill(${process.pid}, 'SIGKILL'); return 'killed'`,
        'Deno.dlopen': `return String(Deno.dlopen('/usr/lib/x86_64-linux-gnu/libc.so.6', {}))`,
        'Deno.env': `return JSON.stringify(Deno.env.toObject())`,
        'Deno.connect': `return String(await Deno.connect({ hostname: '127.0.0.1', port: 9 }))`,
        'Deno.listen': `return String(Deno.listen({ port: 0 }).addr.port)`,
        'Deno.systemMemoryInfo': `return JSON.stringify(Deno.systemMemoryInfo())`,
        'Deno.readTextFile outside': `return await Deno.readTextFile('/etc/passwd')`,
        'Deno.writeTextFile in the workspace': `await Deno.writeTextFile(${JSON.stringify(path.join(os.tmpdir(), 'code-mode-deno-probe'))}, 'x'); return 'written'`,
        'Deno.symlink to outside': `Deno.symlinkSync('/etc/passwd', Deno.makeTempDirSync() + '/link'); return 'linked'`,
        'a remote module': `return String(await import('https://deno.land/std/version.ts'))`,
        'an npm module': `return String(await import('npm:left-pad'))`,
        'a web Worker asking for more permissions': `return await new Promise((resolve, reject) => { const w = new Worker('data:text/javascript,postMessage(1)', { type: 'module', deno: { permissions: { run: true } } }); w.onmessage = () => resolve('started'); w.onerror = (e) => { e.preventDefault(); reject(new Error(e.message)); }; })`,
      };
      for (const [name, body] of Object.entries(denoAttempts)) {
        test(`${name} is refused in a nested worker`, async () => {
          const outcome = await nested(body);
          // Asking a worker for permissions is an unstable option Deno answers by ending the process: the session resets.
          assert.match(
            outcome,
            /^ok:err:|^reset:[\s\S]*--unstable-worker-options/,
            `${name} was not refused: ${outcome}`,
          );
        });
      }
      test('Deno.Command from Python itself is refused', async () => {
        const python = await attacker('import js\njs.Deno.Command.new("/usr/bin/id").outputSync()');
        assert.match(python.diagnostics?.message ?? '', /Requires run access/);
        await assertUnharmed();
      });
    },
  );

  describe('the channel to the server', () => {
    test('garbage written to the host channel ends that session, announced, and nothing else', async () => {
      const outcome = await nested(
        `${writeToChannel('Buffer.from([0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8])')}; await new Promise(() => undefined); return 'still alive'`,
      );
      assert.match(outcome, /^reset:.*malformed message from the Pyodide process/);
      const next = await attacker('print("fresh")');
      assert.equal(next.stdout, 'fresh\n');
      await assertUnharmed();
    });

    test('a forged message of the right shape but impossible content is refused the same way', async () => {
      const forged = JSON.stringify({
        type: 'ready',
        pyodideVersion: 'x'.repeat(5000),
        pythonVersion: '3',
        fromSnapshot: true,
        loadMs: 1,
      });
      const outcome = await nested(
        `const body = Buffer.from(${JSON.stringify(forged)}); const head = Buffer.alloc(4); head.writeUInt32BE(body.length); ${writeToChannel('Buffer.concat([head, body])')}; await new Promise(() => undefined); return 'still alive'`,
      );
      assert.match(outcome, /^reset:.*malformed message from the Pyodide process: pyodideVersion/);
      await assertUnharmed();
    });

    test('a forged result for a run that is not running ends that session, announced, and nothing else', async () => {
      const forged = JSON.stringify({
        type: 'result',
        runId: 'not-a-run',
        outcome: { status: 'ok' },
        output: [{ stream: 'stdout', text: 'forged' }],
      });
      const sent = await nested(
        `const body = Buffer.from(${JSON.stringify(forged)}); const head = Buffer.alloc(4); head.writeUInt32BE(body.length); ${writeToChannel('Buffer.concat([head, body])')}; return 'sent'`,
      );
      // The server answers only for the run it started (host-trust.test.ts has the variants).
      assert.match(sent, /^reset:.*the Pyodide process sent a 'result' message for run "not-a-run"/);
      const next = await attacker('print("real")');
      assert.equal(next.stdout, 'real\n');
      await assertUnharmed();
    });

    test('scribbling over the output ring resets only this session, and says so', async () => {
      const scribble = await attacker(
        `import js\njs.eval("import('node:worker_threads').then((wt) => new Uint8Array(wt.workerData.outputRing).fill(255))")\nprint("scribbled")`,
      );
      const next = scribble.session_reset ? scribble : await attacker('print("after")');
      if (next.success && !next.session_reset) assert.equal(next.stdout, 'after\n');
      else assert.equal(next.session_reset, true, JSON.stringify(next));
      const again = await attacker('print("works")');
      assert.equal(again.stdout, 'works\n');
      await assertUnharmed();
    });
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
