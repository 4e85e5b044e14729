import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { codeToRun, dedent } from '../../src/vscode/codeText';

test('dedent removes the shared indentation and keeps the relative one', () => {
  assert.equal(dedent('    if x:\n        y()\n\n    z()'), 'if x:\n    y()\n\nz()');
  assert.equal(dedent('\tif x:\n\t\ty()'), 'if x:\n\ty()');
  assert.equal(dedent('a\n  b'), 'a\n  b');
  assert.equal(dedent('  a\r\n  b'), 'a\nb');
});

const source = ['def f():', '    for i in range(3):', '        print(i)', '    return 1', 'x = f()  # call'];

test('an empty selection runs the current line', () => {
  assert.equal(codeToRun(source, { startLine: 2, startCharacter: 3, endLine: 2, endCharacter: 3 }), 'print(i)');
});

test('a selection inside one line runs exactly that text', () => {
  assert.equal(codeToRun(source, { startLine: 4, startCharacter: 4, endLine: 4, endCharacter: 7 }), 'f()');
});

test('a multi-line selection runs its full lines, dedented, so a nested block runs', () => {
  const code = codeToRun(source, { startLine: 1, startCharacter: 8, endLine: 2, endCharacter: 16 });
  assert.equal(code, 'for i in range(3):\n    print(i)');
});

test('a selection ending at column 0 does not take the next line', () => {
  assert.equal(
    codeToRun(source, { startLine: 1, startCharacter: 0, endLine: 3, endCharacter: 0 }),
    'for i in range(3):\n    print(i)',
  );
});
