// Escape attempts from Pyodide: each claim of the least-authority set-up, tried the way hostile code would.
// Python reaches the worker's JS globals through `import js`; what it must not reach is the host machine.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { testStorageDir } from '../support/mcp';

describe('Pyodide least authority', () => {
  let engine: Engine;
  let outside: string;
  const run = (code: string) => engine.run({ code, backend: 'pyodide', session: 'sandbox' });
  /** Promise callbacks run after the cell; park their outcome in a JS global and read it in the next cell. */
  const settle = async (jsPromiseExpr: string): Promise<string> => {
    await run(`import js\njs.globalThis.probe = "pending"\n(${jsPromiseExpr}).then(lambda v: setattr(js.globalThis, "probe", "ok:" + str(v)), lambda e: setattr(js.globalThis, "probe", "refused:" + str(e)))`);
    for (let i = 0; i < 50; i++) {
      const { stdout } = await run('import js\nprint(js.globalThis.probe)');
      if (stdout.trim() !== 'pending') return stdout.trim();
      await new Promise((r) => setTimeout(r, 100));
    }
    return 'pending';
  };

  before(async () => {
    process.env.CODE_MODE_TEST_SECRET = 'do-not-leak';
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-outside-'));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'host secret');
    engine = createEngine({ storageDir: testStorageDir });
  });
  after(async () => {
    await engine?.dispose();
    fs.rmSync(outside, { recursive: true, force: true });
    delete process.env.CODE_MODE_TEST_SECRET;
  });

  test('killing the parent process is refused and the server lives on', async () => {
    const result = await run('import js\njs.process.kill(js.process.ppid, 9)');
    assert.equal(result.success, false);
    assert.match(result.diagnostics?.message ?? '', /process\.kill is not available/);
    assert.equal((await run('print("still here")')).stdout, 'still here\n');
  });

  test("Node's builtin modules are out of reach through process", async () => {
    const result = await run('import js\njs.process.getBuiltinModule("child_process")');
    assert.match(result.diagnostics?.message ?? '', /not available/);
    const binding = await run('import js\njs.process.binding("spawn_sync")');
    assert.match(binding.diagnostics?.message ?? '', /not available/);
  });

  test('spawning a process through a dynamic import is refused by the permission model', async () => {
    const marker = path.join(outside, 'pwned');
    const outcome = await settle(`js.Function.new("return import('node:child_process').then(cp => cp.execFileSync('touch', ['${marker}']))")()`);
    assert.match(outcome, /^refused:.*(restricted|denied)/i);
    assert.equal(fs.existsSync(marker), false);
  });

  test('host files outside the bundle and cache can be neither read nor written', async () => {
    const read = await settle(`js.Function.new("return import('node:fs').then(fs => fs.readFileSync('${path.join(outside, 'secret.txt')}', 'utf8'))")()`);
    assert.match(read, /^refused:/);
    const written = path.join(outside, 'written.txt');
    const write = await settle(`js.Function.new("return import('node:fs').then(fs => fs.writeFileSync('${written}', 'x'))")()`);
    assert.match(write, /^refused:/);
    assert.equal(fs.existsSync(written), false);
  });

  test("the host's environment variables never reach Python", async () => {
    const result = await run('import js, os\nprint(os.environ.get("CODE_MODE_TEST_SECRET"), getattr(js.process.env, "CODE_MODE_TEST_SECRET", None), list(js.Object.keys(js.process.env)))');
    assert.equal(result.stdout, 'None None []\n');
  });
});
