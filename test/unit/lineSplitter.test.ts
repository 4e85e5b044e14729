import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { KEPT_EDGE_BYTES, LineSplitter, type SplitLine } from '../../src/mcp/lineSplitter';

const texts = (lines: SplitLine[]) => lines.map((l) => (l.kind === 'line' ? l.text : `<${l.bytes} bytes>`));

test('one chunk with several lines yields them in order; the unterminated rest waits', () => {
  const splitter = new LineSplitter(100);
  assert.deepEqual(texts(splitter.push(Buffer.from('a\nbb\nccc'))), ['a', 'bb']);
  assert.deepEqual(texts(splitter.push(Buffer.from('c\n'))), ['cccc']);
});

test('\\r\\n endings lose their \\r; empty lines are skipped', () => {
  const splitter = new LineSplitter(100);
  assert.deepEqual(texts(splitter.push(Buffer.from('one\r\n\r\n\ntwo\r\n'))), ['one', 'two']);
});

test('chunk boundaries anywhere, including inside a multi-byte character and between \\r and \\n', () => {
  const stream = Buffer.from('{"a":"日本語 🐍"}\r\nsecond\n\r\nthird é\r\n');
  for (const size of [1, 2, 3, 5, 7, stream.length]) {
    const splitter = new LineSplitter(100);
    const out: SplitLine[] = [];
    for (let at = 0; at < stream.length; at += size) out.push(...splitter.push(stream.subarray(at, at + size)));
    assert.deepEqual(texts(out), ['{"a":"日本語 🐍"}', 'second', 'third é'], `chunk size ${size}`);
  }
});

test('end() gives the last line when it had no newline, and nothing otherwise', () => {
  const splitter = new LineSplitter(100);
  assert.deepEqual(texts(splitter.push(Buffer.from('done\nlast'))), ['done']);
  assert.deepEqual(texts(splitter.end()), ['last']);
  assert.deepEqual(texts(splitter.end()), []);
});

test('a line of exactly the limit is kept, with or without \\r; one byte more is too long', () => {
  const splitter = new LineSplitter(10);
  const ten = 'x'.repeat(10);
  assert.deepEqual(texts(splitter.push(Buffer.from(`${ten}\n${ten}\r\n${ten}y\n${ten}y\r\n`))), [
    ten,
    ten,
    '<11 bytes>',
    '<11 bytes>',
  ]);
});

test('an over-long line is reported with its true size and its edges, and the next line is whole', () => {
  const splitter = new LineSplitter(2 * KEPT_EDGE_BYTES);
  const head = `{"id":7,${'a'.repeat(KEPT_EDGE_BYTES)}`;
  const middle = 'm'.repeat(50_000);
  const tail = `${'z'.repeat(KEPT_EDGE_BYTES)},"id":8}`;
  const out: SplitLine[] = [];
  const stream = Buffer.from(`${head}${middle}${tail}\r\n{"next":true}\n`);
  for (let at = 0; at < stream.length; at += 333) out.push(...splitter.push(stream.subarray(at, at + 333)));
  assert.equal(out.length, 2);
  const [long, next] = out;
  assert.equal(long.kind, 'tooLong');
  if (long.kind !== 'tooLong') return;
  assert.equal(long.bytes, head.length + middle.length + tail.length);
  assert.equal(long.head.toString(), head.slice(0, KEPT_EDGE_BYTES));
  assert.equal(long.tail.toString(), tail.slice(-KEPT_EDGE_BYTES));
  assert.deepEqual(next, { kind: 'line', text: '{"next":true}' });
});

test('an over-long line is not held: what is buffered stays near the limit however long the line grows', () => {
  const limit = 64 * 1024;
  const splitter = new LineSplitter(limit);
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  for (let i = 0; i < 200; i++) assert.deepEqual(splitter.push(chunk), []);
  const held = (splitter as unknown as { pendingBytes: number }).pendingBytes;
  assert.ok(held <= limit + 1, `holds ${held} bytes`);
  const [line] = splitter.push(Buffer.from('\n'));
  assert.equal(line.kind === 'tooLong' && line.bytes, 200 * chunk.length);
});

test('an over-long last line without a newline is reported at the end', () => {
  const splitter = new LineSplitter(4);
  assert.deepEqual(splitter.push(Buffer.from('123456')), []);
  assert.deepEqual(texts(splitter.end()), ['<6 bytes>']);
});
