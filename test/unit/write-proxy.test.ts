// The server's write proxy on its own, against a real folder: what it makes, what it refuses and with which
// code, and that it closes what a sandbox leaves open. The sandbox's side is in test/sandbox/workspace-writes.
import { afterEach, beforeEach, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { WriteData } from '../../src/engine/sandbox/writeData';
import { MAX_OPEN_WRITES, WriteProxy, type WriteReply } from '../../src/engine/sandbox/writeProxy';

const { O_WRONLY, O_RDONLY, O_CREAT, O_APPEND, O_RDWR } = fs.constants;

async function value(answer: Promise<WriteReply>): Promise<number | null> {
  const reply = await answer;
  assert.ok('value' in reply, JSON.stringify(reply));
  return reply.value;
}

async function code(answer: Promise<WriteReply>): Promise<string> {
  const reply = await answer;
  assert.ok('error' in reply, `expected a refusal: ${JSON.stringify(reply)}`);
  return reply.error.code;
}

describe('the write proxy', () => {
  let root: string;
  let writable: string;
  let proxy: WriteProxy;
  /** The data pipe: a write's bytes go here before its request. */
  let pipe: PassThrough;

  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-proxy-')));
    writable = path.join(root, 'out');
    fs.mkdirSync(writable);
    pipe = new PassThrough();
    proxy = new WriteProxy(
      {
        mounts: [
          { path: root, writable: false },
          { path: writable, writable: true },
        ],
        network: 'off',
      },
      new WriteData(pipe, 1024 * 1024),
    );
  });

  afterEach(() => {
    proxy.dispose();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** A write whose bytes go down the data pipe first, as the sandbox sends them. */
  const write = (handle: number, text: string, position: number | null) => {
    pipe.write(Buffer.from(text));
    return proxy.answer({ op: 'write', handle, length: Buffer.byteLength(text), position });
  };

  test('opens, writes at a position or at the end, and closes', async () => {
    const file = path.join(writable, 'a.txt');
    const handle = (await value(proxy.answer({ op: 'open', path: file, flags: O_WRONLY | O_CREAT, mode: 0o644 })))!;
    assert.equal(await value(write(handle, 'hello', 0)), 5);
    assert.equal(await value(write(handle, 'J', 0)), 1);
    assert.equal(await value(proxy.answer({ op: 'close', handle })), null);
    assert.equal(fs.readFileSync(file, 'utf8'), 'Jello');
    const appending = (await value(proxy.answer({ op: 'open', path: file, flags: O_WRONLY | O_APPEND, mode: 0 })))!;
    await value(write(appending, '!', 0));
    await value(proxy.answer({ op: 'close', handle: appending }));
    assert.equal(fs.readFileSync(file, 'utf8'), 'Jello!');
    assert.equal(await code(proxy.answer({ op: 'close', handle })), 'EBADF');
  });

  test("a write waits for its bytes, takes exactly its own, and an unknown handle's bytes are still taken", async () => {
    const file = path.join(writable, 'b.txt');
    const handle = (await value(proxy.answer({ op: 'open', path: file, flags: O_WRONLY | O_CREAT, mode: 0o644 })))!;
    const waiting = proxy.answer({ op: 'write', handle, length: 6, position: 0 });
    pipe.write('abc');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(fs.readFileSync(file, 'utf8'), '', 'nothing is written before all its bytes came');
    pipe.write('def');
    assert.equal(await value(waiting), 6);
    assert.equal(await code(write(99, 'lost', 0)), 'EBADF');
    assert.equal(await value(write(handle, 'XYZ', 6)), 3);
    assert.equal(fs.readFileSync(file, 'utf8'), 'abcdefXYZ');
  });

  test('refuses what the grants do not allow, with EACCES and the reason', async () => {
    const refused = [
      { op: 'open', path: path.join(root, 'top.txt'), flags: O_WRONLY | O_CREAT, mode: 0o644 },
      { op: 'mkdir', path: path.join(writable, '.git'), mode: 0o755 },
      { op: 'create', path: path.join(writable, 'deep', '.git', 'config'), mode: 0o644 },
      { op: 'create', path: path.join(writable, 'venv', 'pyvenv.cfg'), mode: 0o644 },
      { op: 'create', path: '/etc/planted', mode: 0o644 },
      { op: 'rename', from: path.join(writable), to: path.join(root, 'moved') },
    ] as const;
    for (const request of refused) {
      const reply = await proxy.answer(request);
      assert.equal(await code(Promise.resolve(reply)), 'EACCES', JSON.stringify(request));
      assert.match('error' in reply ? reply.error.message : '', /^Requires write access/);
    }
    assert.deepEqual(fs.readdirSync(root), ['out']);
    assert.deepEqual(fs.readdirSync(writable), []);
  });

  test('never writes through a link, nor moves one', async () => {
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
        assert.equal(await code(proxy.answer(request)), 'EACCES', JSON.stringify(request));
      assert.equal(fs.readFileSync(path.join(outside, 'secret'), 'utf8'), 'secret');
      assert.deepEqual(fs.readdirSync(outside), ['secret']);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  test('takes only requests it knows, and only the open flags and mode bits it allows', async () => {
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
      assert.equal(await code(proxy.answer(request)), 'EINVAL', JSON.stringify(request));
    const file = path.join(writable, 'mode.txt');
    await proxy.answer({ op: 'create', path: file, mode: 0o6777 });
    assert.equal(fs.statSync(file).mode & 0o7000, 0);
    await proxy.answer({ op: 'chmod', path: file, mode: 0o4755 });
    assert.equal(fs.statSync(file).mode & 0o7777, 0o755);
  });

  test(`holds at most ${MAX_OPEN_WRITES} files open, and closes them all when disposed`, async () => {
    const fdsBefore = fs.readdirSync('/proc/self/fd').length;
    const handles: number[] = [];
    for (let i = 0; i < MAX_OPEN_WRITES; i++)
      handles.push(
        (await value(
          proxy.answer({ op: 'open', path: path.join(writable, `${i}`), flags: O_RDWR | O_CREAT, mode: 0o644 }),
        ))!,
      );
    const oneMore = { op: 'open', path: path.join(writable, 'one-more'), flags: O_RDWR | O_CREAT, mode: 0o644 };
    assert.equal(await code(proxy.answer(oneMore)), 'EMFILE');
    await proxy.answer({ op: 'close', handle: handles.pop()! });
    await value(proxy.answer(oneMore));
    proxy.dispose();
    assert.equal(fs.readdirSync('/proc/self/fd').length, fdsBefore);
  });
});
