// The Pyodide sandbox of the engine the extension builds (EngineService, backends.ts), inside a real VS Code's
// extension host: the boundary is reported complete, and the escape suite's core attacks (test/sandbox/escape.test.ts)
// fail here too. The extension host is this process: its pid, a port it opens and its files are the targets.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Engine } from '../../../src/engine/engine';
import { codeCacheKeepsImports } from '../../../src/engine/backends/pyodide/emscriptenScript';
import { minimalEnvironment } from '../../../src/engine/sandbox/nodePermission';
import type { CodeModeTestApi } from '../../../src/vscode/testApi';
import { api } from '../extensionApi';
import { Bystanders } from '../../support/bystanders';
import {
  connectBody,
  inNestedWorker,
  settleInWorker,
  SPAWN_LOAD_OPEN_ATTEMPTS,
  type Run,
} from '../../support/pyodideProbe';

const EXTENSION_ID = 'code-mode.code-mode-python';

describe("The extension's Pyodide sandbox in the extension host", function () {
  // Each probe is a few runs and a fresh worker; the first run may make the memory snapshot.
  this.timeout(180_000);

  let codeMode: CodeModeTestApi;
  let engine: Engine;
  let workspace: string;
  let outside: string;
  let bystanders: Bystanders;
  let web: http.Server;
  let webPort = 0;
  let webHits = 0;
  const attacker: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'vscode-attacker' });
  const bystander: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'vscode-bystander' });
  const nested = (body: string) => settleInWorker(attacker, inNestedWorker(body));

  const assertUnharmed = () => bystanders.assertUnharmed();

  before(async () => {
    codeMode = await api();
    engine = await codeMode.container.engine.get();
    workspace = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    process.env.CODE_MODE_TEST_SECRET = 'do-not-leak';
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-outside-'));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'host secret');
    bystanders = new Bystanders(bystander);
    web = http.createServer((_req, res) => {
      webHits++;
      res.end('reached the extension host');
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    webPort = (web.address() as AddressInfo).port;
    await bystanders.settle();
    console.log(
      `[sandbox] extension host: pid ${process.pid}, runtime ${fs.realpathSync(process.execPath)} (Node ${process.version}${process.versions.electron ? `, Electron ${process.versions.electron}` : ''})`,
    );
    console.log(`[sandbox] workspace ${fs.realpathSync(workspace)}, temporary folder ${os.tmpdir()}`);
  });

  after(async () => {
    web?.close();
    bystanders?.dispose();
    await engine?.resetSession('vscode-attacker', 'pyodide');
    await engine?.resetSession('vscode-bystander', 'pyodide');
    if (outside) fs.rmSync(outside, { recursive: true, force: true });
    delete process.env.CODE_MODE_TEST_SECRET;
  });

  it('is complete: bubblewrap, no gaps, in the engine and in what the environment tool tells agents', async () => {
    // run.mjs puts the runtime in its temporary folder, under /tmp, where bubblewrap's fresh /tmp once hid it.
    const placed = process.env.CODE_MODE_TEST_NODE;
    if (placed)
      assert.equal(
        fs.realpathSync(process.execPath),
        fs.realpathSync(placed),
        'the extension host runs on the Node run.mjs placed',
      );
    const expected = { mechanism: 'bubblewrap', complete: true, network: 'off', gaps: [] };
    assert.deepEqual(engine.sandbox('pyodide'), expected);
    const client = await codeMode.container.mcp.localClient();
    const environment = (await client.callTool('environment', {})).structuredContent as {
      backends: { pyodide: { sandbox: unknown } };
    };
    assert.deepEqual(environment.backends.pyodide.sandbox, expected);
  });

  it("runs the session's Pyodide under bubblewrap with the extension host's own runtime", async () => {
    const inside = await nested(`return JSON.stringify({ pid: process.pid, execPath: process.execPath })`);
    const seen = JSON.parse(inside.replace(/^ok:ok:/, '')) as { pid: number; execPath: string };
    // bwrap is pid 1 of the sandbox's PID namespace, the confined runtime pid 2.
    assert.equal(seen.pid, 2, inside);
    assert.equal(seen.execPath, fs.realpathSync(process.execPath));
    const session = engine.describeSessions().find((s) => s.name === 'vscode-attacker' && s.backend === 'pyodide');
    assert.ok(session?.info.pid, 'the session has a process');
    assert.equal(
      path.basename(fs.readlinkSync(`/proc/${session.info.pid}/exe`)),
      'bwrap',
      'the process the engine started is bwrap',
    );
  });

  it('a nested worker cannot see or signal the extension host or any other process', async () => {
    assert.match(
      await nested(`process.kill(${process.pid}, 0); return 'the extension host is visible'`),
      /^ok:err:kill ESRCH/,
    );
    assert.match(
      await nested(`process.kill(${process.ppid}, 'SIGKILL'); return 'killed the server'`),
      /^ok:err:kill ESRCH/,
    );
    assert.match(
      await nested(`process.kill(${bystanders.witness.pid}, 'SIGKILL'); return 'killed the witness'`),
      /^ok:err:kill ESRCH/,
    );
    await assertUnharmed();
  });

  it('cannot reach a loopback port the extension host opened, nor its MCP socket', async () => {
    assert.match(await nested(connectBody({ port: webPort })), /^ok:err:connect (ECONNREFUSED|ENETUNREACH)/);
    assert.match(await nested(`return await (await fetch('http://127.0.0.1:${webPort}/')).text()`), /^ok:err:/);
    const python = await attacker(`import socket\nsocket.create_connection(("127.0.0.1", ${webPort}))`);
    assert.equal(python.success, false);
    assert.equal(webHits, 0, 'a request reached the extension host');
    // A Unix socket is not in the network namespace: with the network off the sandbox cannot make one at all (the
    // seccomp filter), and the MCP socket's folder is not in its files either (the CLI's runtime-location suite).
    const mcp = await codeMode.container.mcp.loopback();
    if (mcp.socketPath)
      assert.match(await nested(connectBody({ socketPath: mcp.socketPath })), /^ok:err:connect EPERM/);
    await assertUnharmed();
  });

  it('cannot read files outside the allowed folders: the host, the extension, VS Code', async () => {
    const secret = path.join(outside, 'secret.txt');
    const extensionPath = vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath;
    // The test host's Node package has its headers beside bin/ (setup.mjs); a desktop VS Code has none.
    const headers = path.join(
      path.dirname(path.dirname(fs.realpathSync(process.execPath))),
      'include',
      'node',
      'node.h',
    );
    for (const file of [
      secret,
      path.join(extensionPath, 'package.json'),
      '/etc/passwd',
      ...(fs.existsSync(headers) ? [headers] : []),
    ]) {
      assert.ok(fs.existsSync(file), `${file} is there outside the sandbox`);
      const attempt = await nested(`return require('node:fs').readFileSync(${JSON.stringify(file)}, 'utf8')`);
      assert.match(attempt, /^ok:err:/, `${file}: ${attempt.slice(0, 200)}`);
      // That they are not even in the sandbox's files is shown by a connect, which Node's permission model does
      // not cover, in the CLI's runtime-location suite (an engine with the network on, the same mounts): with the
      // network off, as here, no Unix socket can be made to ask with.
    }
    const listing = await nested(`return require('node:fs').readdirSync(${JSON.stringify(os.homedir())}).join(',')`);
    assert.match(listing, /^ok:err:/, listing.slice(0, 200));
    const python = await attacker(`print(open(${JSON.stringify(secret)}).read())`);
    assert.match(python.diagnostics?.message ?? '', /FileNotFoundError/);
    await assertUnharmed();
  });

  it('can read the workspace but not change it while codeMode.pyodide.workspaceWrite is off', async () => {
    assert.equal(vscode.workspace.getConfiguration('codeMode').get('pyodide.workspaceWrite'), false);
    const hello = fs.realpathSync(path.join(workspace, 'hello.py'));
    const original = fs.readFileSync(hello, 'utf8');
    const dropped = path.join(path.dirname(hello), 'dropped.txt');
    assert.equal((await attacker(`print(open(${JSON.stringify(hello)}).read(), end="")`)).stdout, original);
    for (const attempt of [
      await nested(`require('node:fs').writeFileSync(${JSON.stringify(hello)}, 'changed'); return 'changed'`),
      await nested(`require('node:fs').writeFileSync(${JSON.stringify(dropped)}, 'x'); return 'dropped'`),
      await nested(`require('node:fs').unlinkSync(${JSON.stringify(hello)}); return 'removed'`),
    ]) {
      assert.match(attempt, /^ok:err:/, attempt);
    }
    const python = await attacker(`open(${JSON.stringify(hello)}, "w").write("changed")`);
    assert.equal(python.success, false, 'Python wrote the workspace');
    assert.equal(fs.readFileSync(hello, 'utf8'), original);
    assert.equal(fs.existsSync(dropped), false);
    await assertUnharmed();
  });

  it("the extension host's environment variables never reach Python", async () => {
    assert.ok(
      Object.keys(process.env).some((name) => name.startsWith('VSCODE_')),
      'the extension host has VS Code variables to leak',
    );
    // Only what the runtime itself needs: nothing under Node, ELECTRON_RUN_AS_NODE under Electron.
    const needed = Object.keys(minimalEnvironment());
    const result = await attacker(
      'import js, os\nprint(os.environ.get("CODE_MODE_TEST_SECRET"), getattr(js.process.env, "CODE_MODE_TEST_SECRET", None), list(js.Object.keys(js.process.env)))',
    );
    assert.equal(result.stdout, `None None [${needed.map((name) => `'${name}'`).join(', ')}]\n`);
    assert.equal(
      await nested(`return Object.keys(process.env).join(',') || 'none'`),
      `ok:ok:${needed.join(',') || 'none'}`,
    );
  });

  for (const [name, body] of Object.entries(SPAWN_LOAD_OPEN_ATTEMPTS)) {
    it(`${name} is refused in a nested worker`, async () => {
      const outcome = await nested(body);
      assert.match(outcome, /^ok:err:/, `${name} was not refused: ${outcome}`);
    });
  }

  it("cannot change the memory snapshot or V8's code cache that other sessions start from", async () => {
    const session = engine.describeSessions().find((s) => s.name === 'vscode-attacker' && s.backend === 'pyodide');
    assert.ok(session?.info.pid, 'the session has a process');
    // The host's configuration is its last argument (hostLaunch.ts): the cache its sessions load from is there.
    const args = fs.readFileSync(`/proc/${session.info.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const { cacheDir } = JSON.parse(args[args.length - 1]!) as { cacheDir: string };
    const names = fs.readdirSync(cacheDir);
    const files = names.filter((name) => /\.(snapshot|codecache)$/.test(name)).map((name) => path.join(cacheDir, name));
    assert.ok(
      files.some((file) => file.endsWith('.snapshot')),
      names.join(', '),
    );
    // Where this runtime can read Pyodide's script from V8's code cache (emscriptenScript.ts), sessions do.
    const codeCaching = await codeCacheKeepsImports();
    assert.equal(
      files.some((file) => file.endsWith('.codecache')),
      codeCaching,
      names.join(', '),
    );
    for (const file of files) {
      const before = fs.readFileSync(file);
      for (const body of [
        `require('node:fs').writeFileSync(${JSON.stringify(file)}, 'poison'); return 'overwritten'`,
        `require('node:fs').writeFileSync(${JSON.stringify(`${file}.sha256`)}, 'poison'); return 'rehashed'`,
        `require('node:fs').rmSync(${JSON.stringify(file)}); return 'removed'`,
      ]) {
        const attempt = await nested(body);
        assert.match(attempt, /^ok:err:/, `${file}: ${attempt.slice(0, 200)}`);
      }
      assert.ok(fs.readFileSync(file).equals(before), `${file} changed`);
    }
    const fresh: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'vscode-after-cache-attack' });
    assert.equal((await fresh('print(1 + 1)')).stdout, '2\n');
    // A session whose Pyodide came from the code cache still imports from JavaScript, as any other does.
    assert.equal(await settleInWorker(fresh, "import('node:path').then((m) => typeof m.join)"), 'ok:function');
    await engine.resetSession('vscode-after-cache-attack', 'pyodide');
    await assertUnharmed();
  });

  it('after all of that, the extension host, its engine and the other session are unharmed', async () => {
    await assertUnharmed();
    const next = await attacker('print("still serving")');
    assert.equal(next.stdout, 'still serving\n');
    assert.deepEqual(engine.sandbox('pyodide')?.complete, true);
  });
});
