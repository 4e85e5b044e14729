// The CLI's log gets one line per console call of a library (src/mcp/consoleLines.ts).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { consoleLine } from '../../src/mcp/consoleLines';

test('a one-line message stays as it is, with its arguments formatted', () => {
  assert.equal(
    consoleLine(['Connection lost, reconnecting in 0 seconds.']),
    'Connection lost, reconnecting in 0 seconds.',
  );
  assert.equal(
    consoleLine(['Server selected unknown kernel wire protocol:', 'v1.kernel.websocket.jupyter.org']),
    'Server selected unknown kernel wire protocol: v1.kernel.websocket.jupyter.org',
  );
});

test("a server's traceback, as text or as a list of lines, keeps its first and last line", () => {
  const frames = [
    'Traceback (most recent call last):',
    '  File "/srv/handlers.py", line 60, in post',
    '    kernel_id = await start()',
    'jupyter_client.kernelspec.NoSuchKernel: No such kernel named nosuchspec',
  ];
  const expected =
    'Traceback (most recent call last): … jupyter_client.kernelspec.NoSuchKernel: No such kernel named nosuchspec (2 lines between left out)';
  assert.equal(consoleLine([frames.join('\n')]), expected);
  assert.equal(consoleLine([frames.map((line) => `${line}\n`)]), expected);
});

test('an Error is its name and message, not its stack', () => {
  assert.equal(
    consoleLine([new SyntaxError('Unexpected token < in JSON at position 0')]),
    'SyntaxError: Unexpected token < in JSON at position 0',
  );
});

test('an object is rendered on one line', () => {
  const line = consoleLine([{ a: [1, 2, 3], b: { c: 'd'.repeat(100) } }]);
  assert.equal(line.includes('\n'), false);
  assert.match(line, /a: \[ 1, 2, 3 \]/);
});
