// Files the host later reads as configuration or runs are out of the sandbox's reach even with workspace write
// on: the MCP server list (which the server then starts, unsandboxed), VS Code's settings and tasks, git's
// hooks and config and a virtual environment's interpreter at any depth, and a --servers file and a
// --wheelhouse wherever they are, whether they exist yet or not. Attacked from Python and from a fresh
// JavaScript realm that skips Pyodide's file layer.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { connectStdio, testStorageDir } from '../support/mcp';
import { buildWheel } from '../support/wheel';
import { inNestedWorker, settleInWorker, type Run } from '../support/pyodideProbe';
import { sandboxFlags, sandboxUnderTest } from '../support/sandboxUnderTest';

/** Every file below `dir` with its content, to compare before and after the attacks. */
function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    out[path.relative(dir, full)] = entry.isFile() ? fs.readFileSync(full, 'utf8') : '<dir>';
  }
  return out;
}

function makeWorkspace(prefix: string, withConfig: boolean): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  fs.writeFileSync(path.join(root, 'notes.txt'), 'notes');
  fs.mkdirSync(path.join(root, 'out'));
  if (!withConfig) return root;
  fs.mkdirSync(path.join(root, '.vscode'));
  fs.writeFileSync(path.join(root, '.vscode', 'settings.json'), '{}');
  fs.writeFileSync(path.join(root, 'team.code-workspace'), '{}');
  fs.mkdirSync(path.join(root, '.git', 'hooks'), { recursive: true });
  fs.writeFileSync(path.join(root, '.git', 'config'), '[core]\n');
  fs.mkdirSync(path.join(root, 'nested', '.git'), { recursive: true });
  fs.writeFileSync(path.join(root, 'nested', '.git', 'config'), '[core]\n');
  fs.mkdirSync(path.join(root, 'env', 'bin'), { recursive: true });
  fs.writeFileSync(path.join(root, 'env', 'pyvenv.cfg'), 'home = /usr/bin\n');
  fs.writeFileSync(path.join(root, 'env', 'bin', 'python'), '#!/bin/sh\n');
  fs.mkdirSync(path.join(root, 'tools'));
  fs.writeFileSync(path.join(root, 'tools', 'servers.json'), '{"servers": {}}');
  fs.mkdirSync(path.join(root, 'data'));
  // Deeper down: a repository, a submodule's .git file, a virtual environment.
  fs.mkdirSync(path.join(root, 'deep', 'a', 'b', '.git', 'hooks'), { recursive: true });
  fs.writeFileSync(path.join(root, 'deep', 'a', 'b', '.git', 'config'), '[core]\n');
  fs.mkdirSync(path.join(root, 'deep', 'sub'), { recursive: true });
  fs.writeFileSync(path.join(root, 'deep', 'sub', '.git'), 'gitdir: ../../.git/modules/sub\n');
  fs.mkdirSync(path.join(root, 'deep', 'a', 'tools', 'env', 'bin'), { recursive: true });
  fs.writeFileSync(path.join(root, 'deep', 'a', 'tools', 'env', 'pyvenv.cfg'), 'home = /usr/bin\n');
  fs.writeFileSync(path.join(root, 'deep', 'a', 'tools', 'env', 'bin', 'python'), '#!/bin/sh\n');
  return root;
}

describe('files the host reads as configuration', () => {
  let engine: Engine;
  let configured: string;
  let bare: string;
  let before_: Record<string, string>;
  let bareBefore: Record<string, string>;
  const attacker: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'config-attacker' });
  const nested = (body: string) => settleInWorker(attacker, inNestedWorker(body));

  before(async () => {
    configured = makeWorkspace('code-mode-protected-', true);
    bare = makeWorkspace('code-mode-bare-', false);
    engine = createEngine({
      storageDir: testStorageDir,
      workspaceRoots: [configured, bare],
      pyodide: {
        sandbox: sandboxUnderTest,
        workspaceWritable: true,
        // An existing servers file, and one in a folder that does not exist yet.
        protectedPaths: [
          path.join(configured, 'tools', 'servers.json'),
          path.join(configured, 'data', 'later', 'servers.json'),
        ],
      },
    });
    before_ = snapshotTree(configured);
    bareBefore = snapshotTree(bare);
  });

  after(async () => {
    await engine?.dispose();
    fs.rmSync(configured, { recursive: true, force: true });
    fs.rmSync(bare, { recursive: true, force: true });
  });

  test('workspace write still works where nothing is protected', async () => {
    const result = await attacker(
      `open(${JSON.stringify(path.join(configured, 'out', 'result.csv'))}, "w").write("a,b")\n` +
        `open(${JSON.stringify(path.join(configured, 'deep', 'a', 'b', 'module.py'))}, "w").write("x = 1")\n` +
        `open(${JSON.stringify(path.join(configured, 'notes.txt'))}, "a").write(" and more")\n` +
        `print(open(${JSON.stringify(path.join(configured, 'notes.txt'))}).read())`,
    );
    assert.equal(result.stdout, 'notes and more\n', JSON.stringify(result.diagnostics));
    assert.equal(fs.readFileSync(path.join(configured, 'out', 'result.csv'), 'utf8'), 'a,b');
    fs.writeFileSync(path.join(configured, 'notes.txt'), 'notes');
    fs.rmSync(path.join(configured, 'out', 'result.csv'));
    fs.rmSync(path.join(configured, 'deep', 'a', 'b', 'module.py'));
  });

  const targets = (root: string) => [
    path.join(root, 'mcp_servers.json'),
    path.join(root, '.mcp.json'),
    path.join(root, '.vscode', 'settings.json'),
    path.join(root, '.vscode', 'tasks.json'),
    path.join(root, '.vscode', 'mcp.json'),
    path.join(root, '.git', 'config'),
    path.join(root, '.git', 'hooks', 'pre-commit'),
    path.join(root, '.env'),
    path.join(root, '.venv', 'bin', 'python'),
    path.join(root, 'nested', '.git', 'config'),
    path.join(root, 'env', 'bin', 'python'),
    path.join(root, 'deep', 'a', 'b', '.git', 'config'),
    path.join(root, 'deep', 'a', 'b', '.git', 'hooks', 'pre-commit'),
    path.join(root, 'deep', 'sub', '.git'),
    path.join(root, 'deep', 'a', 'tools', 'env', 'bin', 'python'),
    path.join(root, 'tools', 'servers.json'),
    path.join(root, 'data', 'later', 'servers.json'),
    path.join(root, 'project.code-workspace'),
    path.join(root, 'team.code-workspace'),
  ];

  test('Python can neither create nor change them, in a workspace that has them and one that does not', async () => {
    for (const target of [...targets(configured), ...targets(bare)]) {
      const code =
        `import os\nos.makedirs(${JSON.stringify(path.dirname(target))}, exist_ok=True)\n` +
        `with open(${JSON.stringify(target)}, "w") as f:\n    f.write('{"servers": {"evil": {"command": "touch", "args": ["/tmp/pwned"]}}}')`;
      const result = await attacker(code);
      assert.equal(result.success, false, `Python wrote ${target}`);
      assert.match(
        result.diagnostics?.message ?? '',
        /Read-only file system|Errno 30|Errno 69|Permission denied/,
        `${target}: ${result.diagnostics?.message}`,
      );
    }
    assert.deepEqual(snapshotTree(configured), before_);
    assert.deepEqual(snapshotTree(bare), bareBefore);
  });

  test('a repository or virtual environment made below the top level while the session runs is refused', async () => {
    const made = [
      path.join(configured, 'out', '.git', 'config'),
      path.join(configured, 'deep', 'fresh', '.git', 'hooks', 'pre-commit'),
      path.join(configured, 'out', 'env2', 'pyvenv.cfg'),
    ];
    for (const target of made) {
      const result = await attacker(
        `import os\nos.makedirs(${JSON.stringify(path.dirname(target))}, exist_ok=True)\n` +
          `open(${JSON.stringify(target)}, "w").write("[core]\\n\\tfsmonitor = touch /tmp/pwned\\n")`,
      );
      assert.equal(result.success, false, `Python wrote ${target}`);
      assert.equal(fs.existsSync(target), false, target);
      const fresh = await nested(
        `const fs = require('node:fs'); fs.mkdirSync(${JSON.stringify(path.dirname(target))}, { recursive: true }); fs.writeFileSync(${JSON.stringify(target)}, 'x'); return 'written'`,
      );
      assert.match(fresh, /^ok:err:/, `a fresh realm wrote ${target}: ${fresh}`);
      assert.equal(fs.existsSync(target), false, target);
    }
    // What is not metadata is still written beside it.
    const beside = await attacker(
      `open(${JSON.stringify(path.join(configured, 'out', 'gitignore.txt'))}, "w").write("x")`,
    );
    assert.equal(beside.success, true, JSON.stringify(beside.diagnostics));
    fs.rmSync(path.join(configured, 'out'), { recursive: true });
    fs.mkdirSync(path.join(configured, 'out'));
    fs.rmSync(path.join(configured, 'deep', 'fresh'), { recursive: true, force: true });
  });

  test('the sandbox is complete with workspace write on: no mechanism leaves new metadata unrefused', async () => {
    const report = engine.sandbox('pyodide')!;
    assert.deepEqual(report.gaps, [], JSON.stringify(report));
    assert.equal(report.complete, true);
  });

  test('nor can a fresh JavaScript realm that writes, renames or links through node:fs directly', async () => {
    for (const target of [...targets(configured), ...targets(bare)]) {
      const outcome = await nested(
        `const fs = require('node:fs'); fs.mkdirSync(${JSON.stringify(path.dirname(target))}, { recursive: true }); fs.writeFileSync(${JSON.stringify(target)}, 'x'); return 'written'`,
      );
      assert.match(outcome, /^ok:err:/, `${target}: ${outcome}`);
    }
    for (const body of [
      // Moving a writable folder into a protected name, or linking one there.
      `require('node:fs').renameSync(${JSON.stringify(path.join(bare, 'out'))}, ${JSON.stringify(path.join(bare, '.vscode'))}); return 'renamed'`,
      `require('node:fs').symlinkSync(${JSON.stringify(path.join(bare, 'out'))}, ${JSON.stringify(path.join(bare, '.git'))}); return 'linked'`,
      `require('node:fs').rmSync(${JSON.stringify(path.join(configured, '.git'))}, { recursive: true }); return 'removed'`,
      `require('node:fs').renameSync(${JSON.stringify(path.join(configured, '.vscode'))}, ${JSON.stringify(path.join(configured, 'out', 'moved'))}); return 'moved away'`,
    ]) {
      const outcome = await nested(body);
      assert.match(outcome, /^ok:err:/, outcome);
    }
    assert.deepEqual(snapshotTree(configured), before_);
    assert.deepEqual(snapshotTree(bare), bareBefore);
  });

  test('a new file at the top of a workspace folder is refused with a plain error, and the session goes on', async () => {
    const result = await attacker(`open(${JSON.stringify(path.join(bare, 'results.csv'))}, "w")`);
    assert.match(result.diagnostics?.message ?? '', /Read-only file system/);
    assert.equal(fs.existsSync(path.join(bare, 'results.csv')), false);
    assert.equal((await attacker('print("still here")')).stdout, 'still here\n');
  });
});

describe('a --servers file and a --wheelhouse inside a writable workspace, through the CLI', () => {
  let workspace: string;

  before(() => {
    workspace = makeWorkspace('code-mode-cli-protected-', true);
  });

  after(() => fs.rmSync(workspace, { recursive: true, force: true }));

  test('Python cannot rewrite the file the server starts MCP servers from', async () => {
    const servers = path.join(workspace, 'tools', 'servers.json');
    const connection = await connectStdio([
      '--workspace',
      workspace,
      '--pyodide-workspace-write',
      '--servers',
      servers,
      ...sandboxFlags,
    ]);
    try {
      const response = await connection.client.callTool({
        name: 'run_python',
        arguments: {
          code: `open(${JSON.stringify(servers)}, "w").write('{"servers": {"evil": {"command": "touch", "args": ["/tmp/pwned"]}}}')`,
        },
      });
      const text = JSON.stringify(response.content);
      assert.match(text, /Read-only file system/);
      assert.equal(fs.readFileSync(servers, 'utf8'), '{"servers": {}}');
    } finally {
      await connection.close();
    }
  });

  test('Python cannot add, change or move a wheel in the wheelhouse the server installs from', async () => {
    const wheelhouse = path.join(workspace, 'data', 'wheels');
    fs.mkdirSync(wheelhouse, { recursive: true });
    const wheel = buildWheel(wheelhouse, { name: 'cmhonest', version: '1.0.0', init: 'HONEST = True\n' });
    const before = fs.readFileSync(wheel);
    const connection = await connectStdio([
      '--workspace',
      workspace,
      '--pyodide-workspace-write',
      '--wheelhouse',
      wheelhouse,
      ...sandboxFlags,
    ]);
    try {
      const planted = path.join(wheelhouse, 'cmhonest-9.0.0-py3-none-any.whl');
      const response = await connection.client.callTool({
        name: 'run_python',
        arguments: {
          code: `import os
outcomes = []
for name, attempt in [
    ('plant', lambda: open(${JSON.stringify(planted)}, 'wb').write(b'PK')),
    ('change', lambda: open(${JSON.stringify(wheel)}, 'ab').write(b'more')),
    ('move', lambda: os.rename(${JSON.stringify(wheel)}, ${JSON.stringify(path.join(workspace, 'data', 'moved.whl'))})),
    ('beside', lambda: open(${JSON.stringify(path.join(workspace, 'data', 'notes.txt'))}, 'w').write('fine')),
]:
    try:
        attempt()
        outcomes.append(name + ' ok')
    except OSError as e:
        outcomes.append(name + ' refused')
print(outcomes)`,
        },
      });
      const text = JSON.stringify(response.content);
      assert.match(text, /\['plant refused', 'change refused', 'move refused', 'beside ok'\]/, text);
      assert.deepEqual(fs.readdirSync(wheelhouse), [path.basename(wheel)]);
      assert.deepEqual(fs.readFileSync(wheel), before);
    } finally {
      await connection.close();
    }
  });
});
