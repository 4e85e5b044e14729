// The jupyter backend through a real MCP client over stdio, against a real Jupyter Server (Debian's
// jupyter-server and ipykernel, started by the product's own launcher in a venv so pip may install) reached by
// URL and token, as a remote JupyterHub would be: state, errors, streaming, displays, time limits, a kernel
// that ignores interrupts, code mode from the kernel, installs, and what `environment` says.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startLocalJupyterServer, type LocalJupyterServer } from '../../src/engine/backends/jupyter/localServer';
import { socketFetch } from '../../src/engine/backends/jupyter/socketFetch';
import { silentLogger, type PackagesResult } from '../../src/engine/types';
import { jupyterCliArgs, jupyterPython } from '../support/jupyter';
import { cliPath, connectStdio, repoRoot, runPython, type StdioConnection } from '../support/mcp';
import { checkPng, PYTHON_PNG_ENCODER } from '../support/pythonPng';
import { buildWheel } from '../support/wheel';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-jupyter-test-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

describe('the jupyter backend over MCP', () => {
  let server: LocalJupyterServer;
  let conn: StdioConnection;
  const run = (code: string, extra: Record<string, unknown> = {}) =>
    runPython(conn.client, { code, backend: 'jupyter', ...extra });

  before(async () => {
    // A venv over Debian's Python sees its jupyter_server and ipykernel, and lets pip install into itself.
    const venv = path.join(work, 'venv');
    execFileSync(jupyterPython, ['-m', 'venv', '--without-pip', '--system-site-packages', venv]);
    server = await startLocalJupyterServer({
      python: path.join(venv, 'bin', 'python'),
      rootDir: work,
      log: silentLogger,
      tcp: true,
    });
    const memory = path.join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
    const servers = path.join(work, 'servers.json');
    fs.writeFileSync(
      servers,
      JSON.stringify({
        servers: {
          memory: {
            command: process.execPath,
            args: [memory],
            env: { MEMORY_FILE_PATH: path.join(work, 'memory.jsonl') },
          },
        },
      }),
    );
    // Calls need no approval here: tool-approval.test.ts tests asking.
    conn = await connectStdio(
      ['--backend', 'jupyter', '--jupyter-url', server.endpoint.url, '--servers', servers, '--tool-approval', 'allow'],
      { CODE_MODE_JUPYTER_TOKEN: server.endpoint.token ?? '' },
    );
    await conn.client.listTools();
  });
  after(async () => {
    await conn?.close();
    await server?.stop();
  });

  test('state persists across calls, and output is stdout and stderr as Python wrote them', async () => {
    const first = await run('x = 41\nimport sys\nprint("out")\nprint("err", file=sys.stderr)');
    assert.equal(first.result.success, true, JSON.stringify(first.result.diagnostics));
    assert.equal(first.result.backend, 'jupyter');
    assert.equal(first.result.stdout, 'out\n');
    assert.equal(first.result.stderr, 'err\n');
    assert.equal((await run('print(x + 1)')).result.stdout, '42\n');
  });

  test("IPython's run hooks see each run's own code and whether it failed, as for a typed cell", async () => {
    // Hooks such as autoreload's hang on pre_run_cell; the engine's silent cells would skip them if the support
    // code did not trigger them.
    const register = [
      'seen = []',
      'def _before(info): seen.append(["pre", info.raw_cell])',
      'def _after(result): seen.append(["post", result.info.raw_cell, result.success])',
      'get_ipython().events.register("pre_run_cell", _before)',
      'get_ipython().events.register("post_run_cell", _after)',
    ].join('\n');
    assert.equal((await run(register)).result.success, true);
    assert.equal((await run('1 / 0')).result.success, false);
    const report = [
      'get_ipython().events.unregister("pre_run_cell", _before)',
      'get_ipython().events.unregister("post_run_cell", _after)',
      'import json; print(json.dumps(seen))',
    ].join('\n');
    const { result } = await run(report);
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.deepEqual(JSON.parse(result.stdout), [
      ['post', register, true],
      ['pre', '1 / 0'],
      ['post', '1 / 0', false],
      ['pre', report],
    ]);
  });

  test("an exception comes back with its real name and a traceback at the user's line", async () => {
    const { result } = await run('def f():\n    return 1 / 0\nf()');
    assert.equal(result.success, false);
    assert.equal(result.diagnostics?.error_type, 'RuntimeError');
    assert.equal(result.diagnostics?.exception, 'ZeroDivisionError');
    assert.match(result.diagnostics?.traceback ?? '', /line 2, in f\n\s+return 1 \/ 0/);
    const syntax = await run('def broken(:\n    pass');
    assert.equal(syntax.result.diagnostics?.error_type, 'SyntaxError');
  });

  test('output streams as progress while the kernel runs', async () => {
    const messages: string[] = [];
    const streamed = await runPython(
      conn.client,
      { code: 'import time\nprint("early", flush=True)\ntime.sleep(1.5)\nprint("late")', backend: 'jupyter' },
      { onprogress: (p) => messages.push(p.message ?? '') },
    );
    assert.equal(streamed.result.stdout, 'early\nlate\n');
    assert.ok(
      messages.some((m) => m.includes('early')),
      `no progress carried the early line: ${JSON.stringify(messages)}`,
    );
  });

  test("IPython's display() of a PNG becomes an image in the result", async () => {
    const { result, raw } = await run(
      `${PYTHON_PNG_ENCODER}\nfrom IPython.display import Image, display\ndisplay(Image(data=make_png(12, 8)))\ndisplay("plain text too")`,
    );
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(result.displays?.[0]?.mime, 'image/png');
    assert.deepEqual(checkPng(Buffer.from(result.displays![0]!.data, 'base64')), { width: 12, height: 8 });
    assert.ok(
      raw.content.some((block) => block.type === 'image' && block.mimeType === 'image/png'),
      'the client gets an image block',
    );
    assert.match(result.stdout, /'plain text too'/);
  });

  test('an endless loop stops at timeout_s through the kernel interrupt; the next call works and the state is kept', async () => {
    await run('kept = "still here"');
    const { result } = await run('while True:\n    pass', { timeout_s: 2 });
    assert.equal(result.diagnostics?.error_type, 'TIMEOUT');
    assert.equal(result.session_reset, undefined);
    const next = await run('print(kept)');
    assert.equal(next.result.stdout, 'still here\n');
    assert.equal(next.result.session_reset, undefined);
  });

  test('a kernel that ignores interrupts is restarted, and the result and the next run say the state is gone', async () => {
    await run('kept = 1');
    const { result } = await run('import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass', {
      timeout_s: 2,
    });
    assert.equal(result.diagnostics?.error_type, 'TIMEOUT');
    assert.equal(result.session_reset, true);
    assert.match(result.diagnostics?.message ?? '', /restarted/);
    const next = await run('print("kept" in globals())');
    assert.equal(next.result.success, true, JSON.stringify(next.result.diagnostics));
    assert.equal(next.result.stdout, 'False\n');
  });

  test('code mode: Python in the kernel calls a real MCP server (server-memory) as functions', async () => {
    const { result } = await run(
      'from code_mode import tools\n' +
        'tools.memory.create_entities(entities=[{"name": "kernel", "entityType": "thing", "observations": ["runs on Jupyter"]}])\n' +
        'graph = tools.memory.read_graph()\n' +
        'print([e["name"] for e in graph["entities"]])',
      // A kernel of its own: on the kernel the test above had restarted, a host call once never came back
      // (one full run in three on a busy machine; see the session note), which is not what this test is about.
      { timeout_s: 60, session: 'code-mode' },
    );
    // The server's log says where a call that never came back stopped.
    assert.equal(
      result.success,
      true,
      `${JSON.stringify(result.diagnostics)}\nserver log:\n${conn.stderr().slice(-4000)}`,
    );
    assert.equal(result.stdout, "['kernel']\n");
  });

  test('install_packages through the kernel puts a wheel the test built into its environment', async () => {
    const wheel = buildWheel(path.join(work, 'wheels'), {
      name: 'cmjupyterpkg',
      version: '1.2.3',
      init: 'GREETING = "hi from the wheel"\n',
    });
    const raw = (await conn.client.callTool(
      { name: 'packages', arguments: { action: 'install', backend: 'jupyter', packages: [wheel] } },
      undefined,
      { timeout: 300_000 },
    )) as CallToolResult;
    const installed = raw.structuredContent as unknown as PackagesResult;
    assert.equal(installed.success, true, JSON.stringify(installed));
    assert.equal(installed.packages[0]?.version, '1.2.3');
    assert.equal((await run('import cmjupyterpkg\nprint(cmjupyterpkg.GREETING)')).result.stdout, 'hi from the wheel\n');
    const checked = (await conn.client.callTool({
      name: 'packages',
      arguments: { action: 'check', backend: 'jupyter', packages: ['cmjupyterpkg>=1.0'] },
    })) as CallToolResult;
    assert.equal((checked.structuredContent as unknown as PackagesResult).packages[0]?.installed, true);
  });

  test('environment names the server, its kernels and that the kernel is not sandboxed', async () => {
    const raw = (await conn.client.callTool({ name: 'environment', arguments: {} })) as CallToolResult;
    const jupyter = (raw.structuredContent as { backends: Record<string, Record<string, unknown>> }).backends.jupyter!;
    assert.equal(jupyter.sandbox, null);
    assert.match(String(jupyter.isolation), /^none/);
    const described = jupyter.server as {
      url: string;
      local: boolean;
      kernels: { state: string }[];
      default_kernel: string;
    };
    assert.equal(described.url, server.endpoint.url);
    assert.equal(described.local, false);
    assert.equal(described.default_kernel, 'python3');
    assert.ok(described.kernels.length >= 1, 'the session kernel is listed');
  });
});

describe('the jupyter backend with a wrong token', () => {
  test('the run fails with a clear error naming the server, and the MCP server keeps serving', async () => {
    const server = await startLocalJupyterServer({ python: jupyterPython, log: silentLogger, tcp: true });
    const conn = await connectStdio(['--jupyter-url', server.endpoint.url, '--jupyter-token', 'not-the-token']);
    try {
      const { result } = await runPython(conn.client, { code: 'print(1)', backend: 'jupyter' });
      assert.equal(result.success, false);
      assert.match(
        result.diagnostics?.message ?? '',
        new RegExp(
          `Jupyter Server at ${server.endpoint.url.replace(/[.]/g, '\\.')}.*(403|401|Forbidden|Unauthorized)`,
          's',
        ),
      );
      const pyodide = await runPython(conn.client, { code: 'print(2)', backend: 'pyodide' });
      assert.equal(pyodide.result.stdout, '2\n');
    } finally {
      await conn.close();
      await server.stop();
    }
  });
});

describe('the jupyter flags of the CLI', () => {
  test('a flag that cannot work exits with status 2 and says why, before anything starts', () => {
    const cases: [string[], RegExp][] = [
      [['--backend', 'jupyter'], /--backend jupyter needs --jupyter-url <url\|local>/],
      [['--jupyter-url', 'ftp://example.org/'], /--jupyter-url must be an http\(s\) URL/],
      [['--jupyter-url', 'not a url'], /--jupyter-url must be an http\(s\) URL or "local"/],
      [['--jupyter-kernel', 'python3'], /--jupyter-kernel needs --jupyter-url/],
      [
        ['--pyodide-only', '--backend', 'jupyter', '--jupyter-url', 'local'],
        /--pyodide-only cannot be combined with --backend jupyter/,
      ],
    ];
    for (const [args, why] of cases) {
      const exited = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', input: '' });
      assert.equal(exited.status, 2, args.join(' '));
      assert.match(exited.stderr, why);
      assert.equal(exited.stdout, '', 'stdout stays MCP-only');
    }
  });
});

describe('a local Jupyter Server that dies', () => {
  test('a run in flight crashes at once saying so, and the next run starts a new server and says the state is gone', async () => {
    const conn = await connectStdio(jupyterCliArgs('jupyter'));
    const run = (code: string) => runPython(conn.client, { code, backend: 'jupyter', timeout_s: 60 });
    try {
      // The kernel's parent is the server this CLI started.
      const serverPid = Number((await run('kept = 1\nimport os\nprint(os.getppid())')).result.stdout.trim());
      const sleeping = run('import time\ntime.sleep(30)');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      process.kill(serverPid, 'SIGKILL');
      const crashed = (await sleeping).result;
      // Not TIMEOUT at the 60 s limit: the death is noticed when it happens.
      assert.equal(crashed.diagnostics?.error_type, 'BACKEND_CRASHED');
      assert.match(crashed.diagnostics?.message ?? '', /local Jupyter Server \(pid \d+\) was killed by SIGKILL/);
      const next = (await run('print("kept" in globals())')).result;
      assert.equal(next.success, true, JSON.stringify(next.diagnostics));
      assert.equal(next.stdout, 'False\n');
      const newServer = Number((await run('import os\nprint(os.getppid())')).result.stdout.trim());
      assert.notEqual(newServer, serverPid);
    } finally {
      await conn.close();
    }
  });
});

describe('a local Jupyter Server whose MCP server is killed outright', () => {
  test(
    'ends with it, and its kernel too: nothing is left running where no exit hook could run',
    { skip: process.platform !== 'linux' && 'the parent-death signal is Linux only (setpriv)' },
    async () => {
      // No Pyodide spare: a sandbox caught starting when its server is killed is not what this test is about.
      const conn = await connectStdio(['--backend', 'jupyter', ...jupyterCliArgs('jupyter')]);
      let pids: number[] = [];
      try {
        const ran = (
          await runPython(conn.client, {
            code: 'import os\nprint(os.getppid(), os.getpid())',
            backend: 'jupyter',
            timeout_s: 60,
          })
        ).result;
        pids = ran.stdout.trim().split(' ').map(Number);
        assert.equal(pids.length, 2, JSON.stringify(ran));
        process.kill(conn.transport.pid!, 'SIGKILL');
        // Only a guard against a process that never ends: a slow machine waits longer, it never fails sooner.
        const deadline = Date.now() + 60_000;
        while (pids.some(running) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
        assert.deepEqual(pids.filter(running), [], 'the server and its kernel outlived the MCP server');
      } finally {
        for (const pid of pids.filter(running)) process.kill(pid, 'SIGKILL');
        await conn.close().catch(() => undefined);
      }
    },
  );
});

/** Alive and not a zombie waiting for whoever adopted it. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('the local Jupyter Server', () => {
  test('listens on a socket in a folder only its user can enter, and refuses requests without its token', async () => {
    const server = await startLocalJupyterServer({ python: jupyterPython, log: silentLogger });
    try {
      const socketPath = server.endpoint.socketPath;
      assert.ok(socketPath, `a socket, not a port: ${server.endpoint.url}`);
      assert.equal(fs.statSync(socketPath).isSocket(), true);
      assert.equal(fs.statSync(path.dirname(socketPath)).mode & 0o077, 0, 'its folder is private');
      const status = (headers: Record<string, string>) =>
        socketFetch(socketPath)(`${server.endpoint.url}api/kernels`, { headers }).then((r) => r.status);
      assert.equal(await status({ Authorization: `token ${server.endpoint.token}` }), 200);
      assert.equal(await status({}), 403);
    } finally {
      await server.stop();
    }
  });
});

describe('a kernel spec of another language', () => {
  test('is refused with a message that says to choose a Python kernel, and the server keeps serving', async () => {
    // A wrapper kernel (ipykernel's documented way to write one) that says it runs "echo".
    const specs = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-echo-kernel-'));
    const kernelDir = path.join(specs, 'kernels', 'echo');
    fs.mkdirSync(kernelDir, { recursive: true });
    fs.writeFileSync(
      path.join(kernelDir, 'echo_kernel.py'),
      [
        'from ipykernel.kernelbase import Kernel',
        'from ipykernel.kernelapp import IPKernelApp',
        'class EchoKernel(Kernel):',
        '    implementation = "echo"',
        '    implementation_version = "1.0"',
        '    language_info = {"name": "echo", "mimetype": "text/plain", "file_extension": ".txt"}',
        '    banner = "echo"',
        '    def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False):',
        '        return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}',
        'IPKernelApp.launch_instance(kernel_class=EchoKernel)',
      ].join('\n'),
    );
    fs.writeFileSync(
      path.join(kernelDir, 'kernel.json'),
      JSON.stringify({
        argv: [jupyterPython, path.join(kernelDir, 'echo_kernel.py'), '-f', '{connection_file}'],
        display_name: 'Echo',
        language: 'echo',
      }),
    );
    const conn = await connectStdio([...jupyterCliArgs('jupyter'), '--jupyter-kernel', 'echo'], {
      JUPYTER_PATH: specs,
    });
    try {
      const { result } = await runPython(conn.client, { code: 'print(1)', backend: 'jupyter', timeout_s: 60 });
      assert.equal(result.success, false);
      assert.match(
        result.diagnostics?.message ?? '',
        /echo on .* runs echo, and this backend runs Python: choose a Python kernel spec/,
      );
      assert.equal((await runPython(conn.client, { code: 'print(2)', backend: 'pyodide' })).result.stdout, '2\n');
    } finally {
      await conn.close();
      fs.rmSync(specs, { recursive: true, force: true });
    }
  });
});
