// Deno as the Pyodide sandbox (src/engine/sandbox/deno.ts, denoBroker.ts): the binary is found, the report says
// so, and what the permission broker answers holds for a real `deno run` (the optional dependency's binary):
// reads and writes exactly where the mounts say, read-only folders inside writable ones, paths with commas, and
// symbolic links judged by where they lead; a Deno not asking the broker can do nothing. The whole Pyodide host
// under Deno is attacked in test/sandbox (npm run test:sandbox:deno).
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DENO_VERSION, deno, denoArgs, denoEnvironment, denoTarget } from '../../src/engine/sandbox/deno';
import { BROKER_VARIABLE, startPermissionBroker } from '../../src/engine/sandbox/denoBroker';
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

  /**
   * What a script run with denoArgs manages to do, one line per attempt: asking a broker for `mounts()` (with the
   * network off), or with no broker at all.
   */
  async function attempt(lines: string[], broker: 'broker' | 'none' = 'broker'): Promise<string[]> {
    const found = deno();
    assert.ok('binary' in found, `no Deno: ${'unavailable' in found ? found.unavailable : ''}`);
    const script = path.join(root, 'readonly', 'probe.cjs');
    fs.writeFileSync(
      script,
      `const fs = require('node:fs');\nconst out = [];\nfor (const [name, action] of ${`[${lines.join(',')}]`}) { try { action(); out.push(name + ' ok'); } catch (e) { out.push(name + ' refused'); } }\nconsole.log(out.join('\\n'));\n`,
    );
    const permissions = broker === 'broker' ? startPermissionBroker({ mounts: mounts(), network: 'off' }) : undefined;
    // The script itself is read before anything else: without a broker it is granted by flag, and only it.
    const [run, ...args] = denoArgs({ script: [script] });
    const flags = permissions ? [] : [`--allow-read=${script}`];
    const child = spawn(found.binary, [run!, ...flags, ...args], {
      env: {
        ...denoEnvironment(path.join(root, 'deno-dir')),
        ...(permissions ? { [BROKER_VARIABLE]: permissions.address } : {}),
      },
    });
    if (child.pid !== undefined) permissions?.bind(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
    permissions?.close();
    assert.equal(status, 0, stderr);
    return stdout.trim().split('\n');
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

  test('no flag grants anything: files, processes, native code, the environment, system information, the network', () => {
    const args = denoArgs({ script: ['host.cjs'], v8Flags: ['--max-old-space-size=64'] });
    assert.deepEqual(
      args.filter((arg) => /^--allow-|^-A$/.test(arg)),
      [],
    );
    assert.ok(
      args.includes('--no-prompt') &&
        args.includes('--no-remote') &&
        args.includes('--no-npm') &&
        args.includes('--deny-import'),
    );
  });

  const cases = (file: (...parts: string[]) => string): string[] => [
    `['read readonly', () => fs.readFileSync(${file('readonly', 'notes.txt')})]`,
    `['write readonly', () => fs.writeFileSync(${file('readonly', 'new.txt')}, 'x')]`,
    `['write work', () => fs.writeFileSync(${file('work', 'src', 'new.txt')}, 'x')]`,
    `['write .vscode inside work', () => fs.writeFileSync(${file('work', '.vscode', 'settings.json')}, 'x')]`,
    `['read outside', () => fs.readFileSync(${JSON.stringify(path.join(outside, 'secret.txt'))})]`,
    `['read through a link out', () => fs.readFileSync(${file('work', 'src', 'secret-link')})]`,
    `['write through a link to a read-only file', () => fs.writeFileSync(${file('work', 'src', 'notes-link')}, 'x')]`,
    `['read through a link to a readable place', () => fs.readFileSync(${file('readonly', 'src-link', 'new.txt')})]`,
    `['make a link', () => fs.symlinkSync('/etc/passwd', ${file('work', 'src', 'made-link')})]`,
    `['move a link', () => fs.renameSync(${file('work', 'src', 'notes-link')}, ${file('work', 'moved-link')})]`,
    `['move a folder holding a link', () => fs.renameSync(${file('work', 'src')}, ${file('work', 'moved')})]`,
    `['make a repository below', () => fs.mkdirSync(${file('work', 'src', '.git')})]`,
    `['make a virtual environment below', () => fs.writeFileSync(${file('work', 'src', 'pyvenv.cfg')}, 'x')]`,
    `['write in the folder with a comma', () => fs.writeFileSync(${file('with, a comma', 'new.txt')}, 'x')]`,
    `['read the environment', () => process.env.HOME]`,
    `['start a process', () => require('node:child_process').execFileSync('/bin/true')]`,
  ];

  test('reads and writes hold where the mounts say and where links lead; commas are plain characters', async () => {
    const file = (...parts: string[]) => JSON.stringify(path.join(root, ...parts));
    assert.deepEqual(await attempt(cases(file)), [
      'read readonly ok',
      'write readonly refused',
      'write work ok',
      'write .vscode inside work refused',
      'read outside refused',
      'read through a link out refused',
      'write through a link to a read-only file refused',
      'read through a link to a readable place ok',
      'make a link refused',
      'move a link refused',
      'move a folder holding a link refused',
      'make a repository below refused',
      'make a virtual environment below refused',
      'write in the folder with a comma ok',
      'read the environment refused',
      'start a process refused',
    ]);
    assert.equal(fs.readFileSync(path.join(root, 'readonly', 'notes.txt'), 'utf8'), 'notes');
    assert.equal(
      fs.readlinkSync(path.join(root, 'work', 'src', 'notes-link')),
      path.join(root, 'readonly', 'notes.txt'),
    );
  });

  test('a Deno that does not ask the broker can do nothing but read its own script', async () => {
    const file = (...parts: string[]) => JSON.stringify(path.join(root, ...parts));
    const outcome = await attempt(cases(file), 'none');
    assert.deepEqual(
      outcome.filter((line) => line.endsWith(' ok')),
      [],
    );
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
