// Deno as the Pyodide sandbox (src/engine/sandbox/deno.ts): the binary is found, the report says so, and the
// permissions denoArgs grants hold for a real `deno run` (the optional dependency's binary): reads and writes
// exactly where the mounts say, read-only folders inside writable ones, paths with commas, and symbolic links
// that lead out. The whole Pyodide host under Deno is attacked in test/sandbox (npm run test:sandbox:deno).
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  DENO_VERSION,
  deno,
  denoArgs,
  denoEnvironment,
  denoTarget,
  symlinkDenials,
} from '../../src/engine/sandbox/deno';
import type { Mount } from '../../src/engine/sandbox/fileView';
import { sandboxReport } from '../../src/engine/sandbox/index';
import { SnapshotCache } from '../../src/engine/backends/pyodide/snapshotCache';
import { assetsDir } from '../../src/engine/paths';
import { silentLogger } from '../../src/engine/types';

describe('Deno as the Pyodide sandbox', () => {
  let root: string;
  let outside: string;

  before(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-deno-')));
    outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-deno-outside-')));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    for (const dir of ['work/.vscode', 'work/src', 'readonly', 'with, a comma'])
      fs.mkdirSync(path.join(root, dir), { recursive: true });
    fs.writeFileSync(path.join(root, 'readonly', 'notes.txt'), 'notes');
    fs.writeFileSync(path.join(root, 'with, a comma', 'notes.txt'), 'notes');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'work', 'src', 'secret-link'));
    fs.symlinkSync(path.join(root, 'readonly', 'notes.txt'), path.join(root, 'work', 'src', 'notes-link'));
    fs.symlinkSync(path.join(root, 'work', 'src'), path.join(root, 'readonly', 'src-link'));
  });

  after(() => {
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  const mounts = (): Mount[] => [
    { path: path.join(root, 'readonly'), writable: false },
    { path: path.join(root, 'work'), writable: true },
    { path: path.join(root, 'work', '.vscode'), writable: false },
    { path: path.join(root, 'with, a comma'), writable: true },
  ];

  /** What a script run with denoArgs for `mounts()` manages to do: one line per attempt. */
  function attempt(lines: string[]): string[] {
    const found = deno();
    assert.ok('binary' in found, `no Deno: ${'unavailable' in found ? found.unavailable : ''}`);
    const script = path.join(root, 'readonly', 'probe.cjs');
    fs.writeFileSync(
      script,
      `const fs = require('node:fs');\nconst out = [];\nfor (const [name, action] of ${`[${lines.join(',')}]`}) { try { action(); out.push(name + ' ok'); } catch (e) { out.push(name + ' refused'); } }\nconsole.log(out.join('\\n'));\n`,
    );
    const mountList = mounts();
    const result = spawnSync(
      found.binary,
      denoArgs({ script: [script], mounts: mountList, network: 'off', links: symlinkDenials(mountList) }),
      {
        env: denoEnvironment(path.join(root, 'deno-dir')),
        encoding: 'utf8',
      },
    );
    assert.equal(result.status, 0, result.stderr);
    return result.stdout.trim().split('\n');
  }

  test('the binary is found (the optional dependency here) and is Deno 2', () => {
    const found = deno();
    assert.ok('binary' in found, 'unavailable' in found ? found.unavailable : '');
    assert.match(found.version, /^2\.\d+\.\d+$/);
    // The version named in the advice to install it is the one package.json pins.
    const manifest = JSON.parse(fs.readFileSync(path.join(path.dirname(assetsDir()), 'package.json'), 'utf8')) as {
      optionalDependencies: Record<string, string>;
    };
    assert.equal(manifest.optionalDependencies.deno, DENO_VERSION);
    assert.equal(denoTarget('linux', 'x64'), 'linux-x64-glibc');
    assert.equal(denoTarget('win32', 'arm64'), 'win32-arm64');
    assert.equal(denoTarget('darwin', 'x64'), 'darwin-x64');
    assert.equal(denoTarget('freebsd', 'x64'), undefined);
  });

  test('the report: deno when asked for, bubblewrap never replaced by it under auto where bubblewrap works', () => {
    assert.deepEqual(sandboxReport('off', 'deno'), { mechanism: 'deno', complete: true, network: 'off', gaps: [] });
    assert.notEqual(sandboxReport('on', 'bubblewrap').mechanism, 'deno');
    if (process.platform === 'linux') assert.equal(sandboxReport('off', 'auto').mechanism, 'bubblewrap');
  });

  test('no flag grants processes, native code, the environment, system information, the network or remote code', () => {
    const args = denoArgs({
      script: ['host.cjs'],
      mounts: mounts(),
      network: 'off',
      links: { denyRead: [], denyWrite: [], truncated: false },
    });
    assert.deepEqual(
      args.filter((arg) => /^--allow-(run|ffi|env|sys|net|all|import)|^-A$/.test(arg)),
      [],
    );
    assert.ok(
      args.includes('--no-prompt') &&
        args.includes('--no-remote') &&
        args.includes('--no-npm') &&
        args.includes('--deny-import'),
    );
    assert.ok(
      denoArgs({
        script: ['host.cjs'],
        mounts: mounts(),
        network: 'on',
        links: { denyRead: [], denyWrite: [], truncated: false },
      }).includes('--allow-net'),
    );
  });

  test('reads and writes hold where the mounts say; a folder Deno cannot name (a comma) is left out, never widened', () => {
    const file = (...parts: string[]) => JSON.stringify(path.join(root, ...parts));
    const outcome = attempt([
      `['read readonly', () => fs.readFileSync(${file('readonly', 'notes.txt')})]`,
      `['write readonly', () => fs.writeFileSync(${file('readonly', 'new.txt')}, 'x')]`,
      `['write work', () => fs.writeFileSync(${file('work', 'src', 'new.txt')}, 'x')]`,
      `['write .vscode inside work', () => fs.writeFileSync(${file('work', '.vscode', 'settings.json')}, 'x')]`,
      `['read outside', () => fs.readFileSync(${JSON.stringify(path.join(outside, 'secret.txt'))})]`,
      `['read through a link out', () => fs.readFileSync(${file('work', 'src', 'secret-link')})]`,
      `['write through a link to a read-only file', () => fs.writeFileSync(${file('work', 'src', 'notes-link')}, 'x')]`,
      `['read through a link to a readable place', () => fs.readFileSync(${file('readonly', 'src-link', 'new.txt')})]`,
      `['make a link', () => fs.symlinkSync('/etc/passwd', ${file('work', 'src', 'made-link')})]`,
      `['write in the folder with a comma', () => fs.writeFileSync(${file('with, a comma', 'new.txt')}, 'x')]`,
    ]);
    assert.deepEqual(outcome, [
      'read readonly ok',
      'write readonly refused',
      'write work ok',
      'write .vscode inside work refused',
      'read outside refused',
      'read through a link out refused',
      'write through a link to a read-only file refused',
      'read through a link to a readable place ok',
      'make a link refused',
      'write in the folder with a comma refused',
    ]);
    assert.equal(fs.readFileSync(path.join(root, 'readonly', 'notes.txt'), 'utf8'), 'notes');
  });

  test("a snapshot per runtime: each keeps the other's, and V8's code cache is Node's alone", () => {
    const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-deno-snapshots-'));
    try {
      const pyodideDir = path.join(assetsDir(), 'pyodide');
      const worker = path.join(assetsDir(), 'pyodide-worker.cjs');
      const node = new SnapshotCache(cacheDir, pyodideDir, worker, silentLogger);
      const denoCache = new SnapshotCache(cacheDir, pyodideDir, worker, silentLogger, 'deno');
      assert.notEqual(node.file, denoCache.file);
      assert.equal(denoCache.codeCacheFile, undefined, "Deno's node:vm takes no code cache");
      assert.equal(denoCache.wantsCodeCache(undefined), false);
      assert.equal(node.wantsCodeCache(undefined), true);
      // What an older runtime (another V8) left: never readable again, so the Node cache removes it.
      const olderV8 = node.codeCacheFile!.replace(/v8-[^/]+\.codecache$/, 'v8-0.0.0.0.codecache');
      fs.writeFileSync(olderV8, 'older');
      fs.writeFileSync(`${olderV8}.sha256`, 'x');
      for (const [cache, bytes] of [
        [node, 'node snapshot'],
        [denoCache, 'deno snapshot'],
      ] as const) {
        const outbox = cache.createOutbox();
        fs.writeFileSync(path.join(outbox, 'snapshot'), bytes);
        fs.writeFileSync(path.join(outbox, 'code-cache'), `${bytes}'s code`);
        assert.equal(cache.adopt(outbox, true), true);
        assert.equal(fs.existsSync(outbox), false, 'the outbox goes');
      }
      assert.equal(node.cached()?.file, node.file);
      assert.equal(denoCache.cached()?.file, denoCache.file);
      assert.equal(fs.readFileSync(node.file, 'utf8'), 'node snapshot');
      const codeCache = node.codeCacheForStart();
      assert.equal(codeCache?.file, node.codeCacheFile);
      assert.equal(fs.readFileSync(node.codeCacheFile!, 'utf8'), "node snapshot's code");
      assert.equal(fs.existsSync(olderV8), false, "the older V8's code cache was removed");
      assert.equal(fs.existsSync(`${olderV8}.sha256`), false);
      // Refused by a host (V8 or the hash): it goes, and the next start makes another.
      node.rejectCodeCache(codeCache!, 'V8 refused it');
      assert.equal(node.codeCacheForStart(), undefined);
      assert.equal(node.cached()?.file, node.file, 'the snapshot stays');
    } finally {
      fs.rmSync(cacheDir, { recursive: true, force: true });
    }
  });
});
