import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { CappedOutput } from '../../src/engine/output';
import { MAX_ORDER_ENTRIES, OutputOrder } from '../../src/engine/outputOrder';
import type { StreamName } from '../../src/engine/types';

/** Feeds chunks as the engine's sink does: the byte range each one takes in its stream. */
function recorder(capBytes: number) {
  const streams = { stdout: new CappedOutput(capBytes), stderr: new CappedOutput(capBytes) };
  const order = new OutputOrder();
  let displays = 0;
  return {
    streams,
    order,
    write(stream: StreamName, text: string) {
      const start = streams[stream].byteLength;
      streams[stream].append(text);
      order.text(stream, start, streams[stream].byteLength);
    },
    display() {
      order.display(displays++);
    },
  };
}

test('text and displays keep their order; consecutive text of one stream is one item', () => {
  const r = recorder(1024);
  r.write('stdout', 'a');
  r.write('stdout', 'b\n');
  r.write('stderr', 'warn\n');
  r.display();
  r.write('stdout', 'done\n');
  assert.deepEqual(r.order.items(r.streams), [
    { type: 'stream', name: 'stdout', text: 'ab\n' },
    { type: 'stream', name: 'stderr', text: 'warn\n' },
    { type: 'display', index: 0 },
    { type: 'stream', name: 'stdout', text: 'done\n' },
  ]);
});

test('a capped stream keeps its head and tail where they were written, the marker once between them', () => {
  const r = recorder(20);
  r.write('stdout', 'héad-0123\n');
  r.display();
  r.write('stdout', 'x'.repeat(100));
  r.display();
  r.write('stdout', 'tail-end\n');
  const items = r.order.items(r.streams);
  const stdout = items.map((item) => (item.type === 'stream' ? item.text : '')).join('');
  assert.equal(stdout, r.streams.stdout.text(), 'the items joined are the stream as the result has it');
  assert.equal(items.filter((item) => item.type === 'display').length, 2);
  assert.equal(stdout.match(/bytes of output truncated/g)?.length, 1);
  assert.equal(items[0].type === 'stream' && items[0].text.startsWith('héad'), true);
  assert.equal(
    items.at(-1)?.type === 'stream' &&
      items.at(-1)!.type === 'stream' &&
      (items.at(-1) as { text: string }).text.endsWith('tail-end\n'),
    true,
  );
});

test('bytes a source dropped before any text followed are marked at the end', () => {
  const r = recorder(1024);
  r.write('stdout', 'head\n');
  r.display();
  r.streams.stdout.skip(500);
  const items = r.order.items(r.streams);
  assert.equal(items.map((item) => (item.type === 'stream' ? item.text : '')).join(''), r.streams.stdout.text());
  assert.match((items.at(-1) as { text: string }).text, /500 bytes of output truncated/);
});

test('past the entry bound, alternating streams join their last entry: the list stays bounded, no text is lost', () => {
  const r = recorder(10 * 1024 * 1024);
  for (let i = 0; i < MAX_ORDER_ENTRIES * 2; i++) r.write(i % 2 ? 'stderr' : 'stdout', i % 2 ? 'e' : 'o');
  const items = r.order.items(r.streams);
  assert.ok(items.length <= MAX_ORDER_ENTRIES + 2, `${items.length} items`);
  const joined = (name: StreamName) =>
    items.map((item) => (item.type === 'stream' && item.name === name ? item.text : '')).join('');
  assert.equal(joined('stdout'), 'o'.repeat(MAX_ORDER_ENTRIES));
  assert.equal(joined('stderr'), 'e'.repeat(MAX_ORDER_ENTRIES));
});

test("the last expression's value is an execute_result item where it came, its display's index when it has one", () => {
  const r = recorder(1024);
  r.write('stdout', 'a\n');
  r.display();
  r.order.result('Table(1)', 1);
  const plain = recorder(1024);
  plain.write('stdout', 'b\n');
  plain.order.result('42');
  assert.deepEqual(r.order.items(r.streams), [
    { type: 'stream', name: 'stdout', text: 'a\n' },
    { type: 'display', index: 0 },
    { type: 'execute_result', text: 'Table(1)', index: 1 },
  ]);
  assert.deepEqual(plain.order.items(plain.streams), [
    { type: 'stream', name: 'stdout', text: 'b\n' },
    { type: 'execute_result', text: '42' },
  ]);
});
