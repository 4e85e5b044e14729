// The backend's check of what a Pyodide host sends: the host is within reach of the code it runs, so anything
// outside the protocol is refused, saying what is wrong.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { parseFromHost } from '../../src/engine/backends/pyodide/hostMessages';

test('an output message carries exactly one of text and a dropped count', () => {
  assert.deepEqual(parseFromHost({ type: 'output', runId: 'r', stream: 'stdout', text: 'hi' }), {
    type: 'output',
    runId: 'r',
    stream: 'stdout',
    text: 'hi',
  });
  assert.deepEqual(parseFromHost({ type: 'output', runId: 'r', stream: 'stderr', dropped: 12 }), {
    type: 'output',
    runId: 'r',
    stream: 'stderr',
    dropped: 12,
  });
  for (const both of [{}, { text: 'hi', dropped: 12 }])
    assert.throws(
      () => parseFromHost({ type: 'output', runId: 'r', stream: 'stdout', ...both }),
      /^Error: output needs either text or dropped$/,
    );
});

test('what the protocol does not name is refused: unknown keys, a backend-only field, a false mark', () => {
  const refused: [unknown, RegExp][] = [
    [{ type: 'output', runId: 'r', stream: 'stdout', text: 'hi', extra: 1 }, /^Error: message: Unrecognized key/],
    [
      { type: 'result', runId: 'r', outcome: { status: 'crashed', message: 'x', restartFailed: 'y' }, output: [] },
      /^Error: outcome: Unrecognized key: "restartFailed"/,
    ],
    [
      { type: 'display', runId: 'r', display: { mime: 'text/plain', data: 'x', result: false } },
      /^Error: display\.result/,
    ],
    [{ type: 'output', runId: 'r'.repeat(101), stream: 'stdout', text: 'hi' }, /^Error: runId: Too big/],
    [{ type: 'unheard-of' }, /^Error: type:/],
    ['not an object', /^Error: message:/],
  ];
  for (const [message, why] of refused) assert.throws(() => parseFromHost(message), why, JSON.stringify(message));
});

test("a package report's steps that worked arrive as null through JSON, and are taken", () => {
  const reply = { type: 'packagesDone', id: 1, errors: [null, 'no such package'], versions: { numpy: null } };
  assert.deepEqual(parseFromHost(JSON.parse(JSON.stringify(reply))), reply);
});
