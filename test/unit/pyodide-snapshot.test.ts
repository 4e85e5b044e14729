// The Pyodide memory snapshot is restored only if its bytes are the ones cached (the host hashes what it loads),
// and a snapshot made by another version of the worker is never used. Real Pyodide (built dist/).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { createPyodideBackend } from '../../src/engine/backends/pyodide/backend';
import type { BackendSession } from '../../src/engine/backends/contract';
import type { Logger } from '../../src/engine/types';

class MemoryLog implements Logger {
  lines: string[] = [];
  info = (message: string): void => void this.lines.push(message);
  warn = (message: string): void => void this.lines.push(message);
  error = (message: string): void => void this.lines.push(message);
}

describe('Pyodide snapshot integrity', () => {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-snapshot-'));
  const sessions: BackendSession[] = [];
  after(async () => {
    await Promise.all(sessions.map((s) => s.dispose()));
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });
  const backendLog = new MemoryLog();
  const factory = createPyodideBackend({ cacheDir, log: backendLog });
  const start = async (name: string): Promise<MemoryLog> => {
    const log = new MemoryLog();
    const session = factory.create({ session: name, log, hostCall: async () => undefined });
    sessions.push(session);
    await session.start();
    const outcome = await session.run({ runId: `${name}-1`, code: 'print(6 * 7)', outputCapBytes: 10_000 }, { stdout: () => undefined, stderr: () => undefined, display: () => undefined, dropped: () => undefined });
    assert.equal(outcome.status, 'ok', `${name}: ${JSON.stringify(outcome)}`);
    await session.dispose();
    return log;
  };
  const snapshotFile = (): string | undefined => fs.readdirSync(cacheDir).find((name) => name.endsWith('.snapshot'));

  it('a snapshot whose bytes changed after it was cached is not restored; the session starts cold and a new one is made', { timeout: 300_000 }, async () => {
    const made = await start('maker');
    assert.ok(made.lines.some((line) => line.includes('cold (snapshot created)')), made.lines.join('\n'));
    const file = path.join(cacheDir, snapshotFile()!);
    // Same size, one byte different: what a torn or tampered file looks like to the host.
    const bytes = fs.readFileSync(file);
    bytes[bytes.length >> 1] ^= 0xff;
    fs.writeFileSync(file, bytes);

    const refused = await start('after-change');
    assert.ok(backendLog.lines.some((line) => /snapshot .* was not used: it does not match the hash recorded when it was cached/.test(line)), backendLog.lines.join('\n'));
    assert.ok(refused.lines.some((line) => /ready in \d+ ms, cold/.test(line)), refused.lines.join('\n'));
    assert.equal(snapshotFile(), undefined, 'the changed snapshot was removed');

    const remade = await start('remade');
    assert.ok(remade.lines.some((line) => line.includes('cold (snapshot created)')), remade.lines.join('\n'));
    const restored = await start('restored');
    assert.ok(restored.lines.some((line) => line.includes('from the cached snapshot')), restored.lines.join('\n'));
  });

  it('a snapshot made by another version of the worker is not used', { timeout: 300_000 }, async () => {
    const current = snapshotFile()!;
    // The same Pyodide build, another worker: what an upgrade of the extension leaves in the cache.
    const other = current.replace(/-[0-9a-f]{12}\.snapshot$/, '-000000000000.snapshot');
    fs.renameSync(path.join(cacheDir, current), path.join(cacheDir, other));
    fs.renameSync(path.join(cacheDir, `${current}.sha256`), path.join(cacheDir, `${other}.sha256`));
    const log = await start('after-upgrade');
    assert.ok(log.lines.some((line) => line.includes('cold (snapshot created)')), log.lines.join('\n'));
    assert.deepEqual(fs.readdirSync(cacheDir).filter((name) => name.includes('.snapshot')).sort(), [current, `${current}.sha256`], 'the other worker\'s snapshot was removed');
  });
});
