// Output read as a terminal shows it (src/engine/terminalText.ts): carriage returns and backspaces rewrite, colour
// sequences become styles, other sequences go, and a sequence split across chunks is read whole.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { finalText, lineText, TerminalText } from '../../src/engine/terminalText';

test('a progress bar rewritten with carriage returns is one line in its last state', () => {
  const bar = Array.from({ length: 40 }, (_, i) => `\r${String((i + 1) * 2.5).padStart(5)}%|${'#'.repeat(i)}`).join('');
  assert.equal(finalText(`start\n${bar}\ndone\n`), `start\n  100%|${'#'.repeat(39)}\ndone\n`);
  // A shorter rewrite leaves the rest of the longer line, as a terminal does; erase-in-line clears it.
  assert.equal(finalText('downloading 10 files\rdone'), 'doneloading 10 files');
  assert.equal(finalText('downloading 10 files\r\x1b[Kdone'), 'done');
  assert.equal(finalText('windows line\r\nnext'), 'windows line\nnext');
  assert.equal(finalText('abc\b\bX'), 'aXc');
  assert.equal(finalText('no control characters\n'), 'no control characters\n');
});

test('colours become styles; cursor moves, titles and hyperlinks go, their text stays', () => {
  const terminal = new TerminalText();
  const [line] = terminal.feed('\x1b[1;31mError\x1b[0m: \x1b[38;5;208morange\x1b[39m \x1b[48;2;1;2;3mrgb\x1b[m\n');
  assert.deepEqual(line, [
    { text: 'Error', style: { bold: true, fg: 1 } },
    { text: ': ', style: {} },
    { text: 'orange', style: { fg: 'rgb(255, 135, 0)' } },
    { text: ' ', style: {} },
    { text: 'rgb', style: { bg: 'rgb(1, 2, 3)' } },
  ]);
  assert.equal(
    finalText('\x1b]0;a title\x07\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ \x1b[2A\x1b[92mbright\x1b[0m'),
    'link bright',
  );
});

test('a sequence or a line split across chunks is read whole', () => {
  const terminal = new TerminalText();
  assert.deepEqual(terminal.feed('\x1b[3'), []);
  assert.deepEqual(terminal.feed('2mgreen'), []);
  assert.deepEqual(lineText(terminal.currentLine()), 'green');
  assert.deepEqual(terminal.currentLine()[0]!.style, { fg: 2 });
  terminal.feed('\r');
  const [line] = terminal.feed('GREEN\n');
  assert.equal(lineText(line!), 'GREEN');
  assert.equal(terminal.hasCurrentLine, false);
  // A lone escape never held forever: past the bound it is text.
  assert.equal(finalText(`\x1b[${'1;'.repeat(200)}`).length > 0, true);
});
