// The table of a run's unanswered questions that paused calls and extension tasks share (pendingQuestions.ts).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { ElicitRequestFormParams } from '@modelcontextprotocol/server';
import { PendingQuestions } from '../../src/mcp/pendingQuestions';

const form = (message: string): ElicitRequestFormParams => ({
  mode: 'form',
  message,
  requestedSchema: { type: 'object', properties: { answer: { type: 'string' } } },
});

test('questions are numbered over the run, shown without their mode, and answered by number', async () => {
  const events: string[] = [];
  const table = new PendingQuestions({ asked: () => events.push('asked'), settled: () => events.push('settled') });
  const first = table.ask(form('one'));
  const second = table.ask(form('two'));
  assert.deepEqual(
    table.outstanding().map(([number, shown]) => [number, shown.message, 'mode' in shown]),
    [
      [1, 'one', false],
      [2, 'two', false],
    ],
  );
  assert.equal(table.answer(2, { kind: 'missing' }), false, 'no answer in the response');
  assert.equal(table.answer(3, { kind: 'elicit', action: 'accept' }), false, 'no such question');
  assert.equal(table.answer(2, { kind: 'elicit', action: 'accept', content: { answer: 'b' } }), true);
  assert.deepEqual(await second, { action: 'accept', content: { answer: 'b' } });
  assert.equal(table.has(2), false, 'an answered question is gone: a replay finds nothing');
  assert.deepEqual(events, ['asked', 'asked']);
  assert.equal(table.answer(1, { kind: 'elicit', action: 'decline' }), true);
  assert.deepEqual(await first, { action: 'decline' });
  assert.deepEqual(events, ['asked', 'asked', 'settled']);
  table.ask(form('three')).catch(() => undefined);
  assert.equal(table.outstanding()[0]?.[0], 3, 'numbers are never reused');
});

test('a question is withdrawn by its signal, by its wait, or with all the others', async () => {
  const table = new PendingQuestions();
  const stop = new AbortController();
  const bySignal = table.ask(form('a'), { signal: stop.signal });
  stop.abort('the run was stopped');
  await assert.rejects(bySignal, /the question was withdrawn: the run was stopped/);
  await assert.rejects(table.ask(form('b'), { signal: stop.signal }), /withdrawn/, 'an aborted signal asks nothing');
  await assert.rejects(table.ask(form('c'), { wait: { ms: 1, why: 'no answer came' } }), /no answer came/);
  const rest = [table.ask(form('d')), table.ask(form('e'))];
  table.withdrawAll('the run ended');
  for (const question of rest) await assert.rejects(question, /the run ended/);
  assert.equal(table.size, 0);
});
