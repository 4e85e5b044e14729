// Every backend runs a person's file the way `python file.py` would: from its folder, with `__file__`, its
// folder first on sys.path and tracebacks at the file's own lines; and puts the session back afterwards.
// Agents' runs start in the workspace. Pyodide sees the workspace at its real path, read-only.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { contractTargets } from '../support/contractTargets';
import { testStorageDir } from '../support/mcp';
import { sandboxUnderTest } from '../support/sandboxUnderTest';

const MAIN = [
  'import os, sys',
  'from demo import fib',
  'print(open("data.txt").read(), fib(10), __file__ == os.path.abspath("main.py"), os.getcwd() == os.path.dirname(__file__), __name__, sys.argv == [__file__])',
  'print(1 / 0)',
  '',
].join('\n');

for (const target of contractTargets()) {
  const backend = target.backend;
  describe(`script runs on the ${target.label}`, () => {
    let engine: Engine;
    let workspace: string;
    let folder: string;
    let mainFile: string;
    const run = (code: string, script?: { path: string; firstLine: number; cwd?: string }) =>
      engine.run({ code, backend, session: 'scripts', script });

    before(async () => {
      workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-workspace-')));
      // A hub's kernel runs as the hub's user, who may read the workspace as any other user may.
      fs.chmodSync(workspace, 0o755);
      folder = path.join(workspace, 'project');
      fs.mkdirSync(folder);
      fs.writeFileSync(path.join(folder, 'data.txt'), 'data next to the file');
      fs.writeFileSync(
        path.join(folder, 'demo.py'),
        'def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n',
      );
      mainFile = path.join(folder, 'main.py');
      fs.writeFileSync(mainFile, MAIN);
      engine = createEngine({
        storageDir: testStorageDir,
        pyodide: { sandbox: sandboxUnderTest },
        workspaceRoots: [workspace],
        jupyter: await target.setUp(),
      });
    });
    after(async () => {
      await engine.dispose();
      await target.tearDown();
      fs.rmSync(workspace, { recursive: true, force: true });
    });

    test("an agent's run starts in the workspace folder", async () => {
      const result = await run('import os\nprint(os.getcwd())');
      assert.equal(result.stdout, `${workspace}\n`);
    });

    test('a file runs from its folder, with __file__, its siblings importable, and the real exception name at its line', async () => {
      const result = await run(MAIN, { path: mainFile, firstLine: 1, cwd: folder });
      assert.equal(result.stdout, 'data next to the file 55 True True __main__ True\n');
      assert.equal(result.diagnostics?.error_type, 'RuntimeError');
      assert.equal(result.diagnostics?.exception, 'ZeroDivisionError');
      assert.match(
        result.diagnostics?.traceback ?? '',
        new RegExp(`File "${mainFile}", line 4, in <module>\\n\\s+print\\(1 / 0\\)`),
      );
    });

    test("a selection's traceback points at its line in the file", async () => {
      const result = await run('print(1 / 0)\n', { path: mainFile, firstLine: 4, cwd: folder });
      assert.match(result.diagnostics?.traceback ?? '', new RegExp(`File "${mainFile}", line 4`));
    });

    test('after a script run the session is as it was: folder, __file__, sys.path, argv', async () => {
      const before = await run(
        'import os, sys\nprint(os.getcwd(), "__file__" in globals(), sys.path.count(%r), len(sys.argv))'.replace(
          '%r',
          JSON.stringify(folder),
        ),
      );
      await run(MAIN, { path: mainFile, firstLine: 1, cwd: folder });
      const after = await run(
        'import os, sys\nprint(os.getcwd(), "__file__" in globals(), sys.path.count(%r), len(sys.argv))'.replace(
          '%r',
          JSON.stringify(folder),
        ),
      );
      assert.equal(after.stdout, before.stdout);
      assert.equal(after.stdout.startsWith(`${workspace} False 0`), true, after.stdout);
    });

    test('a working folder the interpreter cannot enter is said on stderr, and the run goes on', async () => {
      const result = await run('print("ran")', {
        path: path.join(os.tmpdir(), 'no-such-folder', 'x.py'),
        firstLine: 1,
        cwd: path.join(os.tmpdir(), 'no-such-folder'),
      });
      assert.equal(result.stdout, 'ran\n');
      assert.match(result.stderr, /\[code-mode\] cannot run in .*no-such-folder/);
    });

    if (backend === 'pyodide') {
      test('Pyodide sees the workspace read-only; the scratch folder stays writable', async () => {
        const write = await run(`open(${JSON.stringify(path.join(folder, 'new.txt'))}, "w")`);
        assert.equal(write.diagnostics?.exception, 'OSError');
        assert.match(write.diagnostics?.message ?? '', /Read-only file system/);
        const remove = await run(`import os\nos.remove(${JSON.stringify(path.join(folder, 'data.txt'))})`);
        assert.match(remove.diagnostics?.message ?? '', /Read-only file system/);
        assert.equal(fs.existsSync(path.join(folder, 'data.txt')), true);
        assert.equal(fs.existsSync(path.join(folder, 'new.txt')), false);
        const scratch = await run(
          'import os\np = os.path.join(os.environ["CODE_MODE_SCRATCH"], "ok.txt")\nopen(p, "w").write("fine")\nprint(open(p).read())',
        );
        assert.equal(scratch.stdout, 'fine\n');
      });

      test('a local module named like a PyPI package is never auto-installed', async () => {
        fs.mkdirSync(path.join(workspace, 'lib'));
        fs.writeFileSync(path.join(workspace, 'lib', 'six.py'), 'MINE = True\n');
        const result = await run('import six');
        assert.equal(result.diagnostics?.exception, 'ModuleNotFoundError');
        assert.equal(result.auto_installed, undefined);
        const note = result.diagnostics?.auto_install ?? '';
        assert.match(note, /"six" was not installed: it is your own module \(.*lib\/six\.py\)/);
        assert.doesNotMatch(note, /auto-install tried/);
      });
    }
  });
}
