// The environment tool (describe, and change a default) through a real MCP client against the built CLI.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cliPath, connectStdio, runPython, type StdioConnection } from '../support/mcp';

describe('environment', () => {
  let storage: string;
  let conn: StdioConnection;
  const call = async (name: string, args: Record<string, unknown>) =>
    (await conn.client.callTool({ name, arguments: args })) as CallToolResult;

  before(async () => {
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-env-'));
    conn = await connectStdio(['--storage', storage]);
    // The client then checks every result against the tool's output schema.
    await conn.client.listTools();
  });
  after(async () => {
    await conn?.close();
    fs.rmSync(storage, { recursive: true, force: true });
  });

  test('describes backends, versions, packages and limits without starting Pyodide, in snake_case keys', async () => {
    const result = await call('environment', {});
    const env = result.structuredContent as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.equal(env.default_backend, 'pyodide');
    assert.equal(env.backends.pyodide.state, 'not-loaded');
    assert.equal(env.backends.pyodide.pyodide_version, '0.29.5');
    assert.match(env.backends.pyodide.python_version, /^3\.\d+\.\d+$/);
    assert.match(env.backends.python.python_version, /^3\.\d+\.\d+$/);
    assert.ok(
      Array.isArray(env.backends.python.packages) &&
        env.backends.python.packages.some((p: { name: string }) => p.name === 'pip'),
    );
    assert.equal(env.limits.timeout_s, 30);
    assert.equal(env.limits.output_cap_kb, 64);
    assert.equal(env.limits.max_sessions_per_backend, 8);
    const sandbox = env.backends.pyodide.sandbox;
    assert.equal(sandbox.network, 'off');
    if (process.platform === 'linux')
      assert.deepEqual([sandbox.mechanism, sandbox.complete, sandbox.gaps], ['bubblewrap', true, []]);
    else assert.equal(sandbox.complete, false);
    assert.equal(env.backends.python.sandbox, null, 'the workspace interpreter is not sandboxed and says so');
    assert.match(env.backends.python.isolation, /^none/);
    assert.deepEqual(env.guardrails, {
      max_code_bytes: 256 * 1024,
      max_code_lines: 0,
      allow_imports: [],
      deny_imports: [],
      denied_tokens: [],
    });
    const keys = JSON.stringify(env, (key, value) => (key === 'packages' ? undefined : value)).match(/"[^"]+":/g) ?? [];
    assert.deepEqual(
      keys.filter((k) => /[A-Z]/.test(k)),
      [],
      'every key is snake_case',
    );
    assert.deepEqual(env.external_servers, []);
    assert.deepEqual(env.tool_approval, {
      mode: 'ask',
      auto_approve: [],
      approve_person_runs: true,
      set_by: { mode: 'flag --tool-approval', auto_approve: 'flag --auto-approve' },
    });
  });

  test('a key and value are validated, applied at once, and the new environment comes back', async () => {
    const bad = await call('environment', { key: 'timeout_s', value: 'soon' });
    assert.equal(bad.isError, true);
    assert.match(JSON.stringify(bad.content), /timeout_s must be a number/);
    const unknown = await call('environment', { key: 'colour', value: 'blue' });
    assert.equal(unknown.isError, true);
    const missingPython = await call('environment', { key: 'python_path', value: '/no/such/python' });
    assert.equal(missingPython.isError, true);
    const noValue = await call('environment', { key: 'timeout_s' });
    assert.equal(noValue.isError, true);

    const ok = await call('environment', { key: 'timeout_s', value: 1 });
    assert.equal(ok.isError, undefined);
    assert.equal((ok.content[0] as { text: string }).text, 'timeout_s is now 1');
    assert.equal((ok.structuredContent as { limits: { timeout_s: number } }).limits.timeout_s, 1);
    await call('environment', { key: 'default_backend', value: 'python' });
    const { result } = await runPython(conn.client, { code: 'while True: pass' });
    assert.equal(result.backend, 'python');
    assert.equal(result.diagnostics?.error_type, 'TIMEOUT');
    assert.equal(result.diagnostics?.timeout_s, 1);
  });

  test('every run is kept in the persisted history of the storage folder', async () => {
    await runPython(conn.client, { code: 'print("remember me")', backend: 'python' });
    await conn.close();
    const saved = JSON.parse(fs.readFileSync(path.join(storage, 'history.json'), 'utf8')) as {
      runs: { run: { code: string; origin: string }; result: { stdout: string } }[];
    };
    const run = saved.runs.find((r) => r.run.code === 'print("remember me")');
    assert.ok(run, 'the run was saved');
    assert.equal(run.run.origin, 'cli');
    assert.equal(run.result.stdout, 'remember me\n');
    conn = await connectStdio(['--storage', storage]);
  });

  test('settings persist across a restart of the server, and command-line flags win', async () => {
    await conn.close();
    conn = await connectStdio(['--storage', storage]);
    const env = (await call('environment', {})).structuredContent as {
      settings: { timeout_s: number; default_backend: string };
    };
    assert.equal(env.settings.timeout_s, 1);
    assert.equal(env.settings.default_backend, 'python');
    await conn.close();
    conn = await connectStdio(['--storage', storage, '--timeout', '7']);
    const flagged = (await call('environment', {})).structuredContent as { settings: { timeout_s: number } };
    assert.equal(flagged.settings.timeout_s, 7);
  });
});

describe('environment with --pyodide-sandbox deno', () => {
  let conn: StdioConnection;
  before(async () => {
    conn = await connectStdio(['--pyodide-sandbox', 'deno']);
  });
  after(async () => {
    await conn?.close();
  });

  test('reports Deno as the mechanism, complete, and runs Python under it', async () => {
    const result = (await conn.client.callTool({ name: 'environment', arguments: {} })) as CallToolResult;
    const sandbox = (
      result.structuredContent as {
        backends: { pyodide: { sandbox: { mechanism: string; complete: boolean; gaps: string[]; network: string } } };
      }
    ).backends.pyodide.sandbox;
    assert.deepEqual(sandbox, { mechanism: 'deno', complete: true, network: 'off', gaps: [] });
    const { result: run } = await runPython(conn.client, { code: 'import js\nprint(type(js.Deno).__name__, 6 * 7)' });
    assert.equal(run.stdout, 'JsProxy 42\n', JSON.stringify(run.diagnostics));
  });
});

test('an unknown --pyodide-sandbox is refused with the choices', () => {
  const result = spawnSync(process.execPath, [cliPath, '--pyodide-sandbox', 'chroot'], { encoding: 'utf8' });
  assert.equal(result.status, 2);
  assert.match(result.stderr, /--pyodide-sandbox must be "auto", "bubblewrap" or "deno", not "chroot"/);
});

// An agent confined to Pyodide must not turn a file it wrote into the interpreter the host runs (issue 30): python_path
// from the environment tool, or saved by it for the next server, never names a file in a folder code can write, and
// is not taken at all while the python backend is off. Each script here would leave a mark if the host ran it.
describe('python_path from an agent', () => {
  let root: string;
  let storage: string;
  let workspace: string;
  let conn: StdioConnection | undefined;
  const marker = () => path.join(root, 'ran-on-the-host');
  const call = async (args: Record<string, unknown>) =>
    (await conn!.client.callTool({ name: 'environment', arguments: args })) as CallToolResult;
  const text = (result: CallToolResult) => JSON.stringify(result.content);
  const script = (file: string) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `#!/bin/sh\ntouch ${JSON.stringify(marker())}\nexec /usr/bin/python3 "$@"\n`, {
      mode: 0o755,
    });
    return file;
  };
  const savedSettings = () => {
    const file = path.join(storage, 'settings.json');
    return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  };

  before(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-agent-python-')));
    storage = path.join(root, 'storage');
    workspace = path.join(root, 'workspace');
    fs.mkdirSync(workspace, { recursive: true });
  });
  after(async () => {
    await conn?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('under --pyodide-only it is refused whatever it names, and nothing is saved', async () => {
    conn = await connectStdio(['--storage', storage, '--workspace', workspace, '--pyodide-only']);
    for (const target of [script(path.join(storage, 'scratch', 'pyodide-default', 'python')), '/usr/bin/python3']) {
      const refusal = await call({ key: 'python_path', value: target });
      assert.equal(refusal.isError, true, target);
      assert.match(text(refusal), /python_path cannot be set by an agent while the python backend is off/);
    }
    assert.equal(savedSettings().python_path, undefined);
    await conn.close();
    conn = undefined;
  });

  test('with the python backend on, a file in the storage or a workspace folder is refused, through links too', async () => {
    conn = await connectStdio(['--storage', storage, '--workspace', workspace]);
    const link = path.join(root, 'elsewhere', 'python3');
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(script(path.join(storage, 'scratch', 'pyodide-other', 'python')), link);
    for (const target of [
      script(path.join(storage, 'scratch', 'pyodide-default', 'python')),
      script(path.join(workspace, 'tools', 'python')),
      link,
      path.join(workspace, 'tools', '..', 'tools', 'python'),
    ]) {
      const refusal = await call({ key: 'python_path', value: target });
      assert.equal(refusal.isError, true, target);
      assert.match(text(refusal), /which code run here can write/, target);
    }
    const { result } = await runPython(conn.client, { code: 'print("host")', backend: 'python' });
    assert.equal(result.stdout, 'host\n');
    assert.equal(fs.existsSync(marker()), false, 'no script ran on the host');
    const accepted = await call({ key: 'python_path', value: '/usr/bin/python3' });
    assert.equal(accepted.isError, undefined, text(accepted));
    await conn.close();
    conn = undefined;
  });

  test('a saved python_path into a folder code can write is ignored by the next server, which says so', async () => {
    fs.writeFileSync(
      path.join(storage, 'settings.json'),
      JSON.stringify({ python_path: script(path.join(storage, 'scratch', 'pyodide-default', 'python')) }),
    );
    conn = await connectStdio(['--storage', storage, '--workspace', workspace]);
    const env = (await call({})).structuredContent as { settings: { python_path: string } };
    assert.equal(env.settings.python_path, '');
    assert.match(conn.stderr(), /ignoring saved setting python_path: .*which code run here can write/);
    const { result } = await runPython(conn.client, { code: 'print("host")', backend: 'python' });
    assert.equal(result.stdout, 'host\n');
    assert.equal(fs.existsSync(marker()), false, 'no script ran on the host');
  });
});
