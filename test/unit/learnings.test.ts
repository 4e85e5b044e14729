// The learnings store (validation, updates, bounds, search, hints, sharing one file, corrupt files) and the engine's
// hook that adds its hints to a failed run's diagnostics.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Engine } from '../../src/engine/engine';
import { Learnings, StoreError } from '../../src/engine/stores/index';
import type { Diagnostics, RunEvent } from '../../src/engine/types';
import type { BackendFactory, BackendOutcome, BackendSession } from '../../src/engine/backends/contract';
import { freshDirs, recordingLogger } from '../support/storeFixtures';

const freshDir = freshDirs();

describe('learnings', () => {
  const newStore = (limit?: number) => {
    const log = recordingLogger();
    return { store: new Learnings(path.join(freshDir(), 'learnings.json'), log, limit), log };
  };
  const failure = (message: string, traceback?: string): Diagnostics => ({
    error_type: 'RuntimeError',
    message,
    traceback,
  });

  test('input is validated with messages that say what to fix', () => {
    const { store } = newStore();
    const cases: [Parameters<Learnings['add']>[0], RegExp][] = [
      [{ kind: 'bogus' as 'error', successful_approach: 'x' }, /kind must be "error"/],
      [{ kind: 'error', successful_approach: 'x' }, /needs a non-empty error_pattern/],
      [{ kind: 'error', error_pattern: 'ab', successful_approach: 'x' }, /at least 3 characters/],
      [
        { kind: 'error', error_pattern: 'KeyError', successful_approach: '  ' },
        /needs a non-empty successful_approach/,
      ],
      [{ kind: 'semantic', successful_approach: 'x' }, /needs a non-empty objective/],
      [
        { kind: 'semantic', objective: 'o', error_pattern: 'KeyError', successful_approach: 'x' },
        /error_pattern belongs to kind "error"/,
      ],
      [
        { kind: 'error', error_pattern: 'KeyError', objective: 'o', successful_approach: 'x' },
        /objective belongs to kind "semantic"/,
      ],
      [{ kind: 'error', error_pattern: 'KeyError', successful_approach: 'x', tags: ['has space'] }, /tag "has space"/],
      [
        {
          kind: 'error',
          error_pattern: 'KeyError',
          successful_approach: 'x',
          tags: Array.from({ length: 11 }, (_, i) => `t${i}`),
        },
        /at most 10 tags/,
      ],
      [{ kind: 'error', error_pattern: 'x'.repeat(501), successful_approach: 'x' }, /at most 500 characters/],
    ];
    for (const [input, message] of cases)
      assert.throws(
        () => store.add(input),
        (e: Error) => e instanceof StoreError && message.test(e.message),
        String(message),
      );
    assert.equal(store.count(), 0);
  });

  test('entries carry id, kind, fields, tags, time and use count, and persist', () => {
    const { store } = newStore();
    const { learning, updated } = store.add({
      kind: 'semantic',
      objective: ' Plot a histogram ',
      successful_approach: 'matplotlib hist',
      tags: ['Plot', 'plot', 'matplotlib'],
    });
    assert.equal(updated, false);
    assert.match(learning.id, /^[0-9a-f]{8}$/);
    assert.equal(learning.objective, 'Plot a histogram');
    assert.deepEqual(learning.tags, ['plot', 'matplotlib']);
    assert.equal(learning.use_count, 0);
    assert.ok(!Number.isNaN(Date.parse(learning.created_at)));
    assert.equal('error_pattern' in learning, false);
    const reopened = new Learnings(store.file, recordingLogger());
    assert.deepEqual(reopened.search(''), [learning]);
  });

  test('the same fix for the same pattern updates the entry instead of duplicating it, keeping when it was created', async () => {
    const { store } = newStore();
    const first = store.add({
      kind: 'error',
      error_pattern: 'No module named',
      successful_approach: 'install it',
      tags: ['pip'],
    }).learning;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = store.add({
      kind: 'error',
      error_pattern: 'no module  NAMED',
      successful_approach: 'Install it',
      tags: ['imports'],
    });
    assert.equal(again.updated, true);
    assert.equal(again.learning.id, first.id);
    assert.equal(again.learning.created_at, first.created_at);
    assert.deepEqual(again.learning.tags, ['pip', 'imports']);
    assert.equal(store.count(), 1);
  });

  test('the store is bounded, dropping the oldest', () => {
    const { store } = newStore(3);
    for (const n of [1, 2, 3, 4, 5])
      store.add({ kind: 'semantic', objective: `goal ${n}`, successful_approach: `way ${n}` });
    assert.deepEqual(
      store.search('').map((l) => l.objective),
      ['goal 5', 'goal 4', 'goal 3'],
    );
  });

  test('search ranks tags over pattern or objective over approaches, and finds prefixes', () => {
    const { store } = newStore();
    store.add({ kind: 'semantic', objective: 'read a file', successful_approach: 'use pandas.read_csv with encoding' });
    store.add({ kind: 'semantic', objective: 'load pandas frames fast', successful_approach: 'use pyarrow' });
    store.add({
      kind: 'semantic',
      objective: 'dataframe joins',
      successful_approach: 'merge on keys',
      tags: ['pandas'],
    });
    store.add({ kind: 'semantic', objective: 'plotting', successful_approach: 'matplotlib' });
    assert.deepEqual(
      store.search('pandas').map((l) => l.objective),
      ['dataframe joins', 'load pandas frames fast', 'read a file'],
    );
    assert.deepEqual(
      store.search('plot').map((l) => l.objective),
      ['plotting'],
    );
    assert.deepEqual(
      store.search('the of').map((l) => l.objective),
      ['plotting', 'dataframe joins', 'load pandas frames fast', 'read a file'],
      'stop words only: newest first',
    );
    assert.deepEqual(store.search('nothing-like-this'), []);
    assert.equal(store.search('', 2).length, 2);
  });

  test('hints: substring or word overlap on the exception and message, best first, at most three, uses counted', () => {
    const { store } = newStore();
    store.add({
      kind: 'error',
      error_pattern: "No module named 'cv2'",
      successful_approach: 'pip install opencv-python-headless',
    });
    store.add({
      kind: 'error',
      error_pattern: 'ModuleNotFoundError No module named',
      successful_approach: 'install the missing package',
    });
    store.add({ kind: 'error', error_pattern: 'KeyError', successful_approach: 'use dict.get with a default' });
    store.add({
      kind: 'semantic',
      objective: 'No module named cv2',
      successful_approach: 'semantic learnings are never hints',
    });
    store.add({ kind: 'error', error_pattern: 'ZeroDivisionError', successful_approach: 'guard the divisor' });

    const cv2 = store.hintsFor(failure("ModuleNotFoundError: No module named 'cv2'"));
    assert.deepEqual(cv2, [
      "Past fix for No module named 'cv2': pip install opencv-python-headless",
      'Past fix for ModuleNotFoundError No module named: install the missing package',
    ]);
    const other = store.hintsFor(failure("ModuleNotFoundError: No module named 'sklearn'"));
    assert.deepEqual(
      other,
      ['Past fix for ModuleNotFoundError No module named: install the missing package'],
      'word overlap, not the cv2 fix',
    );
    assert.deepEqual(
      store.hintsFor(failure("KEYERROR: 'price'")),
      ['Past fix for KeyError: use dict.get with a default'],
      'case-insensitive',
    );
    assert.deepEqual(
      store.hintsFor(failure('ValueError: bad', 'Traceback...\n  d[k]\nKeyError: 1\n')),
      ['Past fix for KeyError: use dict.get with a default'],
      'found in the traceback',
    );
    assert.deepEqual(store.hintsFor(failure('TypeError: unsupported operand')), []);

    for (let i = 0; i < 5; i++)
      store.add({ kind: 'error', error_pattern: `OSError case ${i}`, successful_approach: `fix ${i}` });
    assert.equal(store.hintsFor(failure('OSError case 1 case 2 case 3 case 4 case 0')).length, 3);

    const counts = Object.fromEntries(
      new Learnings(store.file, recordingLogger())
        .search('', 50)
        .map((l) => [l.error_pattern ?? l.objective, l.use_count]),
    );
    assert.equal(counts['ModuleNotFoundError No module named'], 2);
    assert.equal(counts["No module named 'cv2'"], 1);
    assert.equal(counts.KeyError, 2);
    assert.equal(counts.ZeroDivisionError, 0);
  });

  test('a second instance on the same file (another process) sees and keeps the first one’s entries', () => {
    const { store } = newStore();
    const other = new Learnings(store.file, recordingLogger());
    store.add({ kind: 'semantic', objective: 'one', successful_approach: 'a' });
    other.add({ kind: 'semantic', objective: 'two', successful_approach: 'b' });
    assert.deepEqual(
      store.search('').map((l) => l.objective),
      ['two', 'one'],
    );
  });

  test('a corrupt learnings file is moved aside and the store starts empty; malformed entries are dropped alone', () => {
    const { store, log } = newStore();
    fs.writeFileSync(store.file, 'not json');
    assert.equal(store.count(), 0);
    assert.equal(fs.readdirSync(path.dirname(store.file)).filter((n) => n.includes('.corrupt-')).length, 1);
    store.add({ kind: 'semantic', objective: 'after', successful_approach: 'works' });
    const data = JSON.parse(fs.readFileSync(store.file, 'utf8')) as { learnings: unknown[] };
    data.learnings.push({ id: 'x', kind: 'error' }, 'junk');
    fs.writeFileSync(store.file, JSON.stringify(data));
    const reopened = new Learnings(store.file, log);
    assert.deepEqual(
      reopened.search('').map((l) => l.objective),
      ['after'],
    );
    assert.match(log.warnings.join('\n'), /dropped 2 malformed learnings/);
  });
});

describe('the engine hints hook', () => {
  const failingBackend: BackendFactory = {
    kind: 'pyodide',
    create: (): BackendSession => {
      let state: BackendSession['state'] = 'not-loaded';
      return {
        kind: 'pyodide',
        get state() {
          return state;
        },
        start: async () => {
          state = 'ready';
        },
        run: async (): Promise<BackendOutcome> => ({
          status: 'error',
          errorType: 'RuntimeError',
          excName: 'KeyError',
          message: "KeyError: 'price'",
          traceback: "KeyError: 'price'\n",
        }),
        interrupt() {},
        restart: async () => {},
        info: () => ({ kind: 'pyodide', state }),
        takeStateLoss: () => undefined,
        dispose: async () => {},
      };
    },
  };

  test('failed runs (and refusals) get diagnostics.hints from the provider, also in the finished event', async () => {
    const engine = new Engine({ backends: [failingBackend] });
    const { store } = (() => ({ store: new Learnings(path.join(freshDir(), 'learnings.json'), recordingLogger()) }))();
    store.add({ kind: 'error', error_pattern: 'KeyError', successful_approach: 'use .get()' });
    store.add({
      kind: 'error',
      error_pattern: 'INVALID_ARGUMENT timeout_s',
      successful_approach: 'keep timeout_s within 3600',
    });
    engine.setHintsProvider((d) => store.hintsFor(d));
    const events: RunEvent[] = [];
    const result = await engine.run({ code: 'd["price"]', onEvent: (e) => events.push(e) });
    assert.deepEqual(result.diagnostics?.hints, ['Past fix for KeyError: use .get()']);
    const finished = events.find((e) => e.type === 'finished');
    assert.deepEqual(finished?.type === 'finished' && finished.result.diagnostics?.hints, [
      'Past fix for KeyError: use .get()',
    ]);
    const refused = await engine.run({ code: 'pass', timeoutS: 99999 });
    assert.equal(refused.diagnostics?.error_type, 'INVALID_ARGUMENT');
    assert.deepEqual(refused.diagnostics?.hints, [
      'Past fix for INVALID_ARGUMENT timeout_s: keep timeout_s within 3600',
    ]);
    await engine.dispose();
  });

  test('no hints means no hints field, and a throwing provider is logged, never failing the run', async () => {
    const log = recordingLogger();
    const engine = new Engine({ backends: [failingBackend], log });
    engine.setHintsProvider(() => []);
    assert.equal('hints' in ((await engine.run({ code: 'x' })).diagnostics ?? {}), false);
    engine.setHintsProvider(() => {
      throw new Error('store unreadable');
    });
    const result = await engine.run({ code: 'x' });
    assert.equal(result.diagnostics?.message, "KeyError: 'price'");
    assert.match(log.warnings.join('\n'), /hints .*store unreadable/);
    await engine.dispose();
  });
});
