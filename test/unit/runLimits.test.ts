// What the engine keeps of a run's displays, whatever the interpreter sends (runLimits.ts).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  boundOutcome,
  DISPLAYS_DROPPED_MIME,
  headAndTail,
  MAX_DISPLAY_BYTES,
  MAX_DISPLAYS_PER_RUN,
  MAX_ERROR_TEXT_CHARS,
  MAX_RESULT_TEXT_CHARS,
  RunDisplays,
} from '../../src/engine/runLimits';

test('at most 20 displays a run; the rest, and the count displays.py reports, make one note', () => {
  const displays = new RunDisplays();
  const kept = Array.from({ length: 25 }, (_, i) => displays.admit({ mime: 'text/plain', data: String(i) }));
  assert.equal(kept.filter(Boolean).length, MAX_DISPLAYS_PER_RUN);
  assert.equal(displays.admit({ mime: DISPLAYS_DROPPED_MIME, data: '7' }), undefined);
  assert.equal(
    displays.admit({ mime: DISPLAYS_DROPPED_MIME, data: 'lots' }),
    undefined,
    'a count that is no number counts nothing',
  );
  assert.equal(displays.admit('not a display'), undefined);
  assert.equal(displays.admit({ mime: 'text/plain', data: 42 }), undefined);
  assert.deepEqual(displays.takeNote(), {
    mime: 'text/plain',
    data: '14 more display(s) not shown: at most 20 per run',
  });
  assert.equal(displays.takeNote(), undefined, 'once');
});

test('a display over 5 MiB: text is cut with a note, anything else becomes a note; titles and mimes are bounded', () => {
  const displays = new RunDisplays();
  const text = displays.admit({ mime: 'text/plain', data: 'é'.repeat(3 * 1024 * 1024), title: 'T'.repeat(2000) })!;
  assert.ok(Buffer.byteLength(text.data) <= MAX_DISPLAY_BYTES);
  assert.match(text.data, /^é+\n\.\.\. \[\d+ bytes not shown: a display carries at most 5 MB\]$/);
  assert.equal(text.title, 'T'.repeat(1000));
  const image = displays.admit({ mime: 'image/png', data: 'A'.repeat(MAX_DISPLAY_BYTES + 1), extra: 'dropped' })!;
  assert.deepEqual(image, {
    mime: 'text/plain',
    data: 'image/png of 5.2 MB not shown: a display carries at most 5 MB',
  });
  const exact = displays.admit({ mime: 'image/png', data: 'A'.repeat(MAX_DISPLAY_BYTES) })!;
  assert.equal(exact.data.length, MAX_DISPLAY_BYTES, 'the limit itself is allowed');
  assert.equal(displays.admit({ mime: 'm'.repeat(500), data: 'x' })!.mime.length, 200);
});

test('error texts keep their head and tail, never splitting a surrogate pair', () => {
  const long = '🐍'.repeat(MAX_ERROR_TEXT_CHARS);
  const cut = headAndTail(long, MAX_ERROR_TEXT_CHARS);
  assert.ok(cut.length <= MAX_ERROR_TEXT_CHARS);
  assert.equal(Buffer.from(cut).toString(), cut, 'no lone surrogate');
  const outcome = boundOutcome({
    status: 'error',
    errorType: 'RuntimeError',
    excName: 'E',
    message: 'm'.repeat(10 ** 6),
    traceback: 't'.repeat(10 ** 6) + 'E: last line',
  });
  assert.ok(
    outcome.status === 'error' &&
      outcome.traceback.endsWith('E: last line') &&
      outcome.message.length <= MAX_ERROR_TEXT_CHARS,
  );
});

test("a last expression's value: its repr bounded, its rich form a display; the first of a run past the display limit", () => {
  const displays = new RunDisplays();
  for (let i = 0; i < MAX_DISPLAYS_PER_RUN; i++) displays.admit({ mime: 'text/plain', data: String(i) });
  assert.deepEqual(displays.admitResult({ mime: 'text/plain', data: '42', result: true }), { text: '42' });
  const long = displays.admitResult({
    mime: 'text/html',
    data: '<b>x</b>',
    text: 'x'.repeat(MAX_RESULT_TEXT_CHARS + 10),
    result: true,
  });
  assert.equal(long, undefined, 'a second one counts as a display, and the run showed its 20');
  const fresh = new RunDisplays();
  const rich = fresh.admitResult({
    mime: 'text/html',
    data: '<b>x</b>',
    text: 'x'.repeat(MAX_RESULT_TEXT_CHARS + 10),
    result: true,
  });
  assert.deepEqual(rich?.display, { mime: 'text/html', data: '<b>x</b>' });
  assert.ok(rich && rich.text.length <= MAX_RESULT_TEXT_CHARS && /characters not shown/.test(rich.text));
  assert.deepEqual(displays.takeNote(), {
    mime: 'text/plain',
    data: '1 more display(s) not shown: at most 20 per run',
  });
});
