// Every backend gives a run's output back in the order the program made it (`outputs`), as a notebook shows it:
// printed text, then the table it displayed, then the text after it. And only agents' runs attach the files
// whose paths they print; a person's run shows what it displays.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { BACKEND_KINDS, type OutputItem } from '../../src/engine/types';
import { localJupyter } from '../support/jupyter';
import { testStorageDir } from '../support/mcp';

const TABLE = 'class Table:\n    def _repr_html_(self):\n        return "<table><tr><td>42</td></tr></table>"\n';

/** The outputs with each display replaced by its mime, so one assertion shows the whole order. */
function shape(outputs: OutputItem[] | undefined, displays: { mime: string }[] | undefined): string[] {
  return (outputs ?? []).map((item) =>
    item.type === 'stream'
      ? `${item.name}:${item.text}`
      : item.type === 'display'
        ? `display:${displays?.[item.index]?.mime}`
        : `execute_result:${item.text}`,
  );
}

for (const backend of BACKEND_KINDS) {
  describe(`output order on the ${backend} backend`, () => {
    let engine: Engine;
    let workspace: string;

    before(() => {
      workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-order-')));
      fs.writeFileSync(path.join(workspace, 'data.csv'), 'a,b\n1,2\n');
      engine = createEngine({ storageDir: testStorageDir, workspaceRoots: [workspace], jupyter: localJupyter });
    });
    after(async () => {
      await engine.dispose();
      fs.rmSync(workspace, { recursive: true, force: true });
    });

    test('print, display, print comes back as text, table, text; the streams and displays stay as before', async () => {
      const result = await engine.run({
        code: `${TABLE}print("a")\ndisplay(Table())\nprint("done")`,
        backend,
        session: 'order',
      });
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.deepEqual(shape(result.outputs, result.displays), ['stdout:a\n', 'display:text/html', 'stdout:done\n']);
      assert.equal(result.stdout, 'a\ndone\n');
      assert.equal(result.displays?.length, 1);
    });

    test('a line not yet ended, and stderr, come before the display that follows them', async () => {
      const code = `${TABLE}import sys\nprint("partial", end="")\nsys.stderr.write("warned\\n")\ndisplay(Table())\nprint(" after")`;
      const result = await engine.run({ code, backend, session: 'order' });
      const items = shape(result.outputs, result.displays);
      const table = items.indexOf('display:text/html');
      assert.ok(table > 0, items.join(' | '));
      assert.deepEqual(items.slice(0, table).sort(), ['stderr:warned\n', 'stdout:partial'], items.join(' | '));
      assert.deepEqual(items.slice(table + 1), ['stdout: after\n']);
      // The stream items of one stream, joined, are that stream's text in the result.
      const joined = (name: string) =>
        (result.outputs ?? []).map((item) => (item.type === 'stream' && item.name === name ? item.text : '')).join('');
      assert.equal(joined('stdout'), result.stdout);
      assert.equal(joined('stderr'), result.stderr);
    });

    test("a printed file name attaches the file to an agent's run, not to a person's", async () => {
      const code = 'print("read from data.csv")';
      const agents = await engine.run({ code, backend, session: 'order', origin: 'mcp' });
      assert.deepEqual(
        agents.displays?.map((display) => display.title),
        ['data.csv'],
      );
      assert.deepEqual(shape(agents.outputs, agents.displays), ['stdout:read from data.csv\n', 'display:text/csv']);
      const persons = await engine.run({ code, backend, session: 'order', origin: 'command' });
      assert.equal(persons.stdout, 'read from data.csv\n');
      assert.equal(persons.displays, undefined);
      assert.deepEqual(shape(persons.outputs, persons.displays), ['stdout:read from data.csv\n']);
    });
  });
}
