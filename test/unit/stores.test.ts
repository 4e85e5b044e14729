// The persistent stores: atomic JSON, code files (names, limits, symlink and traversal refusals), learnings
// (search, hints), the engine's hints hook, and run history kept across restarts.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Engine } from '../../src/engine/engine';
import { RunHistory, type HistoryPersistence, type SavedRun } from '../../src/engine/history';
import { shapeResult } from '../../src/engine/result';
import { readJsonFile, writeJsonAtomic } from '../../src/engine/stores/atomicJson';
import {
  CodeFiles,
  codeFileNameProblem,
  createStores,
  historyFile,
  Learnings,
  StoreError,
} from '../../src/engine/stores/index';
import type { Diagnostics, Logger, RunEvent } from '../../src/engine/types';
import type { BackendFactory, BackendOutcome, BackendSession } from '../../src/engine/backends/contract';

let root: string;
before(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-stores-'));
});
after(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

let dirCounter = 0;
function freshDir(): string {
  const dir = path.join(root, `t${++dirCounter}`);
  fs.mkdirSync(dir);
  return dir;
}

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, info() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) };
}

const anyObject = (value: unknown) => (typeof value === 'object' && value !== null ? value : undefined);

describe('atomic JSON files', () => {
  test('a write round-trips, replaces the old value and leaves no temp file behind', () => {
    const dir = freshDir();
    const file = path.join(dir, 'sub', 'data.json');
    writeJsonAtomic(file, { a: 1 });
    writeJsonAtomic(file, { a: 2, text: 'é\n' });
    assert.deepEqual(readJsonFile(file, anyObject, recordingLogger()), { a: 2, text: 'é\n' });
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ['data.json']);
  });

  test('a missing file reads as undefined without a warning', () => {
    const log = recordingLogger();
    assert.equal(readJsonFile(path.join(freshDir(), 'nope.json'), anyObject, log), undefined);
    assert.deepEqual(log.warnings, []);
  });

  test('a corrupt file is moved aside with a warning, and the next write starts clean', () => {
    const dir = freshDir();
    const file = path.join(dir, 'store.json');
    fs.writeFileSync(file, '{"half": [1, 2');
    const log = recordingLogger();
    assert.equal(readJsonFile(file, anyObject, log), undefined);
    const aside = fs.readdirSync(dir).filter((n) => n.startsWith('store.json.corrupt-'));
    assert.equal(aside.length, 1);
    assert.equal(
      fs.readFileSync(path.join(dir, aside[0]), 'utf8'),
      '{"half": [1, 2',
      'the damaged bytes are kept for a person',
    );
    assert.equal(fs.existsSync(file), false);
    assert.match(log.warnings.join('\n'), /damaged.*moved it aside/);
    writeJsonAtomic(file, { ok: true });
    assert.deepEqual(readJsonFile(file, anyObject, log), { ok: true });
  });

  test('valid JSON of the wrong shape is treated as corrupt', () => {
    const dir = freshDir();
    const file = path.join(dir, 'store.json');
    fs.writeFileSync(file, '[1, 2, 3]');
    const log = recordingLogger();
    assert.equal(
      readJsonFile(file, (v) => (Array.isArray(v) ? undefined : v), log),
      undefined,
    );
    assert.equal(fs.readdirSync(dir).filter((n) => n.startsWith('store.json.corrupt-')).length, 1);
  });

  test('a write that fails part-way keeps the old file and removes its temp file', () => {
    const dir = freshDir();
    const file = path.join(dir, 'store.json');
    writeJsonAtomic(file, { version: 'old' });
    // JSON.stringify throws on a BigInt after the temp file was opened.
    assert.throws(() => writeJsonAtomic(file, { big: 1n }), /BigInt/);
    assert.deepEqual(readJsonFile(file, anyObject, recordingLogger()), { version: 'old' });
    assert.deepEqual(fs.readdirSync(dir), ['store.json']);
  });
});

describe('code file names', () => {
  const refused: [string, RegExp][] = [
    ['../../etc/passwd', /path separators/],
    ['/etc/passwd', /path separators/],
    ['sub/file.py', /path separators/],
    ['sub\\file.py', /path separators/],
    ['..py', /must not contain "\.\."/],
    ['a..b.py', /must not contain "\.\."/],
    ['.hidden.py', /must not start with "\."/],
    ['evil\0.py', /NUL/],
    ['run.sh', /must end in one of \.py, \.txt, \.json, \.csv, \.md/],
    ['noext', /must end in one of/],
    ['', /non-empty/],
    ['with space.py', /only letters, digits/],
    ['naïve.py', /only letters, digits/],
    ['CON.py', /reserved device name/],
    [`${'a'.repeat(130)}.py`, /at most 128 characters/],
  ];
  for (const [name, message] of refused) {
    test(`refuses ${JSON.stringify(name.length > 40 ? `${name.slice(0, 20)}…` : name)}`, () => {
      assert.match(codeFileNameProblem(name) ?? '', message);
    });
  }
  test('accepts plain names with the allowed extensions', () => {
    for (const name of ['analysis.py', 'DATA.CSV', 'notes.md', 'a-b_c.1.txt', 'config.json', 'console.py']) {
      assert.equal(codeFileNameProblem(name), undefined, name);
    }
  });
});

describe('code files', () => {
  test('create, append over several calls, read and list', async () => {
    const files = new CodeFiles(path.join(freshDir(), 'code-files'));
    const first = await files.write('prog.py', 'x = 1\n', 'create');
    assert.equal(first.bytes_written, 6);
    await files.write('prog.py', 'x += 1\n', 'append');
    const last = await files.write('prog.py', 'print(x)\n', 'append');
    assert.equal(last.size, 22);
    assert.equal((await files.read('prog.py')).content, 'x = 1\nx += 1\nprint(x)\n');
    await files.write('prog.py', 'print("fresh")\n');
    assert.equal((await files.read('prog.py')).content, 'print("fresh")\n', 'create replaces');
    await files.write('notes.md', 'é', 'append');
    assert.equal((await files.read('notes.md')).size, 2, 'sizes are UTF-8 bytes');
    const listed = await files.list();
    assert.deepEqual(
      listed.map((f) => f.name),
      ['notes.md', 'prog.py'],
    );
    assert.ok(!Number.isNaN(Date.parse(listed[0].mtime)));
    assert.equal(files.path('prog.py'), path.join(files.dir, 'prog.py'));
  });

  test('the size limit is enforced on create and on append, leaving the file as it was', async () => {
    const files = new CodeFiles(path.join(freshDir(), 'code-files'), 100);
    await assert.rejects(
      files.write('big.py', 'x'.repeat(101)),
      (e: Error) => e instanceof StoreError && /at most 100 bytes/.test(e.message),
    );
    await files.write('grow.py', 'y'.repeat(60));
    await assert.rejects(
      files.write('grow.py', 'z'.repeat(41), 'append'),
      /would make "grow.py" 101 bytes; a code file holds at most 100 bytes/,
    );
    assert.equal((await files.read('grow.py')).content, 'y'.repeat(60));
    await files.write('grow.py', 'z'.repeat(40), 'append');
    assert.equal((await files.read('grow.py')).size, 100);
  });

  test('traversal and absolute names are refused before touching the disk', async () => {
    const dir = freshDir();
    const files = new CodeFiles(path.join(dir, 'code-files'));
    for (const name of ['../../etc/passwd', '../escape.py', '/tmp/abs.py', path.join(dir, 'abs.py')]) {
      await assert.rejects(files.write(name, 'print(1)'), (e: Error) => e instanceof StoreError, name);
      await assert.rejects(files.read(name), (e: Error) => e instanceof StoreError, name);
      assert.throws(() => files.path(name), StoreError);
    }
    assert.deepEqual(fs.readdirSync(dir), [], 'nothing was created, not even the folder');
  });

  test('a planted symlink is never followed: create, append and read are refused and the target is untouched', async () => {
    const dir = freshDir();
    const outside = path.join(dir, 'outside.txt');
    fs.writeFileSync(outside, 'secret\n');
    const files = new CodeFiles(path.join(dir, 'code-files'));
    await files.write('ok.py', 'pass\n');
    fs.symlinkSync(outside, path.join(files.dir, 'link.py'));
    await assert.rejects(files.read('link.py'), /symbolic link.*refusing to follow/);
    await assert.rejects(files.write('link.py', 'pwned\n', 'append'), /symbolic link/);
    await assert.rejects(files.write('link.py', 'pwned\n', 'create'), /symbolic link/);
    assert.equal(fs.readFileSync(outside, 'utf8'), 'secret\n');
    assert.deepEqual(
      (await files.list()).map((f) => f.name),
      ['ok.py'],
      'links are not listed',
    );
  });

  test('a planted hard link and a FIFO are refused without blocking', async () => {
    const dir = freshDir();
    const outside = path.join(dir, 'outside.txt');
    fs.writeFileSync(outside, 'secret\n');
    const files = new CodeFiles(path.join(dir, 'code-files'));
    await files.write('ok.py', 'pass\n');
    fs.linkSync(outside, path.join(files.dir, 'hard.py'));
    await assert.rejects(files.read('hard.py'), /hard link/);
    await assert.rejects(files.write('hard.py', 'pwned\n', 'append'), /hard link/);
    assert.equal(fs.readFileSync(outside, 'utf8'), 'secret\n');
    execFileSync('mkfifo', [path.join(files.dir, 'pipe.py')]);
    await assert.rejects(files.read('pipe.py'), /not a regular file/);
    await assert.rejects(files.write('pipe.py', 'x', 'append'), /not a regular file/);
  });

  test('a code-files folder that is itself a symlink is not written through', async () => {
    const dir = freshDir();
    const elsewhere = path.join(dir, 'elsewhere');
    fs.mkdirSync(elsewhere);
    fs.symlinkSync(elsewhere, path.join(dir, 'code-files'));
    const files = new CodeFiles(path.join(dir, 'code-files'));
    await assert.rejects(files.write('a.py', 'pass'), /not a plain folder/);
    assert.deepEqual(fs.readdirSync(elsewhere), []);
  });

  test('reading a missing file names the files there are', async () => {
    const files = new CodeFiles(path.join(freshDir(), 'code-files'));
    await assert.rejects(
      files.read('none.py'),
      /no code file named "none.py" \(there are no code files yet\); write it with code_file first/,
    );
    await files.write('b.py', '');
    await files.write('a.py', '');
    await assert.rejects(files.read('none.py'), /the code files are: a\.py, b\.py/);
  });

  test('concurrent appends all land, in call order', async () => {
    const files = new CodeFiles(path.join(freshDir(), 'code-files'));
    await Promise.all(Array.from({ length: 20 }, (_, i) => files.write('many.py', `print(${i})\n`, 'append')));
    const expected = Array.from({ length: 20 }, (_, i) => `print(${i})\n`).join('');
    assert.equal((await files.read('many.py')).content, expected);
  });
});

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
