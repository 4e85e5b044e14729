import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { RunHistory, type SavedRun } from '../../src/engine/history';
import { shapeResult } from '../../src/engine/result';
import type { RunEvent } from '../../src/engine/types';

const started = (runId: string): RunEvent => ({
  type: 'started',
  runId,
  session: 'default',
  backend: 'pyodide',
  code: 'print(1)',
  origin: 'test',
  startedAt: 1,
});

test('a run is recorded from start to finish and its result replaces the streamed output', () => {
  const history = new RunHistory();
  const seen: string[] = [];
  history.onChange((r) => seen.push(r.stdout));
  history.handle(started('a'));
  history.handle({ type: 'stdout', runId: 'a', text: 'par' });
  history.handle({ type: 'stdout', runId: 'a', text: 'tial' });
  assert.equal(history.get('a')?.stdout, 'partial');
  const result = shapeResult({ runId: 'a', backend: 'pyodide', session: 'default', durationMs: 1, diagnostics: null });
  history.handle({ type: 'finished', runId: 'a', result: { ...result, stdout: 'final\n' } });
  assert.equal(history.get('a')?.stdout, 'final\n');
  assert.equal(history.get('a')?.result?.success, true);
  assert.deepEqual(seen, ['', 'par', 'partial', 'final\n']);
});

test('the history is bounded, dropping the oldest runs', () => {
  const history = new RunHistory(3);
  for (const id of ['1', '2', '3', '4', '5']) history.handle(started(id));
  assert.deepEqual(
    history.all().map((r) => r.run.runId),
    ['3', '4', '5'],
  );
  history.handle({ type: 'stdout', runId: '1', text: 'late output of a dropped run' });
  assert.equal(history.get('1'), undefined);
});

test("a run of a file's lines remembers where they come from, so the run can be named after it", () => {
  const history = new RunHistory(10);
  history.handle({ ...started('f1'), location: { file: '/work/project/main.py', line: 12 } } as RunEvent);
  history.handle(started('c1'));
  assert.deepEqual(history.get('f1')?.run.location, { file: '/work/project/main.py', line: 12 });
  assert.equal(history.get('c1')?.run.location, undefined);
});

const MIB = 1024 * 1024;
const finished = (runId: string, stdout = ''): RunEvent => ({
  type: 'finished',
  runId,
  result: {
    ...shapeResult({ runId, backend: 'pyodide', session: 'default', durationMs: 1, diagnostics: null }),
    stdout,
  },
});

test('the history is bounded in bytes: older runs give up their displays first, with a note saying so', () => {
  const history = new RunHistory(100, undefined, 1000, 30 * MIB);
  const image = { mime: 'image/png', data: 'A'.repeat(5 * MIB) };
  for (let run = 0; run < 20; run++) {
    const id = `r${run}`;
    history.handle(started(id));
    for (let i = 0; i < 4; i++) history.handle({ type: 'display', runId: id, display: image });
    const result = shapeResult({
      runId: id,
      backend: 'pyodide',
      session: 'default',
      durationMs: 1,
      diagnostics: null,
      displays: Array(4).fill(image),
    });
    history.handle({ type: 'finished', runId: id, result });
    assert.equal(result.displays?.length, 4, "the caller's result keeps its displays");
    assert.ok(history.retainedBytes <= 30 * MIB, `run ${run}: ${history.retainedBytes} bytes kept`);
  }
  assert.equal(history.all().length, 20, 'every run is still listed');
  const newest = history.get('r19')!;
  assert.equal(newest.displays.length, 4);
  assert.equal(newest.displaysDropped, undefined);
  assert.equal(newest.result?.displays, undefined, 'displays are kept once, in the record');
  const oldest = history.get('r0')!;
  assert.deepEqual(oldest.displays, []);
  assert.equal(oldest.displaysDropped?.count, 4);
  assert.equal(oldest.displaysDropped?.bytes, 4 * (5 * MIB + 'image/png'.length));
  assert.match(oldest.displaysDropped?.reason ?? '', /keeps the displays of recent runs only \(30 MB in all\)/);
});

test('a single run larger than the budget keeps what fits and counts the rest', () => {
  const history = new RunHistory(100, undefined, 1000, 12 * MIB);
  history.handle(started('big'));
  for (let i = 0; i < 5; i++)
    history.handle({ type: 'display', runId: 'big', display: { mime: 'image/png', data: 'A'.repeat(5 * MIB) } });
  history.handle(finished('big'));
  const record = history.get('big')!;
  assert.equal(record.displays.length, 2);
  assert.equal(record.displaysDropped?.count, 3);
  assert.ok(history.retainedBytes <= 12 * MIB);
});

test('past the displays, output of old runs is cut to what is saved, then the oldest runs go', () => {
  const history = new RunHistory(100, undefined, 1000, 1 * MIB);
  for (let run = 0; run < 40; run++) {
    history.handle(started(`t${run}`));
    history.handle(finished(`t${run}`, 'x'.repeat(64 * 1024)));
    assert.ok(history.retainedBytes <= 1 * MIB, `run ${run}: ${history.retainedBytes} bytes kept`);
  }
  assert.equal(history.get('t39')?.stdout.length, 64 * 1024, 'the newest run is whole');
  assert.ok(history.get('t0')!.stdout.length < 5000, 'the oldest run is cut');
  assert.match(history.get('t0')!.stdout, /characters not kept in the history/);
  assert.equal(history.get('t0')!.result?.truncated, true);
  assert.equal(history.all().length, 40, 'cut runs take little room, so every one is still listed');
});

test('the count of displays survives a restart, as a note that they are not kept', () => {
  let saved: SavedRun[] = [];
  const persistence = { load: () => saved, save: (runs: SavedRun[]) => (saved = runs) };
  const history = new RunHistory(100, persistence, 1000);
  history.handle(started('p'));
  history.handle({ type: 'display', runId: 'p', display: { mime: 'text/plain', data: 'shown' } });
  history.handle(finished('p'));
  history.flush();
  assert.equal(saved[0].displays, 1);
  const reloaded = new RunHistory(100, persistence, 1000);
  assert.deepEqual(reloaded.get('p')?.displaysDropped, { count: 1, reason: 'displays are not kept across restarts' });
});

test("room for a display is made of older displays only: no older run's entry goes for it", () => {
  const history = new RunHistory(100, undefined, 1000, 10 * MIB);
  history.handle(started('a'));
  history.handle({ type: 'display', runId: 'a', display: { mime: 'image/png', data: 'A'.repeat(4 * MIB) } });
  history.handle(finished('a', 'output of a\n'));
  history.handle(started('b'));
  for (let i = 0; i < 4; i++)
    history.handle({ type: 'display', runId: 'b', display: { mime: 'image/png', data: 'B'.repeat(4 * MIB) } });
  history.handle(finished('b'));
  assert.equal(history.get('a')?.stdout, 'output of a\n');
  assert.equal(history.get('a')?.displaysDropped?.count, 1);
  assert.equal(history.get('b')?.displays.length, 2);
  assert.equal(history.get('b')?.displaysDropped?.count, 2);
});

test("the value of a run's last expression survives a restart as its text, cut as output is, without its display", () => {
  let saved: SavedRun[] = [];
  const persistence = { load: () => saved, save: (runs: SavedRun[]) => (saved = runs) };
  const history = new RunHistory(100, persistence, 1000);
  history.handle(started('v'));
  history.handle({ type: 'display', runId: 'v', display: { mime: 'text/html', data: '<table></table>' } });
  const result = finished('v', 'a\n');
  if (result.type !== 'finished') throw new Error('a finished event');
  result.result.outputs = [
    { type: 'stream', name: 'stdout', text: 'a\n' },
    { type: 'execute_result', text: 'x'.repeat(10_000), index: 0 },
  ];
  history.handle(result);
  history.flush();
  const reloaded = new RunHistory(100, persistence, 1000);
  const [stream, value] = reloaded.get('v')?.result?.outputs ?? [];
  assert.deepEqual(stream, { type: 'stream', name: 'stdout', text: 'a\n' });
  assert.ok(value?.type === 'execute_result' && value.index === undefined, JSON.stringify(value));
  assert.ok(value.text.length < 5000 && /not kept in the history/.test(value.text));
});
