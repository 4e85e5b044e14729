import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { CappedOutput } from '../../src/engine/output';
import { renderResultPieces, renderResultText, shapeResult } from '../../src/engine/result';

const capped = (cap: number, text: string) => {
  const out = new CappedOutput(cap);
  out.append(text);
  return out;
};

test('a success has null diagnostics, a duration in whole milliseconds and no optional fields', () => {
  const result = shapeResult({
    runId: 'r1',
    backend: 'python',
    session: 's',
    durationMs: 1.5123,
    diagnostics: null,
    stdout: capped(100, 'hi\n'),
  });
  assert.deepEqual(result, {
    success: true,
    stdout: 'hi\n',
    stderr: '',
    duration_ms: 2,
    diagnostics: null,
    backend: 'python',
    session: 's',
    run_id: 'r1',
    tool_calls: [],
  });
});

test('truncation is said at the top and in the diagnostics', () => {
  const result = shapeResult({
    runId: 'r2',
    backend: 'pyodide',
    session: 'default',
    durationMs: 5,
    diagnostics: { error_type: 'RuntimeError', message: 'ValueError: bad' },
    stderr: capped(10, 'x'.repeat(100)),
  });
  assert.equal(result.success, false);
  assert.equal(result.truncated, true);
  assert.equal(result.diagnostics?.truncated, true);
  const ok = shapeResult({
    runId: 'r3',
    backend: 'pyodide',
    session: 'default',
    durationMs: 5,
    diagnostics: null,
    stdout: capped(10, 'y'.repeat(100)),
  });
  assert.equal(ok.success, true);
  assert.equal(ok.truncated, true);
  assert.equal(ok.diagnostics, null);
});

test('the text rendering shows output, the error, the traceback once, hints and a status line', () => {
  const text = renderResultText(
    shapeResult({
      runId: 'r4',
      backend: 'python',
      session: 'work',
      durationMs: 12,
      stdout: capped(100, 'partial\n'),
      stderr: capped(100, 'warning\n'),
      diagnostics: {
        error_type: 'RuntimeError',
        message: 'KeyError: x',
        traceback: 'Traceback...\nKeyError: x\n',
        hints: ['Past fix for KeyError: use .get'],
      },
    }),
  );
  assert.equal(
    text,
    'partial\n[stderr]\nwarning\n[RuntimeError]\nTraceback...\nKeyError: x\nhint: Past fix for KeyError: use .get\n[failed in 12 ms on python, session "work"]',
  );
});

test('the text a model reads shows a stream as a terminal does: a progress bar once, in its last state, no colour codes', () => {
  const ticks = Array.from({ length: 40 }, (_, i) => ({
    type: 'stream' as const,
    name: 'stderr' as const,
    text: `\r${(i + 1) * 5}/200 files`,
  }));
  const text = renderResultText({
    ...shapeResult({ runId: 'r5', backend: 'pyodide', session: 'bar', durationMs: 3, diagnostics: null }),
    outputs: [
      { type: 'stream', name: 'stdout', text: '\x1b[32mstarting\x1b[0m\n' },
      ...ticks,
      { type: 'stream', name: 'stderr', text: '\n' },
      { type: 'stream', name: 'stdout', text: 'done\n' },
    ],
  });
  assert.equal(text, 'starting\n[stderr]\n200/200 files\ndone\n[ok in 3 ms on pyodide, session "bar"]');
});

test("the last expression's value is read as its repr where it came; an image of it follows, HTML is left to views", () => {
  const result = {
    ...shapeResult({ runId: 'r9', backend: 'python', session: 's', durationMs: 1, diagnostics: null }),
    stdout: 'a\n',
    displays: [
      { mime: 'text/html', data: '<table></table>' },
      { mime: 'image/png', data: 'iVBOR' },
    ],
    outputs: [
      { type: 'stream' as const, name: 'stdout' as const, text: 'a\n' },
      { type: 'execute_result' as const, text: 'Table(1)', index: 0 },
    ],
  };
  assert.equal(renderResultText(result), 'a\nTable(1)\n[ok in 1 ms on python, session "s"]');
  const image = { ...result, outputs: [{ type: 'execute_result' as const, text: '<Image 3x2>', index: 1 }] };
  assert.deepEqual(renderResultPieces(image), [
    { text: '<Image 3x2>' },
    { display: { mime: 'image/png', data: 'iVBOR' } },
    { text: '[ok in 1 ms on python, session "s"]' },
  ]);
  // Loaded from the history: the text stays when the display is gone.
  const loaded = { ...result, displays: undefined };
  assert.equal(renderResultText(loaded), 'a\nTable(1)\n[ok in 1 ms on python, session "s"]');
});
