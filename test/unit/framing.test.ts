import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { encodeFrame, FrameDecoder, FrameError, FRAME_HEADER_BYTES } from '../../src/engine/framing';

test('a frame is a 4-byte big-endian length and UTF-8 JSON', () => {
  const frame = encodeFrame({ a: 'é' });
  const json = '{"a":"é"}';
  assert.equal(frame.readUInt32BE(0), Buffer.byteLength(json));
  assert.equal(frame.subarray(FRAME_HEADER_BYTES).toString('utf8'), json);
});

test('one chunk holding several frames yields them all, in order', () => {
  const decoder = new FrameDecoder();
  const chunk = Buffer.concat([encodeFrame(1), encodeFrame({ two: 2 }), encodeFrame(['three']), encodeFrame(null)]);
  assert.deepEqual(decoder.push(chunk), [1, { two: 2 }, ['three'], null]);
  assert.equal(decoder.pendingBytes, 0);
});

test('a frame fed one byte at a time comes out once, when complete', () => {
  const decoder = new FrameDecoder();
  const message = { text: 'multi-byte: 日本語 🐍', n: 42 };
  const frame = encodeFrame(message);
  const out: unknown[] = [];
  for (let i = 0; i < frame.length; i++) {
    out.push(...decoder.push(frame.subarray(i, i + 1)));
    if (i < frame.length - 1) assert.equal(out.length, 0);
  }
  assert.deepEqual(out, [message]);
  assert.equal(decoder.pendingBytes, 0);
});

test('chunk boundaries anywhere: frames split across chunks and several per chunk', () => {
  const messages = Array.from({ length: 50 }, (_, i) => ({ i, pad: 'x'.repeat(i * 7), emoji: '🐍'.repeat(i % 5) }));
  const stream = Buffer.concat(messages.map((m) => encodeFrame(m)));
  for (const size of [1, 2, 3, 5, 13, 64, 1000, stream.length]) {
    const decoder = new FrameDecoder();
    const out: unknown[] = [];
    for (let at = 0; at < stream.length; at += size) out.push(...decoder.push(stream.subarray(at, at + size)));
    assert.deepEqual(out, messages, `chunk size ${size}`);
  }
});

test('a large frame spread over many chunks is reassembled', () => {
  const message = { text: 'y'.repeat(3 * 1024 * 1024) };
  const frame = encodeFrame(message);
  const decoder = new FrameDecoder();
  const out: unknown[] = [];
  for (let at = 0; at < frame.length; at += 65536) out.push(...decoder.push(frame.subarray(at, at + 65536)));
  assert.equal(out.length, 1);
  assert.deepEqual(out[0], message);
});

test('lone surrogates survive the round trip as JSON escapes', () => {
  const text = 'a\ud800b\udfffc';
  assert.deepEqual(new FrameDecoder().push(encodeFrame({ text })), [{ text }]);
});

test('an empty chunk changes nothing', () => {
  const decoder = new FrameDecoder();
  assert.deepEqual(decoder.push(Buffer.alloc(0)), []);
  const frame = encodeFrame('x');
  assert.deepEqual(decoder.push(frame.subarray(0, 2)), []);
  assert.deepEqual(decoder.push(Buffer.alloc(0)), []);
  assert.equal(decoder.pendingBytes, 2);
  assert.deepEqual(decoder.push(frame.subarray(2)), ['x']);
});

test('an oversized incoming frame is refused from its header, before its body is buffered', () => {
  const decoder = new FrameDecoder(1024);
  const header = Buffer.alloc(4);
  header.writeUInt32BE(1025, 0);
  assert.throws(
    () => decoder.push(header),
    (error: unknown) => {
      assert.ok(error instanceof FrameError);
      assert.match(error.message, /1025 bytes exceeds the limit of 1024 bytes/);
      return true;
    },
  );
  assert.equal(decoder.pendingBytes, 0);
  // The stream is out of step from here on; the decoder says so instead of misreading what follows.
  assert.throws(() => decoder.push(encodeFrame(1)), /corrupt/);
});

test('a frame at exactly the limit is accepted', () => {
  const message = 'z'.repeat(98);
  const frame = encodeFrame(message);
  assert.equal(frame.length - FRAME_HEADER_BYTES, 100);
  assert.deepEqual(new FrameDecoder(100).push(frame), [message]);
});

test('encoding refuses a message over the limit and a value JSON cannot carry', () => {
  assert.throws(
    () => encodeFrame('x'.repeat(200), 100),
    (error: unknown) => error instanceof FrameError && /exceeds the limit of 100 bytes/.test(error.message),
  );
  assert.throws(() => encodeFrame(undefined), FrameError);
});

test('a body that is not JSON is a clear error', () => {
  const body = Buffer.from('{not json', 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  assert.throws(
    () => new FrameDecoder().push(Buffer.concat([header, body])),
    (error: unknown) => {
      assert.ok(error instanceof FrameError);
      assert.match(error.message, /not valid JSON/);
      return true;
    },
  );
});
