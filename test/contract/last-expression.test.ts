// Every backend shows the value of a run's last expression, as a notebook cell does (Jupyter's execute_result): after
// what the code printed, as its repr, with its rich form (an HTML table) beside it when it has one; nothing for None
// or a trailing `;`, and nothing when the run is a file's, as `python file.py` (Run File) asks. And `plt.show()` shows
// each figure where the program made it, as Jupyter's inline backend does.
import { after, before, describe, test, type TestContext } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { renderResultText } from '../../src/engine/result';
import type { OutputItem, RunResult } from '../../src/engine/types';
import { localJupyter } from '../support/jupyter';
import { checkPng, PYTHON_PNG_ENCODER } from '../support/pythonPng';
import { testStorageDir } from '../support/mcp';
import { contractBackends } from '../support/sandboxUnderTest';

const TABLE = [
  'class Table:',
  '    def _repr_html_(self):',
  '        return "<table><tr><td>42</td></tr></table>"',
  '    def __repr__(self):',
  '        return "Table(42)"',
  '',
].join('\n');

/** Debian's python3-matplotlib installs for /usr/bin/python3, which need not be the python3 on PATH. */
function systemPythonWithMatplotlib(): string | undefined {
  const candidate = '/usr/bin/python3';
  return fs.existsSync(candidate) && spawnSync(candidate, ['-c', 'import matplotlib'], { stdio: 'ignore' }).status === 0
    ? candidate
    : undefined;
}

/** The outputs with each display replaced by its mime, so one assertion shows the whole order. */
function shape(result: RunResult): string[] {
  return (result.outputs ?? []).map((item: OutputItem) => {
    if (item.type === 'stream') return `${item.name}:${item.text}`;
    const mime = item.index === undefined ? undefined : result.displays?.[item.index]?.mime;
    if (item.type === 'display') return `display:${mime}`;
    return `execute_result:${item.text}${mime ? ` (${mime})` : ''}`;
  });
}

for (const backend of contractBackends) {
  describe(`the last expression's value and plt.show() on the ${backend} backend`, () => {
    let engine: Engine;
    let workspace: string;
    const run = (
      code: string,
      more: { echoLastExpression?: boolean; script?: { path: string; firstLine: number } } = {},
    ) => engine.run({ code, backend, session: 'last', ...more });

    before(() => {
      workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-last-')));
      engine = createEngine({
        storageDir: testStorageDir,
        workspaceRoots: [workspace],
        jupyter: localJupyter,
        // Where the python backend has matplotlib for the plt.show() case; the others do not depend on it.
        ...(systemPythonWithMatplotlib() ? { pythonPath: systemPythonWithMatplotlib() } : {}),
      });
    });
    after(async () => {
      await engine.dispose();
      fs.rmSync(workspace, { recursive: true, force: true });
    });

    test('the last expression comes back as its repr after what the code printed, and in the text a model reads', async () => {
      const result = await run('x = 41\nprint("printed")\nx + 1');
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.deepEqual(shape(result), ['stdout:printed\n', 'execute_result:42']);
      // Not printed: stdout is what the code wrote.
      assert.equal(result.stdout, 'printed\n');
      assert.equal(result.displays, undefined);
      assert.match(renderResultText(result), /^printed\n42\n\[ok in /);
      const text = await run('"é" * 2');
      assert.deepEqual(shape(text), ["execute_result:'éé'"]);
    });

    test('None, a trailing semicolon and a statement show nothing', async () => {
      for (const code of ['x = 1', 'x;', 'x  ;  # quiet', 'None', 'print("p")', 'def f():\n    return 5']) {
        const result = await run(code);
        assert.equal(result.success, true, `${code}: ${JSON.stringify(result.diagnostics)}`);
        assert.deepEqual(
          (result.outputs ?? []).filter((item) => item.type === 'execute_result'),
          [],
          code,
        );
      }
    });

    test('a value with a rich form comes back as it (an HTML table) with its repr beside it, after displays', async () => {
      const result = await run(`${TABLE}print("a")\ndisplay(Table())\nTable()`);
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.deepEqual(shape(result), ['stdout:a\n', 'display:text/html', 'execute_result:Table(42) (text/html)']);
      const last = result.outputs?.at(-1);
      assert.ok(last?.type === 'execute_result' && last.index !== undefined);
      assert.equal(result.displays?.[last.index]?.data, '<table><tr><td>42</td></tr></table>');
      // A model reads the repr, not the markup.
      assert.match(renderResultText(result), /^a\nTable\(42\)\n\[ok in /);
    });

    test("an error in the last expression or in its repr is the run's error", async () => {
      const failing = await run('print("before")\n1 / 0');
      assert.equal(failing.diagnostics?.exception, 'ZeroDivisionError');
      assert.deepEqual(shape(failing), ['stdout:before\n']);
      const badRepr = await run('class Bad:\n    def __repr__(self):\n        raise ValueError("no repr")\nBad()');
      assert.equal(badRepr.diagnostics?.exception, 'ValueError');
      assert.match(badRepr.diagnostics?.message ?? '', /no repr/);
    });

    test('a run without the echo (Run File) shows only what the code printed, as `python file.py` does', async () => {
      const file = path.join(workspace, 'script.py');
      const code = 'y = 6 * 7\nprint("ran")\ny';
      fs.writeFileSync(file, code);
      const asFile = await run(code, { echoLastExpression: false, script: { path: file, firstLine: 1 } });
      assert.equal(asFile.success, true, JSON.stringify(asFile.diagnostics));
      assert.deepEqual(shape(asFile), ['stdout:ran\n']);
      // Lines of the same file (Run Selection) do show it.
      const selection = await run('y', { script: { path: file, firstLine: 3 } });
      assert.deepEqual(shape(selection), ['execute_result:42']);
    });

    test('plt.show() shows the open figures there and then (stand-in matplotlib, on every backend)', async () => {
      // The wrapping only talks to pyplot's interface: a package with it checks the import hook and show() on every
      // machine, Pyodide included, with or without matplotlib (the real one is exercised below where it is installed).
      const folder = path.join(workspace, 'standin', 'matplotlib');
      fs.mkdirSync(folder, { recursive: true });
      fs.writeFileSync(path.join(folder, '__init__.py'), '');
      fs.writeFileSync(
        path.join(folder, 'pyplot.py'),
        [
          PYTHON_PNG_ENCODER,
          'class Figure:',
          '    def __init__(self, size): self.size = size',
          '    def get_label(self): return ""',
          '    def savefig(self, buffer, format, dpi, bbox_inches): buffer.write(make_png(*self.size))',
          'open_figures = {}',
          'def get_backend(): return "agg"',
          'def get_fignums(): return sorted(open_figures)',
          'def figure(number): return open_figures[number]',
          'def close(which): open_figures.clear()',
          'def plot(width): open_figures[len(open_figures) + 1] = Figure((width, 2))',
          'def show(): raise AssertionError("the original show() of an off-screen backend shows nothing")',
        ].join('\n'),
      );
      const code = [
        'import sys',
        `sys.path.insert(0, ${JSON.stringify(path.dirname(folder))})`,
        'import matplotlib.pyplot as plt',
        'print("a")',
        'plt.plot(3)',
        'plt.show()',
        'print("b")',
        'plt.plot(5)',
        'plt.show()',
        'print(plt.get_fignums())',
      ].join('\n');
      const result = await engine.run({ code, backend, session: 'standin' });
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.deepEqual(shape(result), [
        'stdout:a\n',
        'display:image/png',
        'stdout:b\n',
        'display:image/png',
        'stdout:[]\n',
      ]);
      assert.deepEqual(
        result.displays?.map((display) => checkPng(Buffer.from(display.data, 'base64'))),
        [
          { width: 3, height: 2 },
          { width: 5, height: 2 },
        ],
      );
    });

    test('plt.show() shows each figure where the program made it, and closes it', async (t: TestContext) => {
      const has = await run('import importlib.util\nprint(importlib.util.find_spec("matplotlib") is not None)');
      if (has.stdout !== 'True\n') {
        t.skip(
          backend === 'pyodide'
            ? 'matplotlib is not bundled with Pyodide and cannot be fetched offline'
            : 'matplotlib is not installed for this interpreter (apt-get install python3-matplotlib)',
        );
        return;
      }
      const code = [
        'import matplotlib.pyplot as plt',
        'print("first")',
        'plt.plot([1, 2, 3])',
        'plt.show()',
        'print("open after show:", plt.get_fignums())',
        'plt.plot([3, 2, 1])',
        'plt.show()',
        'print("last")',
        'plt.plot([2, 2, 2]);',
      ].join('\n');
      const result = await run(code);
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.deepEqual(shape(result), [
        'stdout:first\n',
        'display:image/png',
        'stdout:open after show: []\n',
        'display:image/png',
        'stdout:last\n',
        // The figure still open when the run ends.
        'display:image/png',
      ]);
      const next = await run('print(plt.get_fignums())');
      assert.equal(next.stdout, '[]\n');
      assert.equal(next.displays, undefined, 'figures are shown once');
    });
  });
}
