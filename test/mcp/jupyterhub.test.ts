// The jupyter backend through a real MCP client against a real JupyterHub (test/support/jupyterhub.ts): the
// user's server reached at /user/NAME/ through the hub's proxy with the user's API token, as a person would.
// What a hub does that a plain Jupyter Server does not: it stops (culls) and restarts the user's server, answers
// for a server that is not running, and runs the kernel as another Unix user than this process.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PackagesResult } from '../../src/engine/types';
import { HUB_USER, startTestHub, type TestHub } from '../support/jupyterhub';
import { jupyterPython } from '../support/jupyter';
import { connectStdio, runPython, type StdioConnection } from '../support/mcp';
import { checkPng } from '../support/pythonPng';
import { startWebSocketTap } from '../support/webSocketTap';
import { buildWheel } from '../support/wheel';

/** Long enough that a run which waits for it fails the test's own assertions, not the test runner. */
const LIMIT_S = 60;

describe('the jupyter backend on a JupyterHub', () => {
  let hub: TestHub;
  let conn: StdioConnection;
  /** A connection is its own MCP server (the CLI) on the hub, with these arguments. */
  const connect = (args: string[] = []) =>
    connectStdio(['--backend', 'jupyter', '--jupyter-url', hub.userUrl, ...args], {
      CODE_MODE_JUPYTER_TOKEN: hub.token,
    });
  const run = (code: string, extra: Record<string, unknown> = {}) =>
    runPython(conn.client, { code, backend: 'jupyter', timeout_s: LIMIT_S, ...extra });
  const packages = async (action: 'install' | 'check', list: string[]) =>
    (
      (await conn.client.callTool(
        { name: 'packages', arguments: { action, backend: 'jupyter', packages: list } },
        undefined,
        { timeout: 300_000 },
      )) as CallToolResult
    ).structuredContent as unknown as PackagesResult;
  const goneMessage = () =>
    new RegExp(
      `the Jupyter server at ${hub.userUrl.replace(/[.]/g, '\\.')} stopped; the kernel and its variables are gone`,
    );

  before(async () => {
    hub = await startTestHub();
    await hub.startServer();
    // A kernel spec of the hub user's own: Debian's Python with pip allowed past its PEP 668 marker, which stands
    // for the usual hub image whose interpreter belongs to root and is not marked: pip then installs into the
    // user's site folder, which did not exist when the kernel started.
    const spec = path.join(hub.home, '.local', 'share', 'jupyter', 'kernels', 'rootpython');
    fs.mkdirSync(spec, { recursive: true });
    fs.writeFileSync(
      path.join(spec, 'kernel.json'),
      JSON.stringify({
        argv: [jupyterPython, '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
        display_name: 'root-owned Python',
        language: 'python',
        env: { PIP_BREAK_SYSTEM_PACKAGES: '1' },
      }),
    );
    for (let dir = spec; dir !== hub.home; dir = path.dirname(dir)) fs.chownSync(dir, hub.uid, hub.gid);
    fs.chownSync(path.join(spec, 'kernel.json'), hub.uid, hub.gid);
    // The hub user may enter it (a workspace folder it may not enter has a test of its own).
    const workspace = fs.mkdtempSync(path.join(hub.dir, 'workspace-'));
    fs.chmodSync(workspace, 0o755);
    conn = await connect(['--workspace', workspace]);
  });
  after(async () => {
    await conn?.close();
    await hub?.stop();
  });

  test("a workspace folder the kernel's user may not enter: the kernel starts in its own folder and says so once", async () => {
    const privateWorkspace = fs.mkdtempSync(path.join(hub.dir, 'private-'));
    fs.chmodSync(privateWorkspace, 0o700);
    const other = await connect(['--workspace', privateWorkspace]);
    const run = (code: string) =>
      runPython(other.client, { code, backend: 'jupyter', timeout_s: LIMIT_S }).then((call) => call.result);
    try {
      const first = await run('import os\nprint(os.getcwd())');
      assert.equal(first.success, true, JSON.stringify(first.diagnostics));
      assert.equal(first.stdout, `${hub.home}\n`);
      assert.ok(
        first.stderr.includes(`the workspace folder ${privateWorkspace} is not usable by the kernel`),
        first.stderr,
      );
      assert.ok(first.stderr.includes(`it runs in its own folder ${hub.home}`), first.stderr);
      const second = await run('print(1)');
      assert.equal(second.stderr, '', 'said once');
    } finally {
      await other.close();
    }
  });

  test('figures of matplotlib.use("Agg") come back as PNG displays, as on the other backends', async () => {
    const { result } = await run(
      'import matplotlib\nmatplotlib.use("Agg")\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title("agg")',
    );
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(result.displays?.length, 1, JSON.stringify(result.displays?.map((d) => d.mime)));
    assert.equal(result.displays[0]!.mime, 'image/png');
    assert.ok(checkPng(Buffer.from(result.displays[0]!.data, 'base64')).width > 0);
    const next = await run('print(len(plt.get_fignums()))');
    assert.equal(next.result.stdout, '0\n', 'shown once, then closed');
  });

  test("packages install into the user's site folder is importable in the running kernel", async () => {
    const wheels = path.join(hub.dir, 'wheels');
    fs.mkdirSync(wheels, { recursive: true });
    fs.chmodSync(wheels, 0o755);
    const wheel = buildWheel(wheels, { name: 'cmhubpkg', version: '2.0.0', init: 'WHERE = "user site"\n' });
    fs.chmodSync(wheel, 0o644);
    const other = await connect(['--jupyter-kernel', 'rootpython']);
    try {
      // Started before the install, with the user's site folder still missing.
      const started = (
        await runPython(other.client, {
          code: 'import site, os\nprint(os.path.isdir(site.getusersitepackages()))',
          backend: 'jupyter',
          timeout_s: LIMIT_S,
        })
      ).result;
      assert.equal(started.stdout, 'False\n', JSON.stringify(started));
      const raw = (await other.client.callTool(
        { name: 'packages', arguments: { action: 'install', backend: 'jupyter', packages: [wheel] } },
        undefined,
        { timeout: 300_000 },
      )) as CallToolResult;
      const installed = raw.structuredContent as unknown as PackagesResult;
      assert.equal(installed.success, true, JSON.stringify(installed));
      const imported = (
        await runPython(other.client, {
          code: 'import cmhubpkg\nprint(cmhubpkg.WHERE)',
          backend: 'jupyter',
          timeout_s: LIMIT_S,
        })
      ).result;
      assert.equal(imported.success, true, JSON.stringify(imported.diagnostics));
      assert.equal(imported.stdout, 'user site\n');
    } finally {
      await other.close();
    }
  });

  test("a PEP 668 refusal names the Jupyter way out, and pip's message is whole from its start", async () => {
    const refused = await packages('install', ['cmhub-not-needed==1.0']);
    assert.equal(refused.success, false);
    const error = refused.packages[0]?.error ?? '';
    assert.match(error, /^error: externally-managed-environment/);
    assert.match(error, /--jupyter-kernel/);
    // The CLI names its flag; VS Code names its setting (it says how it is set where the person is).
    assert.match(error, /choose that kernel spec: flag --jupyter-kernel NAME\.$/m);
  });

  test('a user server stopped and started again between runs: the next run starts a new kernel at once and says the state is gone', async () => {
    assert.equal((await run('kept = 1')).result.success, true);
    await hub.stopServer();
    await hub.startServer();
    const { result } = await run('print("kept" in globals())');
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(result.stdout, 'False\n');
    assert.equal(result.session_reset, true);
    assert.match(result.reset_reason ?? '', goneMessage());
  });

  test("a run in flight when the hub stops the user's server fails at once saying so, not at its time limit", async () => {
    assert.equal((await run('kept = 1')).result.success, true);
    // Stopped once the run is under way (its first output is proof).
    let underWay!: () => void;
    const sleepingNow = new Promise<void>((resolve) => (underWay = resolve));
    const code = 'import time\nprint("sleeping", flush=True)\ntime.sleep(600)';
    const sleeping = runPython(
      conn.client,
      { code, backend: 'jupyter', timeout_s: 240 },
      { timeout: 300_000, onprogress: (p) => p.message?.includes('sleeping') && underWay() },
    );
    await sleepingNow;
    await hub.stopServer();
    const { result } = await sleeping;
    assert.equal(result.diagnostics?.error_type, 'BACKEND_CRASHED', JSON.stringify(result.diagnostics));
    assert.match(result.diagnostics?.message ?? '', goneMessage());
    assert.equal(result.session_reset, true);
  });

  test("runs while the user's server is not running fail with the hub's own message; a session that never had a kernel lost nothing", async () => {
    // The server is stopped by the test before. A session that never had a kernel has no state to lose.
    for (let attempt = 0; attempt < 2; attempt++) {
      const fresh = (await run('print(1)', { session: 'never-started' })).result;
      assert.equal(fresh.success, false);
      assert.equal(fresh.session_reset, undefined, `attempt ${attempt + 1}: ${JSON.stringify(fresh)}`);
      assert.match(fresh.diagnostics?.message ?? '', /JupyterHub server no longer running/);
    }
    const { result } = await run('print(1)');
    assert.equal(result.success, false);
    assert.match(
      result.diagnostics?.message ?? '',
      /JupyterHub server no longer running at .*Restart the server at http:\/\/127\.0\.0\.1:\d+\/hub\/spawn\/cmhub-test/s,
    );
    await hub.startServer();
    const back = await run('print(2)');
    assert.equal(back.result.stdout, '2\n', JSON.stringify(back.result.diagnostics));
  });

  test("the client answers every kernel message at once with a pong: the ACK a stock server's Nagle delay waits for", async () => {
    // A relay in front of the hub that counts the frames on the kernel's WebSocket (runs take ~50 ms on a stock
    // server without this, ~10 ms with it: scripts/hub-latency.ts measures; this test checks the cause, not time).
    const tap = await startWebSocketTap({ host: '127.0.0.1', port: Number(new URL(hub.userUrl).port) });
    const other = await connectStdio(['--backend', 'jupyter', '--jupyter-url', `${tap.url}user/${HUB_USER}/`], {
      CODE_MODE_JUPYTER_TOKEN: hub.token,
    });
    try {
      for (let i = 0; i < 5; i++)
        assert.equal(
          (await runPython(other.client, { code: 'x = 1', backend: 'jupyter', timeout_s: LIMIT_S })).result.success,
          true,
        );
      const kernelMessages = () => tap.count('toClient', 1) + tap.count('toClient', 2);
      // Every message and every ping of the server is answered by a pong; the last ones may still be on their way.
      const unanswered = () => kernelMessages() + tap.count('toClient', 9) - tap.count('toServer', 10);
      for (let waited = 0; unanswered() !== 0; waited += 50) {
        assert.ok(
          waited < 30_000,
          `${unanswered()} of ${kernelMessages()} kernel messages were not answered by a pong`,
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(kernelMessages() >= 5 * 4, `the runs' messages crossed the relay: ${kernelMessages()}`);
    } finally {
      await other.close();
      await tap.close();
    }
  });

  test("the client library's reconnect lines and a server's traceback reach the log one line each, marked as the log's", async () => {
    // The drops of the tests before made the client reconnect.
    const lines = conn.stderr().split('\n');
    assert.ok(
      lines.some((line) => line.startsWith('[code-mode] warning: Connection lost, reconnecting')),
      conn.stderr(),
    );
    // A kernel spec the server does not have: jupyter_server answers with its traceback, which the client logs.
    const other = await connect(['--jupyter-kernel', 'nosuchspec']);
    try {
      const { result } = await runPython(other.client, { code: 'print(1)', backend: 'jupyter', timeout_s: LIMIT_S });
      assert.match(result.diagnostics?.message ?? '', /nosuchspec/);
      const log = other.stderr().split('\n').filter(Boolean);
      assert.ok(
        log.some((line) =>
          /^\[code-mode\] error: Traceback \(most recent call last\): … .*NoSuchKernel: No such kernel named nosuchspec/.test(
            line,
          ),
        ),
        other.stderr(),
      );
      assert.deepEqual(
        log.filter((line) => !line.startsWith('[code-mode] ')),
        [],
        "every line is the log's own",
      );
    } finally {
      await other.close();
    }
  });
});
