// The Pyodide memory snapshot, and V8's code cache of Pyodide's script where the runtime can use one (run under Node
// 24 too, `npm run test:pyodide:node24`), are used only if their bytes are the ones cached (the host hashes what it loads),
// and a snapshot made by another version of the worker is never used. An empty cache starts from a copy of the
// snapshot the build ships (dist/pyodide-snapshot/), only if its bytes are the ones the build recorded. Real
// Pyodide (built dist/); the shipped-snapshot cases run under the sandbox under test (Deno with test/deno.env).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { createPyodideBackend, type PyodideBackendConfig } from '../../src/engine/backends/pyodide/backend';
import { codeCacheKeepsImports } from '../../src/engine/backends/pyodide/emscriptenScript';
import { SHIPPED_SNAPSHOT_DIR, snapshotFileName } from '../../src/engine/backends/pyodide/snapshotCache';
import type { BackendSession } from '../../src/engine/backends/contract';
import { assetsDir } from '../../src/engine/paths';
import type { Logger } from '../../src/engine/types';
import { sandboxUnderTest, underDeno } from '../support/sandboxUnderTest';

class MemoryLog implements Logger {
  lines: string[] = [];
  info = (message: string): void => void this.lines.push(message);
  warn = (message: string): void => void this.lines.push(message);
  error = (message: string): void => void this.lines.push(message);
}

/** Starts a session of `factory`, runs one cell in it and disposes of it; returns its log. */
async function startAndRun(
  factory: ReturnType<typeof createPyodideBackend>,
  name: string,
  sessions: BackendSession[],
): Promise<MemoryLog> {
  const log = new MemoryLog();
  const session = factory.create({ session: name, log, hostCall: async () => undefined });
  sessions.push(session);
  await session.start();
  const outcome = await session.run(
    { runId: `${name}-1`, code: 'print(6 * 7)', outputCapBytes: 10_000 },
    { stdout: () => undefined, stderr: () => undefined, display: () => undefined, dropped: () => undefined },
  );
  assert.equal(outcome.status, 'ok', `${name}: ${JSON.stringify(outcome)}`);
  await session.dispose();
  return log;
}

const readyLine = (log: MemoryLog): string =>
  log.lines.find((line) => /ready in \d+ ms/.test(line)) ?? log.lines.join('\n');

describe('Pyodide snapshot integrity', () => {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-snapshot-'));
  const sessions: BackendSession[] = [];
  after(async () => {
    await Promise.all(sessions.map((s) => s.dispose()));
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });
  const backendLog = new MemoryLog();
  // Without the shipped snapshot, so an empty cache means a start that makes one.
  const factory = createPyodideBackend({ cacheDir, log: backendLog, shippedSnapshotDir: false });
  const start = (name: string): Promise<MemoryLog> => startAndRun(factory, name, sessions);
  const snapshotFile = (): string | undefined => fs.readdirSync(cacheDir).find((name) => name.endsWith('.snapshot'));

  it(
    'a snapshot whose bytes changed after it was cached is not restored; the session starts cold and a new one is made',
    { timeout: 300_000 },
    async () => {
      const made = await start('maker');
      assert.ok(
        made.lines.some((line) => line.includes('cold (snapshot created)')),
        made.lines.join('\n'),
      );
      const file = path.join(cacheDir, snapshotFile()!);
      // Same size, one byte different: what a torn or tampered file looks like to the host.
      const bytes = fs.readFileSync(file);
      bytes[bytes.length >> 1] ^= 0xff;
      fs.writeFileSync(file, bytes);

      const refused = await start('after-change');
      assert.ok(
        backendLog.lines.some((line) =>
          /snapshot .* was not used: it does not match the hash recorded when it was cached/.test(line),
        ),
        backendLog.lines.join('\n'),
      );
      assert.ok(
        refused.lines.some((line) => /ready in \d+ ms, cold/.test(line)),
        refused.lines.join('\n'),
      );
      assert.equal(snapshotFile(), undefined, 'the changed snapshot was removed');

      const remade = await start('remade');
      assert.ok(
        remade.lines.some((line) => line.includes('cold (snapshot created)')),
        remade.lines.join('\n'),
      );
      const restored = await start('restored');
      assert.ok(
        restored.lines.some((line) => line.includes('from the cached snapshot')),
        restored.lines.join('\n'),
      );
    },
  );

  it(
    "V8's code cache of Pyodide's script is used from the second start on, only with the bytes cached, and only if V8 takes it",
    { timeout: 300_000 },
    async () => {
      const codeCacheFile = (): string | undefined =>
        fs.readdirSync(cacheDir).find((name) => name.endsWith('.codecache'));
      const corrupt = (rehash: boolean): void => {
        const file = path.join(cacheDir, codeCacheFile()!);
        const bytes = fs.readFileSync(file);
        bytes[bytes.length >> 1] ^= 0xff;
        // Rehashed: bytes the backend recorded, but not code V8 wrote (its own check refuses them).
        if (rehash) bytes.fill(0x5a, 0, 64);
        fs.writeFileSync(file, bytes);
        if (rehash) fs.writeFileSync(`${file}.sha256`, createHash('sha256').update(bytes).digest('hex'));
      };
      const fromCodeCache = /its script's code from V8's cache/;
      if (!(await codeCacheKeepsImports())) {
        // Node 20: a script read from a code cache loses its import(), so none is made or used (emscriptenScript.ts).
        assert.equal(codeCacheFile(), undefined, 'a code cache was made where it cannot be used');
        assert.doesNotMatch(readyLine(await start('without-code-cache')), fromCodeCache);
        assert.equal(codeCacheFile(), undefined);
        return;
      }
      assert.ok(codeCacheFile(), 'the first starts made a code cache');
      assert.match(readyLine(await start('with-code-cache')), fromCodeCache);

      for (const [rehash, why] of [
        [false, /code cache .* was not used: it does not match the hash recorded when it was cached/],
        [true, /code cache .* was not used: V8 refused it/],
      ] as const) {
        corrupt(rehash);
        const refused = await start(`code-cache-refused-${rehash}`);
        assert.doesNotMatch(readyLine(refused), fromCodeCache);
        assert.ok(
          backendLog.lines.some((line) => why.test(line)),
          backendLog.lines.join('\n'),
        );
        assert.equal(codeCacheFile(), undefined, 'the refused code cache was removed');
        assert.doesNotMatch(readyLine(await start(`code-cache-remade-${rehash}`)), fromCodeCache);
        assert.match(readyLine(await start(`code-cache-reused-${rehash}`)), fromCodeCache);
      }
    },
  );

  it('a snapshot made by another version of the worker is not used', { timeout: 300_000 }, async () => {
    const current = snapshotFile()!;
    // The same Pyodide build, another worker: what an upgrade of the extension leaves in the cache.
    const other = current.replace(/-[0-9a-f]{12}\.snapshot$/, '-000000000000.snapshot');
    fs.renameSync(path.join(cacheDir, current), path.join(cacheDir, other));
    fs.renameSync(path.join(cacheDir, `${current}.sha256`), path.join(cacheDir, `${other}.sha256`));
    const log = await start('after-upgrade');
    assert.ok(
      log.lines.some((line) => line.includes('cold (snapshot created)')),
      log.lines.join('\n'),
    );
    assert.deepEqual(
      fs
        .readdirSync(cacheDir)
        .filter((name) => name.includes('.snapshot'))
        .sort(),
      [current, `${current}.sha256`],
      "the other worker's snapshot was removed",
    );
  });
});

describe('the Pyodide snapshot shipped with the build', () => {
  const dist = assetsDir();
  // The file the build made for the runtime of the sandbox under test (Node's, or Deno's with test/deno.env).
  const name = snapshotFileName(
    path.join(dist, 'pyodide'),
    path.join(dist, 'pyodide-worker.cjs'),
    underDeno ? 'deno' : undefined,
  );
  const shippedFile = path.join(dist, SHIPPED_SNAPSHOT_DIR, name);
  const folders: string[] = [];
  const sessions: BackendSession[] = [];
  after(async () => {
    await Promise.all(sessions.map((s) => s.dispose()));
    for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
  });
  const tempDir = (what: string): string => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), `code-mode-shipped-${what}-`));
    folders.push(folder);
    return folder;
  };
  const backend = (cacheDir: string, log: Logger, shippedSnapshotDir?: PyodideBackendConfig['shippedSnapshotDir']) =>
    createPyodideBackend({
      cacheDir,
      log,
      sandbox: sandboxUnderTest,
      ...(shippedSnapshotDir === undefined ? {} : { shippedSnapshotDir }),
    });
  const digest = (file: string): string => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

  it('is made by the build for this worker and Pyodide build, with its hash', () => {
    assert.ok(fs.existsSync(shippedFile), `${shippedFile} is missing: run npm run build`);
    assert.equal(fs.readFileSync(`${shippedFile}.sha256`, 'utf8').trim(), digest(shippedFile));
  });

  it(
    'a first start with an empty cache starts from it, copied into the cache; the next starts from the cache',
    { timeout: 300_000 },
    async () => {
      const cacheDir = tempDir('cache');
      // What an earlier version of the extension left in the cache goes, as when a start makes a snapshot.
      fs.writeFileSync(path.join(cacheDir, 'pyodide-0.0.1-0123456789abcdef-000000000000.snapshot'), 'old build');
      const factory = backend(cacheDir, new MemoryLog());
      const first = await startAndRun(factory, 'first', sessions);
      assert.match(readyLine(first), /ready in \d+ ms, from the shipped snapshot/);
      assert.deepEqual(
        fs
          .readdirSync(cacheDir)
          .filter((file) => file.includes('.snapshot'))
          .sort(),
        [name, `${name}.sha256`],
      );
      assert.equal(
        digest(path.join(cacheDir, name)),
        digest(shippedFile),
        'the cache holds a copy of the shipped bytes',
      );
      assert.equal(fs.readFileSync(path.join(cacheDir, `${name}.sha256`), 'utf8'), digest(shippedFile));
      assert.notEqual(
        fs.statSync(path.join(cacheDir, name)).ino,
        fs.statSync(shippedFile).ino,
        "a copy, not a link to the extension's file",
      );
      const next = await startAndRun(backend(cacheDir, new MemoryLog()), 'next', sessions);
      assert.match(readyLine(next), /ready in \d+ ms, from the cached snapshot/);
    },
  );

  it(
    'a shipped snapshot whose bytes changed is refused: the session starts cold, makes one in the cache, and the shipped file stays',
    { timeout: 300_000 },
    async () => {
      const shippedDir = tempDir('shipped');
      const changed = path.join(shippedDir, name);
      fs.copyFileSync(`${shippedFile}.sha256`, `${changed}.sha256`);
      const bytes = fs.readFileSync(shippedFile);
      bytes[bytes.length >> 1] ^= 0xff;
      fs.writeFileSync(changed, bytes);
      const cacheDir = tempDir('cache');
      const backendLog = new MemoryLog();
      const factory = backend(cacheDir, backendLog, shippedDir);
      const refused = await startAndRun(factory, 'refused', sessions);
      assert.ok(
        backendLog.lines.some((line) =>
          /snapshot shipped with the build, .* was not used: it does not match the hash recorded when it was built/.test(
            line,
          ),
        ),
        backendLog.lines.join('\n'),
      );
      assert.match(readyLine(refused), /ready in \d+ ms, cold \(snapshot created\)/);
      assert.deepEqual(fs.readFileSync(changed), bytes, 'the shipped file is neither removed nor changed');
      const made = digest(path.join(cacheDir, name));
      assert.notEqual(made, digest(changed));
      assert.equal(fs.readFileSync(path.join(cacheDir, `${name}.sha256`), 'utf8'), made);
      const next = await startAndRun(factory, 'next', sessions);
      assert.match(readyLine(next), /ready in \d+ ms, from the cached snapshot/);
    },
  );

  it(
    'its copy in the cache, changed afterwards, is refused by the host like any cached snapshot; the next start copies it again',
    { timeout: 300_000 },
    async () => {
      const cacheDir = tempDir('cache');
      const backendLog = new MemoryLog();
      const factory = backend(cacheDir, backendLog);
      assert.match(readyLine(await startAndRun(factory, 'copied', sessions)), /from the shipped snapshot/);
      const copy = path.join(cacheDir, name);
      const bytes = fs.readFileSync(copy);
      bytes[bytes.length >> 1] ^= 0xff;
      fs.writeFileSync(copy, bytes);
      const refused = await startAndRun(factory, 'refused', sessions);
      assert.ok(
        backendLog.lines.some((line) =>
          /snapshot .* was not used: it does not match the hash recorded when it was cached/.test(line),
        ),
        backendLog.lines.join('\n'),
      );
      assert.match(readyLine(refused), /ready in \d+ ms, cold/);
      assert.ok(fs.existsSync(shippedFile), 'the shipped file stays');
      // The shipped file is checked afresh as it is copied again.
      assert.match(
        readyLine(await startAndRun(factory, 'again', sessions)),
        /ready in \d+ ms, from the shipped snapshot/,
      );
      assert.equal(digest(copy), digest(shippedFile));
    },
  );

  it(
    'one whose bytes match its hash but cannot be restored fails that start only: it is discarded, and the next start makes one',
    { timeout: 300_000 },
    async () => {
      // What a snapshot Pyodide cannot restore in this runtime looks like to the checks: the right hash, unusable bytes.
      const shippedDir = tempDir('shipped');
      const unusable = fs.readFileSync(shippedFile).subarray(0, 4096);
      fs.writeFileSync(path.join(shippedDir, name), unusable);
      fs.writeFileSync(path.join(shippedDir, `${name}.sha256`), createHash('sha256').update(unusable).digest('hex'));
      const cacheDir = tempDir('cache');
      const backendLog = new MemoryLog();
      const factory = backend(cacheDir, backendLog, shippedDir);
      const failing = factory.create({ session: 'failing', log: new MemoryLog(), hostCall: async () => undefined });
      sessions.push(failing);
      await assert.rejects(failing.start(), /Pyodide could not start/);
      await failing.dispose();
      assert.ok(
        backendLog.lines.some((line) => /snapshot .* was not used: Pyodide failed to start from it/.test(line)),
        backendLog.lines.join('\n'),
      );
      assert.match(
        readyLine(await startAndRun(factory, 'next', sessions)),
        /ready in \d+ ms, cold \(snapshot created\)/,
      );
      assert.deepEqual(fs.readFileSync(path.join(shippedDir, name)), unusable, 'the shipped file stays');
      assert.match(readyLine(await startAndRun(factory, 'after', sessions)), /from the cached snapshot/);
    },
  );
});
