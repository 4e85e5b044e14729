// The output ring between the Pyodide worker and its host: records go through in order across the wrap, and a
// ring changed by anyone but its two ends (code in the worker can reach the buffer) is refused before a byte
// of it is copied, by either end, instead of being read, waited on or allocated for.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  createRing,
  DROPPED,
  RingCorruption,
  RingReader,
  RingWriter,
  STDERR,
  STDOUT,
} from '../../src/engine/backends/pyodide/ring';

const RING_BYTES = 64;

function ring() {
  const buffer = createRing(RING_BYTES);
  const control = new Int32Array(buffer, 0, 2);
  const data = new Uint8Array(buffer, 8);
  return { buffer, control, data, writer: new RingWriter(buffer), reader: new RingReader(buffer) };
}

function drained(reader: RingReader): [number, string][] {
  const records: [number, string][] = [];
  reader.drain((tag, bytes) => records.push([tag, Buffer.from(bytes).toString()]));
  return records;
}

describe('output ring', () => {
  test('records arrive in order, across the end of the buffer, split when larger than it', () => {
    const { writer, reader } = ring();
    for (let round = 0; round < 10; round++) {
      writer.write(STDOUT, Buffer.from(`line ${round}\n`));
      writer.write(STDERR, Buffer.from('e'));
      assert.deepEqual(drained(reader), [
        [STDOUT, `line ${round}\n`],
        [STDERR, 'e'],
      ]);
    }
    const big = 'x'.repeat(RING_BYTES - 5);
    writer.write(STDOUT, Buffer.from(big));
    assert.deepEqual(drained(reader), [[STDOUT, big]]);
    const count = new Uint8Array(8);
    new DataView(count.buffer).setFloat64(0, 12, true);
    writer.write(STDOUT | DROPPED, count);
    const records: [number, number][] = [];
    reader.drain((tag, bytes) => records.push([tag, new DataView(bytes.buffer).getFloat64(0, true)]));
    assert.deepEqual(records, [[STDOUT | DROPPED, 12]]);
  });

  const corruptions: Record<string, (r: ReturnType<typeof ring>) => void> = {
    'the read counter moved by someone else': ({ control }) => Atomics.store(control, 1, 7),
    'both counters set to the same other value': ({ control }) => {
      Atomics.store(control, 0, -1);
      Atomics.store(control, 1, -1);
    },
    'a write counter behind the read counter': ({ control }) => Atomics.store(control, 0, -5),
    'a write counter past a whole ring': ({ control }) => Atomics.store(control, 0, RING_BYTES + 1),
    'a record longer than what is waiting': ({ control, data }) => {
      data.set([STDOUT, 0xff, 0xff, 0xff, 0xff]);
      Atomics.store(control, 0, 20);
    },
    'an unknown tag': ({ control, data }) => {
      data.set([9, 1, 0, 0, 0, 65]);
      Atomics.store(control, 0, 6);
    },
    'a cut-off header': ({ control, data }) => {
      data.set([STDOUT, 0, 0, 0, 0, STDOUT]);
      Atomics.store(control, 0, 7);
    },
    'a dropped-bytes record that holds no count': ({ control, data }) => {
      data.set([STDOUT | DROPPED, 8, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255]);
      Atomics.store(control, 0, 13);
    },
  };
  for (const [name, corrupt] of Object.entries(corruptions)) {
    test(`the reader refuses ${name}, handing over nothing`, () => {
      const r = ring();
      corrupt(r);
      const emitted: number[] = [];
      assert.throws(() => r.reader.drain((tag) => emitted.push(tag)), RingCorruption);
      assert.throws(() => r.reader.check(), RingCorruption);
      assert.deepEqual(emitted, []);
    });
  }

  test('a read counter changed while the reader drains (after its check, before its move) is caught, not overwritten', () => {
    const { writer, reader, control } = ring();
    writer.write(STDOUT, Buffer.from('kept'));
    // The other thread acts at the one moment the reader is between its check of the read counter and its move
    // of it: here, as it loads the write counter.
    const load = Atomics.load;
    let acted = false;
    Atomics.load = ((array: Int32Array, index: number) => {
      const value = load(array, index);
      if (array.buffer === control.buffer && index === 0 && !acted) {
        acted = true;
        Atomics.sub(control, 1, 5);
      }
      return value;
    }) as typeof Atomics.load;
    const emitted: number[] = [];
    try {
      assert.throws(() => reader.drain((tag) => emitted.push(tag)), RingCorruption);
    } finally {
      Atomics.load = load;
    }
    assert.equal(acted, true);
    assert.deepEqual(emitted, []);
    assert.throws(() => reader.check(), RingCorruption, 'the change stays there to be seen');
  });

  test('the writer refuses a write counter it did not set, and a read counter more than a whole ring behind, rather than wait', () => {
    const moved = ring();
    moved.writer.write(STDOUT, Buffer.from('a'));
    Atomics.store(moved.control, 0, 0);
    assert.throws(() => moved.writer.write(STDOUT, Buffer.from('b')), RingCorruption);

    const full = ring();
    Atomics.store(full.control, 1, -RING_BYTES - 1);
    assert.throws(() => full.writer.write(STDOUT, Buffer.from('b')), RingCorruption);
  });
});
