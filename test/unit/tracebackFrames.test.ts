import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { failingLineIn, tracebackFrames } from '../../src/engine/tracebackFrames';

const TRACEBACK = `Traceback (most recent call last):
  File "/work/project/main.py", line 7, in <module>
    total = ratio(3, 0)
  File "<cell 2>", line 1, in helper
  File "/work/project/lib.py", line 2, in ratio
    return a / b
  File "/work/project/main.py", line 3, in inner
    return 1 / 0
ZeroDivisionError: division by zero
`;

test('frames of real files are found with their lines and offsets; cells are not files', () => {
  const frames = tracebackFrames(TRACEBACK);
  assert.deepEqual(
    frames.map((f) => [f.file, f.line]),
    [
      ['/work/project/main.py', 7],
      ['/work/project/lib.py', 2],
      ['/work/project/main.py', 3],
    ],
  );
  assert.equal(TRACEBACK.slice(frames[1]!.start, frames[1]!.end), 'File "/work/project/lib.py", line 2');
});

test("a file's failing line is its innermost frame", () => {
  assert.equal(failingLineIn(TRACEBACK, '/work/project/main.py'), 3);
  assert.equal(failingLineIn(TRACEBACK, '/work/project/other.py'), undefined);
  assert.equal(failingLineIn('SyntaxError: invalid syntax', '/x.py'), undefined);
});
