// How the jupyter backend reads a kernel's messages: outcomes it is sent (checked, not trusted), replies of runs
// that never reached kernel_support.py, and display bundles.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  displayOf,
  outcomeOf,
  publishedValue,
  replyOutcome,
  stripAnsi,
} from '../../src/engine/backends/jupyter/kernelMessages';

test('an outcome from kernel_support.py is taken as the backend contract has it', () => {
  assert.deepEqual(outcomeOf({ status: 'ok' }), { status: 'ok' });
  assert.deepEqual(outcomeOf({ status: 'interrupted' }), { status: 'interrupted' });
  assert.deepEqual(
    outcomeOf({
      status: 'error',
      errorType: 'RuntimeError',
      excName: 'KeyError',
      message: "KeyError: 'x'",
      traceback: 'Traceback ...',
      extra: 1,
    }),
    {
      status: 'error',
      errorType: 'RuntimeError',
      excName: 'KeyError',
      message: "KeyError: 'x'",
      traceback: 'Traceback ...',
    },
  );
});

test("kernel_support's outcome is read from its own payload in the execute_reply, among the others a cell may leave", () => {
  const outcome = { status: 'ok' };
  const page = { source: 'page', data: { 'text/plain': 'help text' }, start: 0 };
  assert.deepEqual(
    publishedValue({ status: 'ok', payload: [page, 'junk', null, { source: 'code-mode-outcome', value: outcome }] }),
    outcome,
  );
  assert.equal(publishedValue({ status: 'ok', payload: [page] }), undefined);
  assert.equal(publishedValue({ status: 'error', ename: 'KeyboardInterrupt' }), undefined);
  assert.equal(publishedValue({ status: 'ok', payload: 'not a list' as unknown as unknown[] }), undefined);
});

test('an outcome that is not one becomes a crash that quotes it, never a success', () => {
  for (const forged of [null, 'ok', { status: 'ok!' }, { status: 'error', errorType: 'Whatever' }, [1, 2]]) {
    const outcome = outcomeOf(forged);
    assert.equal(outcome.status, 'crashed', JSON.stringify(forged));
    assert.match(outcome.status === 'crashed' ? outcome.message : '', /does not understand/);
  }
  const missing = outcomeOf({ status: 'error', errorType: 'SyntaxError' });
  assert.deepEqual(missing, {
    status: 'error',
    errorType: 'SyntaxError',
    excName: 'Exception',
    message: '',
    traceback: '',
  });
});

test("a reply without kernel_support's outcome: KeyboardInterrupt is an interrupt, other errors keep their name, colours go", () => {
  assert.deepEqual(replyOutcome({ status: 'error', ename: 'KeyboardInterrupt', evalue: '' }), {
    status: 'interrupted',
  });
  assert.deepEqual(replyOutcome({ status: 'aborted' }), { status: 'interrupted' });
  const error = replyOutcome({
    status: 'error',
    ename: 'NameError',
    evalue: "name 'x' is not defined",
    traceback: ['\u001b[0;31mNameError\u001b[0m', 'Traceback'],
  });
  assert.deepEqual(error, {
    status: 'error',
    errorType: 'RuntimeError',
    excName: 'NameError',
    message: "NameError: name 'x' is not defined",
    traceback: 'NameError\nTraceback',
  });
  assert.equal(replyOutcome({ status: 'ok' }).status, 'crashed');
  assert.equal(stripAnsi('\u001b[1;32mgreen\u001b[0m plain'), 'green plain');
});

test('a display bundle shows its best mime: images base64 without line breaks, SVG encoded, HTML as text, else its plain text', () => {
  assert.deepEqual(displayOf({ 'image/png': 'iVBORw0K\nGgo=\n', 'text/plain': '<Figure>' }), {
    kind: 'display',
    display: { mime: 'image/png', data: 'iVBORw0KGgo=' },
  });
  assert.deepEqual(displayOf({ 'image/svg+xml': '<svg/>', 'text/html': '<b>x</b>' }), {
    kind: 'display',
    display: { mime: 'image/svg+xml', data: Buffer.from('<svg/>').toString('base64') },
  });
  assert.deepEqual(displayOf({ 'text/html': '<table></table>', 'text/plain': 'table' }), {
    kind: 'display',
    display: { mime: 'text/html', data: '<table></table>' },
  });
  assert.deepEqual(displayOf({ 'text/plain': '42' }), { kind: 'text', text: '42' });
  assert.equal(displayOf({ 'application/x-unknown': 'z' }), undefined);
});
