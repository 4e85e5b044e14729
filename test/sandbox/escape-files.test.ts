// The escape suite's files part (escape.test.ts says what the suite is): host files outside the allowed folders,
// links in the workspace leading out of it, the workspace itself, and the snapshot and code cache sessions start from.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { codeCacheKeepsImports } from '../../src/engine/backends/pyodide/emscriptenScript';
import { escapeTarget } from '../support/escapeTarget';
import { testStorageDir } from '../support/mcp';
import { settleInWorker } from '../support/pyodideProbe';
import { underDeno } from '../support/sandboxUnderTest';

describe('Pyodide sandbox escape suite', () => {
  const host = escapeTarget();
  const { attacker, nested, assertUnharmed } = host;

  describe('files', () => {
    test('host files outside the allowed folders can be neither read nor written, from either realm', async () => {
      const secret = path.join(host.outside, 'secret.txt');
      const written = path.join(host.outside, 'written.txt');
      for (const attempt of [
        await settleInWorker(
          attacker,
          `import('node:fs').then((fs) => fs.readFileSync(${JSON.stringify(secret)}, 'utf8'))`,
        ),
        await nested(`return require('node:fs').readFileSync(${JSON.stringify(secret)}, 'utf8')`),
        await nested(`return require('node:fs').readFileSync('/etc/passwd', 'utf8')`),
        await nested(`return require('node:fs').readdirSync(${JSON.stringify(os.homedir())}).join(',')`),
        await nested(`require('node:fs').writeFileSync(${JSON.stringify(written)}, 'x'); return 'written'`),
      ]) {
        assert.doesNotMatch(attempt, /host secret|root:|^ok:ok:|^ok:(?!err)/, attempt);
      }
      assert.equal(fs.existsSync(written), false);
      const python = await attacker(`print(open(${JSON.stringify(secret)}).read())`);
      assert.match(python.diagnostics?.message ?? '', /FileNotFoundError/);
      await assertUnharmed();
    });

    test('symbolic links in the workspace that lead out of it lead nowhere, from either realm', async () => {
      const links = ['secret-link.txt', path.join('outside-link', 'secret.txt')].map((name) =>
        path.join(host.workspace, name),
      );
      for (const link of links) {
        const python = await attacker(`print(open(${JSON.stringify(link)}).read())`);
        assert.equal(python.success, false, `Python read ${link}: ${python.stdout}`);
        const fresh = await nested(`return require('node:fs').readFileSync(${JSON.stringify(link)}, 'utf8')`);
        assert.match(fresh, /^ok:err:/, `a fresh realm read ${link}: ${fresh}`);
      }
      const dangling = await nested(
        `require('node:fs').writeFileSync(${JSON.stringify(path.join(host.workspace, 'dangling-link.txt'))}, 'x'); return 'created'`,
      );
      assert.match(dangling, /^ok:err:/);
      assert.equal(
        fs.existsSync(path.join(host.outside, 'not-yet.txt')),
        false,
        'a write through a link created a file outside',
      );
      await assertUnharmed();
    });

    test("the workspace can be read but not changed, even from a fresh realm that skips Pyodide's file layer", async () => {
      const notes = path.join(host.workspace, 'notes.txt');
      assert.equal((await attacker(`print(open(${JSON.stringify(notes)}).read())`)).stdout, 'the workspace\n');
      for (const attempt of [
        await nested(`require('node:fs').writeFileSync(${JSON.stringify(notes)}, 'changed'); return 'changed'`),
        await nested(
          `require('node:fs').writeFileSync(${JSON.stringify(path.join(host.workspace, 'dropped.txt'))}, 'x'); return 'dropped'`,
        ),
        await settleInWorker(attacker, `import('node:fs').then((fs) => fs.unlinkSync(${JSON.stringify(notes)}))`),
      ]) {
        assert.doesNotMatch(attempt, /^ok:ok:|^ok:(?!err)/, attempt);
      }
      assert.equal(fs.readFileSync(notes, 'utf8'), 'the workspace');
      assert.equal(fs.existsSync(path.join(host.workspace, 'dropped.txt')), false);
    });

    test('the snapshot and code cache other sessions start from cannot be changed', async () => {
      const cacheDir = fs.realpathSync(path.join(testStorageDir, 'pyodide-cache'));
      // Each runtime keeps its own snapshot (snapshotCache.ts): the one this engine's sessions start from. Where the
      // runtime can use one (emscriptenScript.ts), V8's code cache of Pyodide's script is loaded the same way.
      const names = fs.readdirSync(cacheDir);
      const snapshot = names.find(
        (name) => name.endsWith('.snapshot') && name.endsWith('.deno.snapshot') === underDeno,
      );
      assert.ok(snapshot, 'no snapshot was cached');
      const codeCache = names.find((name) => name.endsWith('.codecache'));
      assert.equal(codeCache !== undefined, !underDeno && (await codeCacheKeepsImports()), `code cache: ${codeCache}`);
      for (const file of [snapshot, ...(codeCache ? [codeCache] : [])].map((name) => path.join(cacheDir, name))) {
        const digest = () => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
        const before = digest();
        for (const attempt of [
          await nested(`require('node:fs').writeFileSync(${JSON.stringify(file)}, 'poison'); return 'overwritten'`),
          await nested(
            `require('node:fs').appendFileSync(${JSON.stringify(`${file}.sha256`)}, 'x'); return 'appended'`,
          ),
          await nested(`require('node:fs').rmSync(${JSON.stringify(file)}); return 'removed'`),
          await settleInWorker(
            attacker,
            `import('node:fs').then((fs) => fs.writeFileSync(${JSON.stringify(file)}, 'poison'))`,
          ),
        ]) {
          assert.doesNotMatch(attempt, /^ok:ok:|^ok:(?!err)/, attempt);
        }
        assert.equal(digest(), before, file);
      }
      const fresh = await host.engine.run({
        code: 'print(1 + 1)',
        backend: 'pyodide',
        session: 'after-snapshot-attack',
      });
      assert.equal(fresh.stdout, '2\n');
      await host.engine.resetSession('after-snapshot-attack', 'pyodide');
    });
  });
});
