// The server's write proxy on its own, against a real folder: what it makes, what it refuses and with which
// code, and that it closes what a sandbox leaves open. The sandbox's side is in test/sandbox/workspace-writes.
import { afterEach, beforeEach, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { serveWriteRequests } from '../../src/engine/sandbox/writeRequests';
import { MAX_OPEN_WRITES, WriteProxy, type WriteReply } from '../../src/engine/sandbox/writeProxy';

const { O_WRONLY, O_RDONLY, O_CREAT, O_APPEND, O_RDWR } = fs.constants;

function value(reply: WriteReply): number | null {
  assert.ok('value' in reply, JSON.stringify(reply));
  return reply.value;
}

function code(reply: WriteReply): string {
  assert.ok('error' in reply, `expected a refusal: ${JSON.stringify(reply)}`);
  return reply.error.code;
}

describe('the write proxy', () => {
  let root: string;
  let writable: string;
  let proxy: WriteProxy;

  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-proxy-')));
    writable = path.join(root, 'out');
    fs.mkdirSync(writable);
    proxy = new WriteProxy({
      mounts: [
        { path: root, writable: false },
        { path: writable, writable: true },
      ],
      network: 'off',
    });
  });

  afterEach(() => {
    proxy.dispose();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const write = (handle: number, text: string, position: number | null) =>
    proxy.answer({ op: 'write', handle, length: Buffer.byteLength(text), position }, Buffer.from(text));

  test('opens, writes at a position or at the end, closes with the last bytes or without', () => {
    const file = path.join(writable, 'a.txt');
    const handle = value(proxy.answer({ op: 'open', path: file, flags: O_WRONLY | O_CREAT, mode: 0o644 }))!;
    assert.equal(value(write(handle, 'hello', 0)), 5);
    assert.equal(value(write(handle, 'J', 0)), 1);
    assert.equal(value(proxy.answer({ op: 'close', handle })), null);
    assert.equal(fs.readFileSync(file, 'utf8'), 'Jello');
    const appending = value(proxy.answer({ op: 'open', path: file, flags: O_WRONLY | O_APPEND, mode: 0 }))!;
    assert.equal(
      value(proxy.answer({ op: 'close', handle: appending, write: { length: 1, position: 0 } }, Buffer.from('!'))),
      1,
    );
    assert.equal(fs.readFileSync(file, 'utf8'), 'Jello!');
    assert.equal(code(proxy.answer({ op: 'close', handle })), 'EBADF');
    assert.equal(code(proxy.answer({ op: 'close', handle: appending })), 'EBADF', 'closed with its last bytes');
  });

  test('refuses what the grants do not allow, with EACCES and the reason', () => {
    const refused = [
      { op: 'open', path: path.join(root, 'top.txt'), flags: O_WRONLY | O_CREAT, mode: 0o644 },
      { op: 'mkdir', path: path.join(writable, '.git'), mode: 0o755 },
      { op: 'create', path: path.join(writable, 'deep', '.git', 'config'), mode: 0o644 },
      { op: 'create', path: path.join(writable, 'venv', 'pyvenv.cfg'), mode: 0o644 },
      { op: 'create', path: '/etc/planted', mode: 0o644 },
      { op: 'rename', from: path.join(writable), to: path.join(root, 'moved') },
    ] as const;
    for (const request of refused) {
      const reply = proxy.answer(request);
      assert.equal(code(reply), 'EACCES', JSON.stringify(request));
      assert.match('error' in reply ? reply.error.message : '', /^Requires write access/);
    }
    assert.deepEqual(fs.readdirSync(root), ['out']);
    assert.deepEqual(fs.readdirSync(writable), []);
  });

  test('never writes through a link, nor moves one', () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-proxy-outside-'));
    try {
      fs.symlinkSync(outside, path.join(writable, 'leak'));
      fs.writeFileSync(path.join(outside, 'secret'), 'secret');
      fs.symlinkSync(path.join(outside, 'secret'), path.join(writable, 'secret-link'));
      for (const request of [
        { op: 'create', path: path.join(writable, 'leak', 'planted'), mode: 0o644 },
        { op: 'open', path: path.join(writable, 'secret-link'), flags: O_WRONLY, mode: 0 },
        { op: 'chmod', path: path.join(writable, 'secret-link'), mode: 0o777 },
        { op: 'rename', from: path.join(writable, 'secret-link'), to: path.join(writable, 'moved') },
        { op: 'unlink', path: path.join(writable, 'leak', 'secret') },
      ] as const)
        assert.equal(code(proxy.answer(request)), 'EACCES', JSON.stringify(request));
      assert.equal(fs.readFileSync(path.join(outside, 'secret'), 'utf8'), 'secret');
      assert.deepEqual(fs.readdirSync(outside), ['secret']);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  test('takes only requests it knows, and only the open flags and mode bits it allows', () => {
    for (const request of [
      { op: 'exec', command: 'id' },
      'text',
      null,
      { op: 'open', path: path.join(writable, 'x'), flags: O_RDONLY, mode: 0 },
      { op: 'open', path: path.join(writable, 'x'), flags: O_WRONLY | 0o10000000, mode: 0 },
      { op: 'open', path: path.join(writable, 'x'), flags: O_WRONLY | O_CREAT, mode: 0, extra: true },
      { op: 'write', handle: -1, length: 1, position: 0 },
      { op: 'write', handle: 1, length: 64 * 1024 * 1024, position: 0 },
      { op: 'write', handle: 1, data: 'eA==', position: 0 },
    ])
      assert.equal(code(proxy.answer(request)), 'EINVAL', JSON.stringify(request));
    const file = path.join(writable, 'mode.txt');
    proxy.answer({ op: 'create', path: file, mode: 0o6777 });
    assert.equal(fs.statSync(file).mode & 0o7000, 0);
    proxy.answer({ op: 'chmod', path: file, mode: 0o4755 });
    assert.equal(fs.statSync(file).mode & 0o7777, 0o755);
  });

  test(`holds at most ${MAX_OPEN_WRITES} files open, and closes them all when disposed`, () => {
    const fdsBefore = fs.readdirSync('/proc/self/fd').length;
    const handles: number[] = [];
    for (let i = 0; i < MAX_OPEN_WRITES; i++)
      handles.push(
        value(proxy.answer({ op: 'open', path: path.join(writable, `${i}`), flags: O_RDWR | O_CREAT, mode: 0o644 }))!,
      );
    const oneMore = { op: 'open', path: path.join(writable, 'one-more'), flags: O_RDWR | O_CREAT, mode: 0o644 };
    assert.equal(code(proxy.answer(oneMore)), 'EMFILE');
    proxy.answer({ op: 'close', handle: handles.pop()! });
    value(proxy.answer(oneMore));
    proxy.dispose();
    assert.equal(fs.readdirSync('/proc/self/fd').length, fdsBefore);
  });
});

describe('the write channel', () => {
  /** A request frame, and the bytes it names after it. */
  const frame = (request: unknown, bytes = ''): Buffer => {
    const json = Buffer.from(JSON.stringify(request));
    const header = Buffer.alloc(4);
    header.writeUInt32BE(json.length, 0);
    return Buffer.concat([header, json, Buffer.from(bytes)]);
  };
  const replies = (out: PassThrough): unknown[] => {
    const all = out.read() as Buffer | null;
    const found: unknown[] = [];
    for (let at = 0; all && at < all.length;) {
      const length = all.readUInt32BE(at);
      found.push(JSON.parse(all.subarray(at + 4, at + 4 + length).toString()));
      at += 4 + length;
    }
    return found;
  };

  test('answers requests in order, each with exactly the bytes it names, however the stream is cut', () => {
    const requests = new PassThrough();
    const out = new PassThrough();
    const seen: Array<[unknown, string | undefined]> = [];
    serveWriteRequests(requests, out, {
      answer: (request, bytes) => (seen.push([request, bytes?.toString()]), { value: seen.length }),
      malformed: (reason) => assert.fail(reason),
    });
    const stream = Buffer.concat([
      frame({ op: 'write', handle: 1, length: 5, position: 0 }, 'hello'),
      frame({ op: 'mkdir', path: '/x', mode: 0o755 }),
      frame({ op: 'close', handle: 1, write: { length: 3, position: 5 } }, 'abc'),
    ]);
    // One byte at a time: every boundary falls inside a header, a body or the bytes somewhere.
    for (let i = 0; i < stream.length; i++) requests.write(stream.subarray(i, i + 1));
    assert.deepEqual(seen, [
      [{ op: 'write', handle: 1, length: 5, position: 0 }, 'hello'],
      [{ op: 'mkdir', path: '/x', mode: 0o755 }, undefined],
      [{ op: 'close', handle: 1, write: { length: 3, position: 5 } }, 'abc'],
    ]);
    assert.deepEqual(replies(out), [{ value: 1 }, { value: 2 }, { value: 3 }]);
  });

  test('a sender that never reads the answers is not read from until it does: nothing piles up', async () => {
    const requests = new PassThrough();
    const out = new PassThrough({ highWaterMark: 1024 });
    let answered = 0;
    serveWriteRequests(requests, out, {
      answer: () => (answered++, { value: null }),
      malformed: (reason) => assert.fail(reason),
    });
    const many = Buffer.concat(Array.from({ length: 1000 }, () => frame({ op: 'mkdir', path: '/x', mode: 0o755 })));
    requests.write(many);
    assert.ok(answered < 1000, `${answered} answered before any was read`);
    assert.equal(requests.isPaused(), true);
    const before = answered;
    out.read();
    // 'drain' comes on a later turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(answered > before, 'reading the answers lets the next requests through');
  });

  for (const [what, bytes] of [
    ['a frame over the limit', Buffer.from([0xff, 0xff, 0xff, 0xff])],
    ['a frame that is not JSON', frame('x').subarray(0, 4).fill(0, 0, 3).fill(3, 3, 4)],
    ['a byte count that cannot be', frame({ op: 'write', handle: 1, length: 64 * 1024 * 1024, position: 0 })],
    ['a negative byte count', frame({ op: 'write', handle: 1, length: -1, position: 0 })],
  ] as const)
    test(`${what} ends the channel and says so; nothing after it is answered`, () => {
      const requests = new PassThrough();
      const out = new PassThrough();
      const problems: string[] = [];
      let answered = 0;
      serveWriteRequests(requests, out, {
        answer: () => (answered++, { value: null }),
        malformed: (reason) => problems.push(reason),
      });
      requests.write(what === 'a frame that is not JSON' ? Buffer.concat([bytes, Buffer.from('{no')]) : bytes);
      requests.write(frame({ op: 'mkdir', path: '/x', mode: 0o755 }));
      assert.equal(problems.length, 1, what);
      assert.equal(answered, 0);
    });
});
