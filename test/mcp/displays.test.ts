// Displays through the built CLI with the SDK's real client, for both backends: display(), figures left open,
// and files shown by printing their paths (only inside the workspace and the scratch folder).
import { after, before, describe, test, type TestContext } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { BackendKind } from '../../src/engine/types';
import { connectStdio, runPython, testStorageDir, type StdioConnection } from '../support/mcp';
import { checkPng, PYTHON_PNG_ENCODER } from '../support/pythonPng';

const scratch = path.join(testStorageDir, 'scratch');
const SECRET = 'TOP-SECRET-d1spl4y-MARKER';

type ImageItem = { type: 'image'; data: string; mimeType: string };
type TextItem = { type: 'text'; text: string };

function images(raw: CallToolResult): ImageItem[] {
  return raw.content.filter((item): item is ImageItem => item.type === 'image');
}

function texts(raw: CallToolResult): string[] {
  return raw.content.filter((item): item is TextItem => item.type === 'text').map((item) => item.text);
}

/** Debian's python3-matplotlib installs for /usr/bin/python3, which need not be the python3 on PATH. */
function systemPythonWithMatplotlib(): string | undefined {
  const candidate = '/usr/bin/python3';
  return fs.existsSync(candidate) && spawnSync(candidate, ['-c', 'import matplotlib'], { stdio: 'ignore' }).status === 0
    ? candidate
    : undefined;
}

for (const backend of ['pyodide', 'python'] as BackendKind[]) {
  describe(`displays over stdio — ${backend}`, () => {
    let conn: StdioConnection;
    let workspace: string;
    let outside: string;
    /** Unique per backend and process: the scratch folder is shared by every test run on this machine. */
    const name = (stem: string) => `${stem}-${backend}-${process.pid}`;
    const run = (args: Record<string, unknown>, client: Client = conn.client) =>
      runPython(client, { backend, ...args });

    before(async () => {
      workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-workspace-'));
      outside = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-outside-'));
      conn = await connectStdio(['--backend', backend, '--workspace', workspace]);
      // The client then checks every result against run_python's output schema.
      await conn.client.listTools();
      const { result } = await run({ code: PYTHON_PNG_ENCODER });
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    });
    after(async () => {
      await conn?.close();
      fs.rmSync(workspace, { recursive: true, force: true });
      fs.rmSync(outside, { recursive: true, force: true });
      for (const file of fs.readdirSync(scratch))
        if (file.includes(`-${backend}-${process.pid}`)) fs.rmSync(path.join(scratch, file), { force: true });
    });

    test('content blocks keep the order the program made its output in: text, the display, the text after it', async () => {
      const code =
        'class Table:\n    def _repr_html_(self):\n        return "<table><td>42</td></table>"\nprint("a")\ndisplay(Table())\nprint("done")';
      const { result, raw } = await run({ code });
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.deepEqual(
        raw.content.slice(0, 3).map((item) => (item.type === 'text' ? item.text.split('\n')[0] : item.type)),
        ['a', '<table><td>42</td></table>', 'done'],
      );
      assert.match((raw.content[2] as TextItem).text, /^done\n\[ok in \d+ ms/, 'the status follows the last text');
      assert.deepEqual(
        JSON.parse((raw.content[3] as TextItem).text),
        { run_id: result.run_id, displays: [{ mime: 'text/html' }] },
        'the JSON of what the text does not say comes last',
      );
      assert.deepEqual(result.outputs, [
        { type: 'stream', name: 'stdout', text: 'a\n' },
        { type: 'display', index: 0 },
        { type: 'stream', name: 'stdout', text: 'done\n' },
      ]);
    });

    test('display() of PNG bytes made in pure Python comes back as MCP image content', async () => {
      const { result, raw } = await run({ code: 'display(make_png(24, 16), title="gradient")' });
      assert.equal(result.success, true);
      const [image, ...rest] = images(raw);
      assert.equal(rest.length, 0);
      assert.equal(image.mimeType, 'image/png');
      assert.deepEqual(checkPng(Buffer.from(image.data, 'base64')), { width: 24, height: 16 });
      assert.deepEqual(result.displays, [{ mime: 'image/png', data: image.data, title: 'gradient' }]);
      // The JSON text says only what the text and the image do not: no image bytes, no output again.
      assert.deepEqual(JSON.parse(texts(raw)[1]), {
        run_id: result.run_id,
        displays: [{ mime: 'image/png', title: 'gradient' }],
      });
    });

    test('HTML, Markdown, SVG and plain objects are displayed by their richest representation', async () => {
      const code = [
        'class Table:',
        '    def _repr_html_(self): return "<table><tr><td>42</td></tr></table>"',
        'class Notes:',
        '    def _repr_markdown_(self): return "# Findings"',
        'class Dot:',
        '    def _repr_svg_(self): return \'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><circle r="2"/></svg>\'',
        'class Plain:',
        '    def __repr__(self): return "Plain(42)"',
        'display(Table(), title="table")',
        'display(Notes(), Dot(), Plain())',
        'display({"b": [1, 2], "a": None})',
      ].join('\n');
      const { result, raw } = await run({ code });
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><circle r="2"/></svg>';
      assert.deepEqual(result.displays, [
        { mime: 'text/html', data: '<table><tr><td>42</td></tr></table>', title: 'table' },
        { mime: 'text/markdown', data: '# Findings' },
        { mime: 'image/svg+xml', data: Buffer.from(svg).toString('base64') },
        { mime: 'text/plain', data: 'Plain(42)' },
        { mime: 'text/plain', data: "{'a': None, 'b': [1, 2]}" },
      ]);
      // In the order they were displayed, then the status line and the JSON of the result.
      assert.deepEqual(texts(raw).slice(0, 4), [
        'table:\n<table><tr><td>42</td></tr></table>',
        '# Findings',
        'Plain(42)',
        "{'a': None, 'b': [1, 2]}",
      ]);
      assert.equal(raw.content[2].type, 'image', 'the SVG between the Markdown and the plain object');
      assert.deepEqual(
        images(raw).map((item) => item.mimeType),
        ['image/svg+xml'],
      );
    });

    test('a PNG saved in the scratch folder and a workspace text file are shown when their paths are printed', async () => {
      const notes = `${name('notes')}.txt`;
      fs.writeFileSync(path.join(workspace, notes), 'first line\nsecond line\n');
      const png = `${name('chart')}.png`;
      const code = [
        'import os',
        `chart = os.path.join(os.environ["CODE_MODE_SCRATCH"], "${png}")`,
        'with open(chart, "wb") as file:',
        '    file.write(make_png(10, 6))',
        'print(f"saved the chart to {chart}.")',
        `print("see '${notes}' for details")`,
      ].join('\n');
      const { result, raw } = await run({ code });
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      // The session's own scratch folder, inside <storage>/scratch.
      const own = (await run({ code: 'import os\nprint(os.environ["CODE_MODE_SCRATCH"])' })).result.stdout.trim();
      assert.equal(path.dirname(own), fs.realpathSync(scratch));
      const chart = path.join(own, png);
      const written = fs.readFileSync(chart);
      assert.deepEqual(checkPng(written), { width: 10, height: 6 });
      assert.deepEqual(result.displays, [
        { mime: 'image/png', data: written.toString('base64'), title: chart },
        { mime: 'text/plain', data: 'first line\nsecond line\n', title: notes },
      ]);
      assert.deepEqual(images(raw), [{ type: 'image', mimeType: 'image/png', data: written.toString('base64') }]);
      // After the text that printed their paths, in the order printed.
      assert.equal(raw.content[0].type === 'text' && raw.content[0].text.startsWith('saved the chart to'), true);
      assert.equal(raw.content[1].type, 'image');
      assert.equal(texts(raw)[1], `${notes}:\nfirst line\nsecond line\n`);
    });

    test('paths outside the workspace and the scratch folder are never read, through links and ".." neither', async () => {
      const secret = path.join(outside, `${name('secret')}.txt`);
      fs.writeFileSync(secret, SECRET);
      const link = path.join(scratch, `${name('link')}.txt`);
      fs.symlinkSync(secret, link);
      const besideScratch = path.join(testStorageDir, `${name('beside')}.txt`);
      fs.writeFileSync(besideScratch, SECRET);
      fs.mkdirSync(path.join(workspace, '.private'));
      fs.writeFileSync(path.join(workspace, '.private', 'token.txt'), SECRET);
      try {
        const printed = [
          '/etc/passwd',
          secret,
          link,
          path.join(scratch, '..', path.basename(besideScratch)),
          path.join('..', path.basename(outside), path.basename(secret)),
          '.private/token.txt',
        ];
        const { result, raw } = await run({ code: printed.map((p) => `print(${JSON.stringify(p)})`).join('\n') });
        assert.equal(result.success, true);
        assert.equal(result.stdout, printed.map((p) => `${p}\n`).join(''));
        assert.equal(result.displays, undefined);
        assert.equal(raw.content.length, 2, 'only the text rendering and the JSON of the result');
        const everything = JSON.stringify(raw);
        assert.ok(!everything.includes(SECRET), 'no file outside the roots was shown');
        assert.ok(!everything.includes('root:x:0:0'), '/etc/passwd was not shown');
      } finally {
        fs.rmSync(link, { force: true });
        fs.rmSync(besideScratch, { force: true });
      }
    });

    test('a run shows at most 20 displays, and one too large becomes a note', async () => {
      const many = await run({ code: 'for i in range(25):\n    display(i)' });
      assert.deepEqual(
        many.result.displays?.map((d) => d.data),
        [...Array.from({ length: 20 }, (_, i) => String(i)), '5 more display(s) not shown: at most 20 per run'],
      );
      const large = await run({ code: 'display(b"\\x89PNG\\r\\n\\x1a\\n" + bytes(4_500_000), title="huge")' });
      assert.equal(large.result.displays?.length, 1);
      const [note] = large.result.displays!;
      assert.equal(note.mime, 'text/plain');
      assert.equal(note.title, 'huge');
      assert.match(note.data, /^image\/png of 6\.0 MB not shown: a display carries at most 5 MB$/);
      assert.equal(images(large.raw).length, 0);
    });

    test('figures pyplot holds open at the end of a run come back as PNGs and are closed (stand-in pyplot)', async () => {
      // The capture code only talks to matplotlib.pyplot; a module with its interface checks it on every
      // machine, with or without matplotlib (the real one is exercised below where it is installed).
      const code = [
        PYTHON_PNG_ENCODER,
        'import sys, types',
        'open_figures = {}',
        'class Figure:',
        '    def __init__(self, label, size): self.label, self.size = label, size',
        '    def get_label(self): return self.label',
        '    def savefig(self, buffer, format, dpi, bbox_inches): buffer.write(make_png(*self.size))',
        'pyplot = types.ModuleType("matplotlib.pyplot")',
        'pyplot.get_fignums = lambda: sorted(open_figures)',
        'pyplot.figure = lambda number: open_figures[number]',
        'pyplot.close = lambda which: open_figures.clear()',
        'sys.modules["matplotlib.pyplot"] = pyplot',
        'open_figures[1] = Figure("", (3, 2))',
        'open_figures[2] = Figure("loss", (5, 4))',
      ].join('\n');
      try {
        const { result, raw } = await run({ code, session: 'figures' });
        assert.equal(result.success, true, JSON.stringify(result.diagnostics));
        assert.deepEqual(
          result.displays?.map((d) => ({
            mime: d.mime,
            title: d.title,
            size: checkPng(Buffer.from(d.data, 'base64')),
          })),
          [
            { mime: 'image/png', title: 'Figure 1', size: { width: 3, height: 2 } },
            { mime: 'image/png', title: 'loss', size: { width: 5, height: 4 } },
          ],
        );
        assert.equal(images(raw).length, 2);
        const next = await run({ code: 'print(len(open_figures))', session: 'figures' });
        assert.equal(next.result.stdout, '0\n');
        assert.equal(next.result.displays, undefined, 'figures are shown once');
      } finally {
        await run({ code: 'pass', session: 'figures', reset: true });
      }
    });

    test('a real matplotlib figure left open comes back as a PNG, on the Agg backend; a PIL image too', async (t: TestContext) => {
      // Asked without importing, so nothing (auto-install included) reacts to a missing module.
      const has = async (client: Client) =>
        (
          await run(
            {
              code: 'import importlib.util\nprint(importlib.util.find_spec("matplotlib") is not None)',
              session: 'mpl',
            },
            client,
          )
        ).result.stdout === 'True\n';
      let extra: StdioConnection | undefined;
      let client = conn.client;
      if (!(await has(client))) {
        const system = backend === 'python' ? systemPythonWithMatplotlib() : undefined;
        if (!system) {
          t.skip(
            backend === 'pyodide'
              ? 'matplotlib is not bundled with Pyodide and cannot be fetched offline'
              : 'matplotlib not installed for the workspace interpreter nor /usr/bin/python3 (apt-get install python3-matplotlib)',
          );
          return;
        }
        extra = await connectStdio(['--backend', 'python', '--python', system, '--workspace', workspace]);
        client = extra.client;
      }
      try {
        const untouched = await run(
          { code: 'import sys\ndisplay("x")\nprint("matplotlib" in sys.modules)', session: 'mpl', reset: true },
          client,
        );
        assert.equal(untouched.result.stdout, 'False\n', 'displays never import matplotlib themselves');
        const code = [
          // matplotlib requires Pillow, so wherever it runs a PIL image can be displayed (CMYK has no PNG form).
          'from PIL import Image',
          'display(Image.new("CMYK", (7, 5)), title="pil")',
          'import matplotlib.pyplot as plt',
          'plt.plot([0, 1, 2, 3], [0, 1, 4, 9], marker="o")',
          'plt.title("squares")',
          'plt.show()',
          'print(plt.get_backend())',
        ].join('\n');
        const { result, raw } = await run({ code, session: 'mpl' }, client);
        assert.equal(result.success, true, JSON.stringify(result.diagnostics));
        assert.equal(result.stdout, 'agg\n');
        assert.equal(result.stderr, '', 'no "non-interactive" warning from plt.show()');
        assert.equal(result.displays?.length, 2);
        const [pil, figure] = result.displays!;
        assert.deepEqual(
          { mime: pil.mime, title: pil.title, size: checkPng(Buffer.from(pil.data, 'base64')) },
          { mime: 'image/png', title: 'pil', size: { width: 7, height: 5 } },
        );
        assert.equal(figure.mime, 'image/png');
        assert.equal(figure.title, 'Figure 1');
        const size = checkPng(Buffer.from(figure.data, 'base64'));
        assert.ok(size.width > 300 && size.height > 200, `a figure-sized image (${size.width}×${size.height})`);
        assert.deepEqual(
          images(raw).map((item) => item.data),
          [pil.data, figure.data],
        );
        const after = await run({ code: 'print(plt.get_fignums())', session: 'mpl' }, client);
        assert.equal(after.result.stdout, '[]\n', 'shown figures are closed');
      } finally {
        await extra?.close();
      }
    });
  });
}
