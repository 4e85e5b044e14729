import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { extractCode } from '../../src/vscode/generateCode';

test('the first fenced python block is the code', () => {
  assert.equal(extractCode('Sure:\n```python\nprint(1)\n```\nand\n```python\nprint(2)\n```'), 'print(1)');
  assert.equal(extractCode('```py\nx = 1\n```'), 'x = 1');
  assert.equal(extractCode('```\nx = 2\n```'), 'x = 2');
});

test('an answer without fences is taken whole; a fence without a block is no code', () => {
  assert.equal(extractCode('print("bare")\n'), 'print("bare")');
  assert.equal(extractCode('```python\n```'), undefined);
  assert.equal(extractCode('I cannot ``` do that'), undefined);
  assert.equal(extractCode('   '), undefined);
});
