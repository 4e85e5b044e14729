import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { CappedOutput, sliceFromEndToBytes, sliceToBytes } from '../../src/engine/output';

test('small output is kept whole and streamed whole', () => {
  const out = new CappedOutput(100);
  assert.equal(out.append('hello '), 'hello ');
  assert.equal(out.append('world'), 'world');
  assert.equal(out.text(), 'hello world');
  assert.equal(out.truncated, false);
});

test('large output keeps head and tail with a marker naming the dropped bytes', () => {
  const out = new CappedOutput(20);
  let streamed = '';
  for (let i = 0; i < 100; i++) streamed += out.append(`${i % 10}`.repeat(10));
  assert.equal(streamed, '0000000000', 'only the head is streamed');
  assert.equal(out.truncated, true);
  const text = out.text();
  assert.ok(text.startsWith('0000000000\n'));
  assert.ok(text.endsWith('\n9999999999'));
  assert.match(text, /\[980 bytes of output truncated\]/);
  assert.equal(out.byteLength, 1000);
});

test('one huge chunk is split between head and tail', () => {
  const out = new CappedOutput(10);
  const streamed = out.append('abcdefghijklmnopqrstuvwxyz');
  assert.equal(streamed, 'abcde');
  assert.match(out.text(), /^abcde\n… \[16 bytes of output truncated\] …\nvwxyz$/);
});

test('multi-byte characters are never split', () => {
  assert.equal(sliceToBytes('ééé', 3), 'é');
  assert.equal(sliceFromEndToBytes('ééé', 3), 'é');
  assert.equal(sliceFromEndToBytes('a😀', 4), '😀');
  assert.equal(sliceFromEndToBytes('a😀', 3), '');
  const out = new CappedOutput(8);
  out.append('😀😀😀😀😀');
  assert.ok(!out.text().includes('\uFFFD'));
});

test('memory stays bounded for a flood of small writes', () => {
  const out = new CappedOutput(1024);
  for (let i = 0; i < 100_000; i++) out.append('line of output\n');
  assert.ok(out.text().length < 1200);
  assert.equal(out.byteLength, 1_500_000);
});
