// The CLI as people install MCP servers: `npm pack` of this checkout (its built dist/, as .npmignore selects),
// installed into an empty folder, started from the installed package's own files (`npx -y code-mode-python` runs the
// same bin) and driven by a real MCP client over stdio: Python runs in the Pyodide sandbox, offline. Then the agent
// plugin (plugin/) through the real Claude Code CLI, offline: it validates, and its server connects, both where it
// ships beside the bundled server (the npm package, a checkout) and copied on its own (npx -y runs the package).
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { repoRoot } from '../support/mcp';

const CLAUDE = path.join(repoRoot, 'node_modules', '.bin', 'claude');

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function npmRun(args: string[], cwd: string): string {
  const run = spawnSync(npm, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_fund: 'false' } });
  assert.equal(run.status, 0, `npm ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

describe('the npm package', () => {
  let work: string;
  let installed: string;

  before(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-npm-'));
    const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
      name: string;
      private?: boolean;
      bin: Record<string, string>;
    };
    assert.notEqual(manifest.private, true, 'a private package cannot be published');
    // The scripts would rebuild dist/ for production; the package is what this checkout built.
    const packed = JSON.parse(npmRun(['pack', '--json', '--ignore-scripts', '--pack-destination', work], repoRoot)) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = packed[0]!.files.map((file) => file.path);
    assert.ok(
      ['dist/cli.js', 'dist/mcp-client.js', 'dist/run-card.html', 'plugin/.mcp.json', 'plugin/server.mjs'].every(
        (file) => files.includes(file),
      ),
      files.slice(0, 20).join(', '),
    );
    assert.ok(!files.some((file) => file.startsWith('src/') || file.startsWith('test/') || file.endsWith('.map')));
    installed = path.join(work, 'project');
    fs.mkdirSync(installed);
    npmRun(['init', '-y'], installed);
    // Deno is the sandbox only where bubblewrap cannot run; this machine has bubblewrap.
    npmRun(
      ['install', '--prefer-offline', '--omit=optional', '--no-audit', path.join(work, packed[0]!.filename)],
      installed,
    );
  });
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  test('installed into an empty folder, its bin serves MCP over stdio and runs Python in Pyodide', async () => {
    const bin = path.join(installed, 'node_modules', '.bin', 'code-mode-mcp');
    assert.ok(fs.existsSync(bin), 'the bin is linked');
    const client = new Client({ name: 'npm-package-test', version: '1' });
    const transport = new StdioClientTransport({
      command: bin,
      args: ['--storage', path.join(work, 'storage')],
      cwd: installed,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === 'run_python'));
      const result = (await client.callTool(
        { name: 'run_python', arguments: { code: 'import sys\nprint(6 * 7, sys.platform)' } },
        undefined,
        { timeout: 120_000 },
      )) as CallToolResult;
      assert.equal((result.structuredContent as { stdout: string }).stdout, '42 emscripten\n', stderr);
    } finally {
      await client.close();
    }
  });

  test('Claude Code validates the agent plugin and connects to its server, beside the bundle and on its own', () => {
    // Claude Code keeps its settings under HOME: a scratch one, so nothing of the person's is read or written.
    const env = { ...process.env, HOME: path.join(work, 'home'), DISABLE_AUTOUPDATER: '1' };
    fs.mkdirSync(env.HOME, { recursive: true });
    const shipped = path.join(installed, 'node_modules', 'code-mode-python', 'plugin');
    // As a marketplace install copies it: the plugin's folder only, no bundle beside it.
    const alone = path.join(work, 'marketplace', 'code-mode-python');
    fs.cpSync(path.join(repoRoot, 'plugin'), alone, { recursive: true });
    const ways = [
      // Beside the bundle, from a folder where npx could find no package (and offline): only the bundle can serve.
      { plugin: shipped, cwd: work, npmOffline: 'true' },
      // On its own, npx -y finds the package installed in the folder it runs in.
      { plugin: alone, cwd: installed, npmOffline: 'false' },
    ];
    for (const { plugin, cwd, npmOffline } of ways) {
      const validate = spawnSync(CLAUDE, ['plugin', 'validate', plugin], { env, encoding: 'utf8', timeout: 120_000 });
      assert.equal(validate.status, 0, `${validate.stdout}${validate.stderr}`);
      assert.match(validate.stdout, /Validation passed/);
      const list = spawnSync(CLAUDE, ['--plugin-dir', plugin, 'mcp', 'list'], {
        cwd,
        env: { ...env, npm_config_offline: npmOffline },
        encoding: 'utf8',
        timeout: 180_000,
      });
      assert.ok(
        list.stdout.includes(
          `plugin:code-mode-python:code-mode-python: node ${path.join(plugin, 'server.mjs')} - ✔ Connected`,
        ),
        `${list.stdout}${list.stderr}`,
      );
    }
  });
});
