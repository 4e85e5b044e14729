// Run history kept across restarts: what history.json holds and cuts, debounced saves, a corrupt file.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RunHistory, type HistoryPersistence, type SavedRun } from '../../src/engine/history';
import { shapeResult } from '../../src/engine/result';
import { createStores, historyFile } from '../../src/engine/stores/index';
import type { Diagnostics, RunEvent } from '../../src/engine/types';
import { freshDirs, recordingLogger } from '../support/storeFixtures';

const freshDir = freshDirs();

describe('run history persistence', () => {
  const started = (runId: string, code = 'print(1)'): RunEvent => ({
    type: 'started',
    runId,
    session: 's',
    backend: 'python',
    code,
    origin: 'mcp',
    startedAt: 1000,
  });
  const finished = (runId: string, stdout: string, diagnostics: Diagnostics | null = null): RunEvent => ({
    type: 'finished',
    runId,
    result: {
      ...shapeResult({ runId, backend: 'python', session: 's', durationMs: 12, diagnostics }),
      stdout,
      displays: [{ mime: 'image/png', data: 'AAAA' }],
    },
  });

  test('finished runs round-trip through history.json with outputs cut to a few KB; live runs are not saved', async () => {
    const dir = freshDir();
    const history = new RunHistory(100, historyFile(path.join(dir, 'history.json'), recordingLogger()), 10);
    history.handle(started('a'));
    history.handle(finished('a', 'small\n'));
    history.handle(started('b', 'x'.repeat(50_000)));
    history.handle({ type: 'stdout', runId: 'b', text: 'streaming' });
    history.handle(
      finished('b', `${'h'.repeat(10_000)}${'t'.repeat(10_000)}`, {
        error_type: 'RuntimeError',
        message: 'ValueError: v',
        traceback: 'T'.repeat(20_000),
      }),
    );
    history.handle(started('live'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(fs.existsSync(path.join(dir, 'history.json')), 'saved after the debounce');

    const restored = new RunHistory(100, historyFile(path.join(dir, 'history.json'), recordingLogger()));
    assert.deepEqual(
      restored.all().map((r) => r.run.runId),
      ['a', 'b'],
    );
    const a = restored.get('a');
    assert.equal(a?.stdout, 'small\n');
    assert.deepEqual(a?.run, {
      runId: 'a',
      session: 's',
      backend: 'python',
      code: 'print(1)',
      origin: 'mcp',
      startedAt: 1000,
    });
    assert.equal(a?.result?.success, true);
    assert.equal(a?.result?.duration_ms, 12);
    assert.deepEqual(a?.displays, []);
    assert.equal(a?.result?.displays, undefined, 'displays are not kept');
    const b = restored.get('b');
    assert.ok(b?.result);
    assert.equal(b.result.success, false);
    assert.equal(b.result.diagnostics?.message, 'ValueError: v');
    assert.equal(b.result.truncated, true);
    assert.ok(
      b.stdout.length < 5000 && b.stdout.startsWith('hhh') && b.stdout.endsWith('ttt'),
      'head and tail of stdout',
    );
    assert.match(b.stdout, /characters not kept in the history/);
    assert.ok((b.result.diagnostics?.traceback?.length ?? 0) < 5000);
    assert.ok(b.run.code.length < 17_000);
    assert.ok(fs.statSync(path.join(dir, 'history.json')).size < 40_000);

    restored.handle(started('c'));
    restored.handle(finished('c', 'third\n'));
    restored.flush();
    const again = new RunHistory(100, historyFile(path.join(dir, 'history.json'), recordingLogger()));
    assert.deepEqual(
      again.all().map((r) => r.run.runId),
      ['a', 'b', 'c'],
    );
    assert.equal(again.get('b')?.stdout, b.stdout, 'a loaded run saved again is not cut twice');
    assert.equal(again.get('b')?.run.code, b.run.code);
  });

  test('saves are debounced, flush writes a pending save, clear is saved too, and the limit applies on load', () => {
    const saves: SavedRun[][] = [];
    let stored: SavedRun[] = [];
    const memory: HistoryPersistence = { load: () => stored, save: (runs) => (saves.push(runs), (stored = runs)) };
    const history = new RunHistory(3, memory, 60_000);
    for (const id of ['1', '2', '3', '4']) {
      history.handle(started(id));
      history.handle(finished(id, id));
    }
    assert.equal(saves.length, 0, 'nothing yet: the timer has not fired');
    history.flush();
    history.flush();
    assert.equal(saves.length, 1, 'one save for four runs; a second flush has nothing to write');
    assert.deepEqual(
      saves[0].map((r) => r.run.runId),
      ['2', '3', '4'],
    );
    assert.deepEqual(
      new RunHistory(2, memory).all().map((r) => r.run.runId),
      ['3', '4'],
    );
    history.clear();
    history.flush();
    assert.deepEqual(stored, []);
  });

  test('a corrupt history.json starts an empty history and is moved aside', () => {
    const dir = freshDir();
    fs.writeFileSync(path.join(dir, 'history.json'), '{"version": 1, "runs": [');
    const log = recordingLogger();
    const history = new RunHistory(10, createStores(dir, log).history);
    assert.deepEqual(history.all(), []);
    assert.match(log.warnings.join('\n'), /history\.json was damaged/);
  });
});
