// The packages tool (install and check) and auto-install through the SDK's real Client over stdio against the built
// CLI, for both backends. The wheels are built here (test/support/wheel.ts); nothing is downloaded, and the
// python backend installs into a virtual environment made for the test, never the machine's Python.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { sha256Hex } from '../../src/engine/packages/wheels';
import type { BackendKind, PackagesResult } from '../../src/engine/types';
import { connectStdio, runPython, type StdioConnection } from '../support/mcp';
import { buildWheel } from '../support/wheel';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-packages-'));
const wheel = buildWheel(path.join(work, 'wheels'), {
  name: 'cmtestpkg',
  version: '1.2.0',
  init: 'def hello(who):\n    return f"hello, {who}"\n',
});
const wheelhouse = path.join(work, 'wheelhouse');
// Two versions: a name install takes the highest.
buildWheel(wheelhouse, { name: 'cmautopkg', version: '0.2.0', init: 'VERSION = "old"\n' });
buildWheel(wheelhouse, { name: 'cmautopkg', version: '0.3.1', init: 'VERSION = "new"\n' });

after(() => fs.rmSync(work, { recursive: true, force: true }));

async function call(
  conn: StdioConnection,
  name: string,
  args: Record<string, unknown>,
): Promise<{ result: PackagesResult; raw: CallToolResult }> {
  const raw = (await conn.client.callTool({ name, arguments: args }, undefined, {
    timeout: 300_000,
  })) as CallToolResult;
  return { result: raw.structuredContent as unknown as PackagesResult, raw };
}

function text(raw: CallToolResult): string {
  return (raw.content[0] as { text: string }).text;
}

for (const backend of ['pyodide', 'python'] as BackendKind[]) {
  describe(`the packages tool over stdio — ${backend}`, () => {
    let conn: StdioConnection;
    const venv = path.join(work, 'venv');
    const install = (args: Record<string, unknown>) => call(conn, 'packages', { action: 'install', backend, ...args });
    const check = (args: Record<string, unknown>) => call(conn, 'packages', { action: 'check', backend, ...args });
    const run = (args: Record<string, unknown>) => runPython(conn.client, { backend, ...args });

    before(async () => {
      const args = ['--backend', backend, '--wheelhouse', wheelhouse];
      if (backend === 'python') {
        execFileSync('python3', ['-m', 'venv', venv]);
        args.push('--python', path.join(venv, 'bin', 'python'));
      }
      conn = await connectStdio(args);
    });
    after(async () => {
      await conn?.close();
    });

    test('the tool is listed with an action, a packages array and a session name pattern', async () => {
      const { tools } = await conn.client.listTools();
      const tool = tools.find((t) => t.name === 'packages');
      assert.ok(tool, 'packages is listed');
      assert.deepEqual(tool.inputSchema.required, ['action', 'packages']);
      assert.equal((tool.inputSchema.properties?.session as { pattern?: string }).pattern, '^[A-Za-z0-9_.-]{1,64}$');
    });

    test('a local wheel installs with its version and imports in the same session', async () => {
      // The session is live before the install: the running interpreter must see the new package.
      assert.equal((await run({ code: 'print("up")', session: 'pkgs' })).result.stdout, 'up\n');
      const { result, raw } = await install({ packages: [wheel], session: 'pkgs' });
      assert.equal(raw.isError, false, text(raw));
      assert.equal(result.success, true);
      assert.equal(result.action, 'install');
      assert.deepEqual(
        result.packages.map((p) => [p.name, p.installed, p.version]),
        [['cmtestpkg', true, '1.2.0']],
      );
      assert.match(text(raw), /^ok cmtestpkg 1\.2\.0/);
      const { result: ran } = await run({ code: 'import cmtestpkg\nprint(cmtestpkg.hello("pkgs"))', session: 'pkgs' });
      assert.equal(ran.stdout, 'hello, pkgs\n', JSON.stringify(ran.diagnostics));
    });

    test('a check reports versions, a missing package, and an unmet specifier apart; it installs nothing', async () => {
      const { result, raw } = await check({
        packages: ['cmtestpkg', 'cm-not-installed-xyz', 'cmtestpkg>=2'],
        session: 'pkgs',
      });
      assert.equal(raw.isError, false);
      assert.equal(result.action, 'check');
      assert.equal(result.success, false);
      const [present, missing, tooOld] = result.packages;
      assert.deepEqual([present.installed, present.version], [true, '1.2.0']);
      assert.deepEqual([missing.installed, missing.error], [false, 'not installed']);
      assert.deepEqual([tooOld.installed, tooOld.version], [false, '1.2.0']);
      assert.match(tooOld.error ?? '', /1\.2\.0 does not meet cmtestpkg>=2/);
      // The package that is there in another version is not counted as missing.
      assert.equal(
        result.message,
        '1 of 3 not installed, 1 of 3 installed in a version that does not meet the request (cmtestpkg==1.2.0); cm-not-installed-xyz: not installed',
      );
      assert.deepEqual(text(raw).split('\n'), [
        'ok cmtestpkg 1.2.0',
        'MISSING cm-not-installed-xyz: not installed',
        'UNMET cmtestpkg>=2 1.2.0: version 1.2.0 does not meet cmtestpkg>=2',
        `[1 of 3 installed as requested, 1 in another version; ${backend}, session "pkgs", ${result.duration_ms} ms]`,
      ]);
    });

    test('a wheel whose sha256 does not match is refused; the right one is accepted', async () => {
      const wrong = await install({ packages: [`${wheel}#sha256=${'0'.repeat(64)}`], session: 'hashes' });
      assert.equal(wrong.raw.isError, true);
      assert.equal(wrong.result.packages[0].installed, false);
      assert.match(wrong.result.packages[0].error ?? '', /sha256 mismatch/);
      assert.equal(
        (await check({ packages: ['cmtestpkg'], session: 'hashes' })).result.packages[0].installed,
        backend === 'python',
      );
      const right = await install({
        packages: [`${wheel}#sha256=${sha256Hex(fs.readFileSync(wheel))}`],
        session: 'hashes',
      });
      assert.equal(right.result.success, true, text(right.raw));
    });

    test('shell syntax is refused with the PEP 508 reason, nothing is installed, and the server keeps serving', async () => {
      const { result, raw } = await install({ packages: ['cmtestpkg', 'numpy; rm -rf ~'], session: 'refused' });
      assert.equal(raw.isError, true);
      assert.deepEqual(result.packages, []);
      assert.match(result.message, /PEP 508/);
      assert.match(result.message, /environment markers/);
      for (const bad of ['--index-url=http://evil.example/simple', '-e .', '../x.whl']) {
        const refused = await install({ packages: [bad], session: 'refused' });
        assert.equal(refused.raw.isError, true, bad);
        assert.match(refused.result.message, /refused/, bad);
      }
      assert.equal(
        (await run({ code: 'print("still serving")', session: 'refused' })).result.stdout,
        'still serving\n',
      );
    });

    test('a name is found in the wheelhouse first, highest version', async () => {
      const { result, raw } = await install({ packages: ['cmautopkg'], session: 'wheelhouse' });
      assert.equal(result.success, true, text(raw));
      assert.deepEqual([result.packages[0].name, result.packages[0].version], ['cmautopkg', '0.3.1']);
      if (backend === 'pyodide') assert.equal(result.packages[0].source, 'wheelhouse');
      assert.equal(
        (await run({ code: 'import cmautopkg; print(cmautopkg.VERSION)', session: 'wheelhouse' })).result.stdout,
        'new\n',
      );
    });

    test('a name that cannot be downloaded fails with a clear message instead of hanging', async () => {
      const name = backend === 'pyodide' ? 'six' : 'definitely-not-a-package-xyz';
      const { result } = await install({ packages: [name], session: 'offline' });
      const status = result.packages[0];
      // With network, Pyodide's six would install: the point is that the call returns either way.
      if (!status.installed) {
        assert.match(
          status.error ?? '',
          backend === 'pyodide'
            ? /no network: Pyodide packages cannot be downloaded here; install from a local \.whl path.*\(--wheelhouse \/ CODE_MODE_WHEELHOUSE\)/
            : /No matching distribution|no network/,
        );
      }
    });

    if (backend === 'pyodide') {
      test('auto-install: ModuleNotFoundError installs the package from the wheelhouse once and runs the code again', async () => {
        const { result, raw } = await run({
          code: 'print("start")\nimport cmautopkg\nprint(cmautopkg.VERSION)',
          session: 'auto',
        });
        assert.equal(result.success, true, JSON.stringify(result.diagnostics));
        assert.deepEqual(result.auto_installed, ['cmautopkg==0.3.1']);
        // The result is the second run's alone.
        assert.equal(result.stdout, 'start\nnew\n');
        assert.match(text(raw), /auto-installed cmautopkg==0\.3\.1/);
      });

      test('auto-install that cannot find the package says it tried, once, and the error stands', async () => {
        const { result } = await run({ code: 'import cm_missing_module_xyz', session: 'auto' });
        assert.equal(result.success, false);
        assert.equal(result.auto_installed, undefined);
        assert.match(result.diagnostics?.message ?? '', /ModuleNotFoundError: No module named 'cm_missing_module_xyz'/);
        assert.equal(
          (result.diagnostics?.hints ?? []).filter((h) => h.startsWith('auto-install')).length,
          0,
          'not a hint from past fixes',
        );
        assert.match(
          result.diagnostics?.auto_install ?? '',
          /tried to install "cm_missing_module_xyz" for the missing module "cm_missing_module_xyz" and failed: /,
        );
      });

      test('Pyodide installs live in the session: a reset loses them', async () => {
        await install({ packages: [wheel], session: 'reset' });
        assert.equal((await run({ code: 'import cmtestpkg', session: 'reset' })).result.success, true);
        // cmtestpkg is not in the wheelhouse, so auto-install cannot bring it back offline.
        const { result } = await run({ code: 'import cmtestpkg', session: 'reset', reset: true });
        assert.equal(result.success, false);
        assert.match(result.diagnostics?.message ?? '', /No module named 'cmtestpkg'/);
      });
    } else {
      test('installs go into the selected environment, and ModuleNotFoundError is not auto-installed', async () => {
        const { result } = await run({ code: 'import sys\nprint(sys.prefix)', session: 'env' });
        assert.equal(fs.realpathSync(result.stdout.trim()), fs.realpathSync(venv));
        const missing = await run({ code: 'import cm_missing_module_xyz', session: 'env' });
        assert.equal(missing.result.success, false);
        assert.equal(missing.result.auto_installed, undefined);
      });
    }
  });
}
