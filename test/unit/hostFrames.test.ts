// The Pyodide host's side of the frame limit: none of its legitimate messages needs a frame over it.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { FrameDecoder, MAX_FRAME_FROM_INTERPRETER_BYTES } from '../../src/engine/framing';
import { parseFromHost } from '../../src/engine/backends/pyodide/hostMessages';
import {
  fitDisplay,
  framesFor,
  hostCallProblem,
  MAX_OUTPUT_CHUNK_CHARS,
} from '../../src/engine/backends/pyodide/hostFrames';
import type { FromHost } from '../../src/engine/backends/pyodide/protocol';
import { MAX_RESULT_TEXT_CHARS } from '../../src/engine/runLimits';

const MIB = 1024 * 1024;

/** Decodes `frames` as the backend does, checking each against the limit and the protocol's schema. */
function decode(frames: Buffer[]): FromHost[] {
  const decoder = new FrameDecoder(MAX_FRAME_FROM_INTERPRETER_BYTES);
  for (const frame of frames)
    assert.ok(frame.length <= MAX_FRAME_FROM_INTERPRETER_BYTES + 4, `a frame of ${frame.length} bytes`);
  return frames.flatMap((frame) => decoder.push(frame)).map(parseFromHost);
}

test("a result's output goes in bounded 'output' frames before it, in order, and its error texts are bounded", () => {
  const text = '\u0001'.repeat(3 * MIB - 1) + '🐍'.repeat(1000) + 'end';
  const messages = decode(
    framesFor({
      type: 'result',
      runId: 'r1',
      outcome: {
        status: 'error',
        errorType: 'RuntimeError',
        excName: 'ValueError',
        message: 'x'.repeat(20 * MIB),
        traceback: 'y'.repeat(20 * MIB),
      },
      output: [
        { stream: 'stdout', text },
        { stream: 'stderr', dropped: 12 },
        { stream: 'stderr', text: 'bye' },
      ],
    }),
  );
  const last = messages.at(-1)!;
  assert.equal(last.type, 'result');
  assert.ok(last.type === 'result' && last.outcome.status === 'error');
  assert.ok(last.outcome.message.length < 300 * 1024 && last.outcome.traceback.length < 300 * 1024);
  const outputs = messages.slice(0, -1) as { type: string; stream: string; text?: string; dropped?: number }[];
  assert.ok(outputs.every((m) => m.type === 'output' && (m.text ?? '').length <= MAX_OUTPUT_CHUNK_CHARS));
  const stdout = outputs.map((m) => (m.stream === 'stdout' ? (m.text ?? '') : '')).join('');
  assert.equal(stdout, text, 'no character is lost or split');
  assert.deepEqual(
    outputs.filter((m) => m.stream === 'stderr').map((m) => m.text ?? m.dropped),
    [12, 'bye'],
  );
});

test('a display that would not fit is cut (text) or replaced by a note (anything else); one that fits is untouched', () => {
  const small = { mime: 'image/png', data: 'A'.repeat(5 * MIB), title: 'chart' };
  assert.deepEqual(fitDisplay(small, 7 * MIB), small);
  const escaped = fitDisplay({ mime: 'text/plain', data: '\u0001'.repeat(5 * MIB) }, 7 * MIB);
  assert.ok(Buffer.byteLength(JSON.stringify(escaped.data)) <= 7 * MIB);
  assert.match(escaped.data, /\n\.\.\. \[\d+ characters not shown: a display's frame carries at most 7 MB\]$/);
  const image = fitDisplay({ mime: 'image/png', data: 'A'.repeat(60 * MIB), title: 't'.repeat(5000) }, 7 * MIB);
  assert.deepEqual(image, {
    mime: 'text/plain',
    data: 'image/png of 62.9 MB not shown: a display carries at most 5 MB',
    title: 't'.repeat(1000),
  });
  const [message] = decode(
    framesFor({ type: 'display', runId: 'r', display: { mime: 'text/markdown', data: '"'.repeat(6 * MIB) } }),
  );
  assert.ok(message.type === 'display' && message.display.data.endsWith('at most 7 MB]'));
});

test('a host call too large for a frame, or with too long a name, is refused before it is sent', () => {
  assert.equal(hostCallProblem('tools.x', { a: 1 }), undefined);
  assert.match(
    hostCallProblem('tools.x', { blob: 'b'.repeat(9 * MIB) }) ?? '',
    /too large to send \(at most 8 MB as JSON\)/,
  );
  assert.match(hostCallProblem('m'.repeat(201), {}) ?? '', /at most 200 characters/);
});

test('other messages too large are shrunk to ones the schema takes', () => {
  const [log] = decode(framesFor({ type: 'log', level: 'warn', message: 'w'.repeat(10 * MIB) }));
  assert.ok(log.type === 'log' && log.message.length < 100 * 1024);
  const [lost] = decode(framesFor({ type: 'lost', reason: 's'.repeat(50_000) }));
  assert.ok(lost.type === 'lost' && lost.reason.length === 10_000);
  const [done] = decode(framesFor({ type: 'packagesDone', id: 3, errors: ['e'.repeat(10 * MIB)], versions: {} }));
  assert.deepEqual(done, {
    type: 'packagesDone',
    id: 3,
    errors: [],
    versions: {},
    failed: 'the report of this install was too large to send',
  });
});

test("the last expression's value keeps its mark and its repr, bounded, through the frame and the schema", () => {
  const display = {
    mime: 'text/html',
    data: '<b>x</b>',
    text: 'x'.repeat(MAX_RESULT_TEXT_CHARS + 5),
    result: true as const,
  };
  const [message] = decode(framesFor({ type: 'display', runId: 'r', display }));
  assert.ok(message.type === 'display');
  assert.deepEqual(parseFromHost(message), {
    type: 'display',
    runId: 'r',
    display: { mime: 'text/html', data: '<b>x</b>', text: 'x'.repeat(MAX_RESULT_TEXT_CHARS), result: true },
  });
  // Too large a rich form becomes a note; the repr stays for the engine to show.
  const image = fitDisplay({ mime: 'image/png', data: 'A'.repeat(60 * MIB), text: '<Image>', result: true }, 7 * MIB);
  assert.deepEqual(image, {
    mime: 'text/plain',
    data: 'image/png of 62.9 MB not shown: a display carries at most 5 MB',
    result: true,
    text: '<Image>',
  });
});
