import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { RunHistory } from '../../src/engine/history';
import { shapeResult } from '../../src/engine/result';
import type { RunEvent } from '../../src/engine/types';

const started = (runId: string): RunEvent => ({ type: 'started', runId, session: 'default', backend: 'pyodide', code: 'print(1)', origin: 'test', startedAt: 1 });

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
  assert.deepEqual(history.all().map((r) => r.run.runId), ['3', '4', '5']);
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
