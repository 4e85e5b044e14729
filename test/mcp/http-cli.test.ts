// The built CLI with --http: it says where and with which token, serves run_python to a real client, refuses
// what the VS Code endpoint refuses, and will not listen off the machine unless asked twice and given a token.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connectHttp, post, until } from '../support/http';
import { cliPath, runPython, testStorageDir } from '../support/mcp';

interface RunningCli {
  child: ChildProcess;
  stderr: () => string;
  url: string;
}

async function startCli(args: string[]): Promise<RunningCli> {
  const child = spawn(
    process.execPath,
    [cliPath, '--http', '--backend', 'python', '--storage', testStorageDir, ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await until(() => /MCP over HTTP on (\S+)/.test(stderr) || child.exitCode !== null, 'the CLI says where it serves');
  const url = /MCP over HTTP on (\S+)/.exec(stderr)?.[1];
  assert.ok(url, stderr);
  return { child, stderr: () => stderr, url };
}

function stop(cli: RunningCli | undefined): Promise<void> {
  if (!cli || cli.child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    cli.child.once('exit', () => resolve());
    cli.child.kill('SIGTERM');
  });
}

describe('code-mode-mcp --http', () => {
  let cli: RunningCli;
  let token: string;

  before(async () => {
    cli = await startCli([]);
    await until(() => /bearer token .*: (\S+)/.test(cli.stderr()), 'the token is printed');
    token = /bearer token .*: (\S+)/.exec(cli.stderr())![1]!;
  });
  after(() => stop(cli));

  test('prints a loopback URL and the generated token once', () => {
    assert.match(cli.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.equal(cli.stderr().split(token).length - 1, 1);
  });

  test('serves run_python to a client with the token', async () => {
    const { client } = await connectHttp(cli.url, token);
    try {
      const { result } = await runPython(client, { code: 'print(6 * 7)' });
      assert.equal(result.success, true);
      assert.equal(result.stdout, '42\n');
    } finally {
      await client.close();
    }
  });

  test('refuses a missing token (401), a browser Origin (403) and a foreign Host (403)', async () => {
    assert.equal((await post(cli.url, {})).status, 401);
    assert.equal(
      (await post(cli.url, { authorization: `Bearer ${token}`, origin: 'https://evil.example' })).status,
      403,
    );
    assert.equal((await post(cli.url, { authorization: `Bearer ${token}`, host: 'evil.example' })).status, 403);
    assert.equal((await post(cli.url, { authorization: `Bearer ${token}` })).status, 200);
  });
});

describe('code-mode-mcp --http with --token-file', () => {
  const tokenFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-token-')), 'token');
  const token = 'a'.repeat(40);
  let cli: RunningCli | undefined;
  after(() => stop(cli));

  test('uses the token from the file and never prints it', async () => {
    fs.writeFileSync(tokenFile, `${token}\n`);
    cli = await startCli(['--token-file', tokenFile]);
    assert.equal((await post(cli.url, { authorization: `Bearer ${token}` })).status, 200);
    assert.equal((await post(cli.url, { authorization: 'Bearer another-token' })).status, 401);
    assert.doesNotMatch(cli.stderr(), new RegExp(token));
  });

  test('a non-loopback --host without --allow-remote and --token-file exits 2 saying why', () => {
    for (const extra of [[], ['--allow-remote'], ['--token-file', tokenFile]]) {
      const run = spawnSync(process.execPath, [cliPath, '--http', '--host', '0.0.0.0', ...extra], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(run.status, 2, run.stderr);
      assert.match(
        run.stderr,
        /--host 0\.0\.0\.0 can be reached from other machines: it needs --allow-remote and --token-file/,
      );
    }
  });

  test('HTTP flags without --http exit 2', () => {
    const run = spawnSync(process.execPath, [cliPath, '--port', '8080'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /--port needs --http/);
  });
});
