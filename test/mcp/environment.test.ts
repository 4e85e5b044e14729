// get_environment and configure through a real MCP client against the built CLI.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connectStdio, runPython, type StdioConnection } from '../support/mcp';

describe('get_environment and configure', () => {
  let storage: string;
  let conn: StdioConnection;
  const call = async (name: string, args: Record<string, unknown>) => (await conn.client.callTool({ name, arguments: args })) as CallToolResult;

  before(async () => {
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-env-'));
    conn = await connectStdio(['--storage', storage]);
  });
  after(async () => {
    await conn?.close();
    fs.rmSync(storage, { recursive: true, force: true });
  });

  test('get_environment describes backends, versions, packages and limits without starting Pyodide', async () => {
    const result = await call('get_environment', {});
    const env = result.structuredContent as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.equal(env.default_backend, 'pyodide');
    assert.equal(env.backends.pyodide.state, 'not-loaded');
    assert.equal(env.backends.pyodide.pyodide_version, '0.29.5');
    assert.match(env.backends.pyodide.python_version, /^3\.\d+\.\d+$/);
    assert.match(env.backends.python.python_version, /^3\.\d+\.\d+$/);
    assert.ok(Array.isArray(env.backends.python.packages) && env.backends.python.packages.some((p: { name: string }) => p.name === 'pip'));
    assert.equal(env.limits.timeout_s, 30);
    assert.equal(env.limits.output_cap_kb, 64);
    assert.equal(env.limits.max_sessions_per_backend, 8);
    const sandbox = env.backends.pyodide.sandbox;
    assert.equal(sandbox.network, 'off');
    if (process.platform === 'linux') assert.deepEqual([sandbox.mechanism, sandbox.complete, sandbox.gaps], ['bubblewrap', true, []]);
    else assert.equal(sandbox.complete, false);
    assert.equal(env.backends.python.sandbox, null, 'the workspace interpreter is not sandboxed and says so');
    assert.match(env.backends.python.isolation, /^none/);
    assert.equal(env.guardrails.maxCodeBytes, 256 * 1024);
    assert.deepEqual(env.external_servers, []);
  });

  test('configure validates, applies at once and reports the new value', async () => {
    const bad = await call('configure', { key: 'timeout_s', value: 'soon' });
    assert.equal(bad.isError, true);
    assert.match(JSON.stringify(bad.content), /timeout_s must be a number/);
    const unknown = await call('configure', { key: 'colour', value: 'blue' });
    assert.equal(unknown.isError, true);
    const missingPython = await call('configure', { key: 'python_path', value: '/no/such/python' });
    assert.equal(missingPython.isError, true);

    const ok = await call('configure', { key: 'timeout_s', value: 1 });
    assert.equal(ok.isError, undefined);
    assert.match(JSON.stringify(ok.content), /timeout_s is now 1/);
    await call('configure', { key: 'default_backend', value: 'python' });
    const { result } = await runPython(conn.client, { code: 'while True: pass' });
    assert.equal(result.backend, 'python');
    assert.equal(result.diagnostics?.error_type, 'TIMEOUT');
    assert.equal(result.diagnostics?.timeout_s, 1);
  });

  test('every run is kept in the persisted history of the storage folder', async () => {
    await runPython(conn.client, { code: 'print("remember me")', backend: 'python' });
    await conn.close();
    const saved = JSON.parse(fs.readFileSync(path.join(storage, 'history.json'), 'utf8')) as { runs: { run: { code: string; origin: string }; result: { stdout: string } }[] };
    const run = saved.runs.find((r) => r.run.code === 'print("remember me")');
    assert.ok(run, 'the run was saved');
    assert.equal(run.run.origin, 'cli');
    assert.equal(run.result.stdout, 'remember me\n');
    conn = await connectStdio(['--storage', storage]);
  });

  test('settings persist across a restart of the server, and command-line flags win', async () => {
    await conn.close();
    conn = await connectStdio(['--storage', storage]);
    const env = (await call('get_environment', {})).structuredContent as { settings: { timeout_s: number; default_backend: string } };
    assert.equal(env.settings.timeout_s, 1);
    assert.equal(env.settings.default_backend, 'python');
    await conn.close();
    conn = await connectStdio(['--storage', storage, '--timeout', '7']);
    const flagged = (await call('get_environment', {})).structuredContent as { settings: { timeout_s: number } };
    assert.equal(flagged.settings.timeout_s, 7);
  });
});
