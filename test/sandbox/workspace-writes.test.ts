// Workspace write, as Python uses it, on every mechanism: under bubblewrap the workspace is mounted read-only and
// the server makes each write the grants allow (src/engine/sandbox/writeProxy.ts); under Deno the broker answers
// before Deno writes. Either way Python's file habits work, a link never carries a write out of the grants, and a
// request forged from inside the sandbox changes nothing it could not change anyway.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { testStorageDir } from '../support/mcp';
import { onlyBubblewrap, sandboxUnderTest } from '../support/sandboxUnderTest';

const py = (value: string) => JSON.stringify(value);

describe('workspace write from Python', () => {
  let engine: Engine;
  let workspace: string;
  let outside: string;
  let out: string;
  const run = (code: string, session = 'writer') => engine.run({ code, backend: 'pyodide', session });

  before(() => {
    workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-writes-')));
    outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-outside-')));
    out = path.join(workspace, 'out');
    fs.mkdirSync(out);
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    // Links a person made: one to a folder outside the workspace, one to a file there.
    fs.symlinkSync(outside, path.join(out, 'leak'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(out, 'secret-link'));
    engine = createEngine({
      storageDir: testStorageDir,
      workspaceRoots: [workspace],
      pyodide: { sandbox: sandboxUnderTest, workspaceWritable: true },
    });
  });

  after(async () => {
    await engine?.dispose();
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  test("Python's file habits work: write, append, read back while open, seek, rename, copy, truncate, remove", async () => {
    const result = await run(
      [
        'import os, shutil',
        `d = ${py(path.join(out, 'habits'))}`,
        'os.mkdir(d)',
        'with open(f"{d}/a.txt", "w") as f: f.write("hello")',
        'with open(f"{d}/a.txt", "a") as f: f.write(" world")',
        'with open(f"{d}/a.txt", "r+") as f:',
        '    f.seek(0); f.write("J"); f.flush(); f.seek(0); print(f.read())',
        'with open(f"{d}/w.txt", "w+") as f:',
        '    f.write("abc"); f.flush(); f.seek(0); print(f.read())',
        // Larger than one request carries: split, and whole on the other side.
        'data = bytes(range(256)) * 12289',
        'with open(f"{d}/big.bin", "wb") as f: f.write(data)',
        'print(os.path.getsize(f"{d}/big.bin"))',
        'os.makedirs(f"{d}/sub/deeper")',
        'os.rename(f"{d}/a.txt", f"{d}/sub/deeper/a.txt")',
        'with open(f"{d}/old.txt", "w") as f: f.write("old")',
        'with open(f"{d}/new.txt", "w") as f: f.write("new")',
        'os.replace(f"{d}/new.txt", f"{d}/old.txt")',
        'shutil.copy(f"{d}/big.bin", f"{d}/copy.bin")',
        'os.truncate(f"{d}/copy.bin", 10)',
        'os.chmod(f"{d}/copy.bin", 0o4750)',
        'os.utime(f"{d}/copy.bin", (1000000000, 1000000000))',
        'with open(f"{d}/gone.txt", "w") as f: pass',
        'os.remove(f"{d}/gone.txt")',
        'os.mkdir(f"{d}/empty"); os.rmdir(f"{d}/empty")',
        'with open(f"{d}/t.txt", "w") as f: f.write("a long first text")',
        'with open(f"{d}/t.txt", "w") as f: f.write("short")',
        'os.close(os.open(f"{d}/private.txt", os.O_WRONLY | os.O_CREAT, 0o600))',
        'print(sorted(os.listdir(d)))',
      ].join('\n'),
    );
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(
      result.stdout,
      "Jello world\nabc\n3145984\n['big.bin', 'copy.bin', 'old.txt', 'private.txt', 'sub', 't.txt', 'w.txt']\n",
    );
    const habits = path.join(out, 'habits');
    assert.equal(fs.readFileSync(path.join(habits, 'sub', 'deeper', 'a.txt'), 'utf8'), 'Jello world');
    assert.equal(fs.readFileSync(path.join(habits, 'old.txt'), 'utf8'), 'new');
    // A file opened with "w" again is cut to what the second write says.
    assert.equal(fs.readFileSync(path.join(habits, 't.txt'), 'utf8'), 'short');
    assert.equal(fs.statSync(path.join(habits, 'private.txt')).mode & 0o777, 0o600);
    const big = fs.readFileSync(path.join(habits, 'big.bin'));
    assert.equal(big.length, 256 * 12289);
    assert.ok(
      big.every((byte, i) => byte === i % 256),
      'the bytes arrive as written, in order',
    );
    const copy = fs.statSync(path.join(habits, 'copy.bin'));
    assert.equal(copy.size, 10);
    assert.equal(copy.mtimeMs, 1_000_000_000_000);
    assert.equal(copy.mode & 0o777, 0o750);
    // Where the server makes the write, permission bits only: no set-user-id bit comes from the sandbox (Deno's
    // broker is asked whether a path may be written, not with what mode).
    if (sandboxUnderTest !== 'deno') assert.equal(copy.mode & 0o7000, 0);
  });

  test('a file left open is on disk when the run ends, and written by the next run', async () => {
    await run(`keep = open(${py(path.join(out, 'kept.txt'))}, "w")\nkeep.write("first ")\nkeep.flush()`);
    // What the run wrote is on disk when its result is, though the file is still open.
    assert.equal(fs.readFileSync(path.join(out, 'kept.txt'), 'utf8'), 'first ');
    const result = await run('keep.write("second")\nkeep.close()');
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(fs.readFileSync(path.join(out, 'kept.txt'), 'utf8'), 'first second');
  });

  test('no write goes through a link out of the workspace, and no link is made or moved', async () => {
    const attempts = [
      `open(${py(path.join(out, 'leak', 'planted.txt'))}, "w").write("x")`,
      `open(${py(path.join(out, 'secret-link'))}, "w").write("x")`,
      `open(${py(path.join(out, 'secret-link'))}, "a").write("x")`,
      `import os\nos.mkdir(${py(path.join(out, 'leak', 'made'))})`,
      `import os\nos.remove(${py(path.join(out, 'leak', 'secret.txt'))})`,
      `import os\nos.symlink("/etc", ${py(path.join(out, 'mine'))})`,
      `import os\nos.rename(${py(path.join(out, 'secret-link'))}, ${py(path.join(out, 'moved-link'))})`,
      // A folder holding a link is not moved whole.
      `import os\nos.rename(${py(out)}, ${py(path.join(workspace, 'out2'))})`,
    ];
    for (const code of attempts) {
      const result = await run(code);
      assert.equal(result.success, false, `this succeeded: ${code}`);
    }
    assert.deepEqual(fs.readdirSync(outside), ['secret.txt']);
    assert.equal(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'secret');
    assert.equal(fs.readlinkSync(path.join(out, 'secret-link')), path.join(outside, 'secret.txt'));
    assert.equal(fs.existsSync(path.join(out, 'mine')), false);
    assert.equal((await run('print("still here")')).stdout, 'still here\n');
  });

  test(
    'requests forged on the write channel from inside the sandbox change nothing the grants do not allow',
    { skip: onlyBubblewrap('the channel exists only where the server makes the writes (Deno asks its broker)') },
    async () => {
      const { O_WRONLY, O_CREAT, O_RDONLY } = fs.constants;
      const forged = [
        { op: 'open', path: path.join(out, '.git', 'config'), flags: O_WRONLY | O_CREAT, mode: 0o644 },
        { op: 'open', path: path.join(outside, 'planted.txt'), flags: O_WRONLY | O_CREAT, mode: 0o644 },
        { op: 'open', path: path.join(out, 'secret-link'), flags: O_WRONLY, mode: 0o644 },
        { op: 'open', path: path.join(out, 'read.txt'), flags: O_RDONLY | O_CREAT, mode: 0o644 },
        { op: 'open', path: 'relative.txt', flags: O_WRONLY | O_CREAT, mode: 0o644 },
        { op: 'mkdir', path: path.join(out, 'deep', '.git'), mode: 0o755 },
        { op: 'create', path: path.join(out, 'env', 'pyvenv.cfg'), mode: 0o644 },
        { op: 'rename', from: path.join(out, 'habits', 'old.txt'), to: path.join(outside, 'stolen.txt') },
        { op: 'write', handle: 99, length: 1, position: 0 },
        { op: 'close', handle: 1 },
        { op: 'exec', command: 'id' },
        'not even an object',
      ];
      // A nested worker (started between runs: its module loads need the thread's event loop) waits on shared
      // memory until a run is under way, then speaks the channel itself: a frame, the bytes it names, the answer.
      const body = `const fs = require('node:fs');
const flag = new Int32Array(require('node:worker_threads').workerData, 0, 1);
const read = (n) => { const b = Buffer.alloc(n); for (let got = 0; got < n; ) got += fs.readSync(6, b, got, n - got, null); return b; };
Atomics.wait(flag, 0, 0);
const answers = [];
for (const request of ${JSON.stringify(forged)}) {
  const json = Buffer.from(JSON.stringify(request)); const header = Buffer.alloc(4); header.writeUInt32BE(json.length, 0);
  fs.writeSync(5, Buffer.concat([header, json, Buffer.alloc(request.op === 'write' ? request.length : 0, 120)]));
  answers.push(read(read(4).readUInt32BE(0)).toString());
}
const text = Buffer.from(JSON.stringify(answers));
new Uint8Array(flag.buffer, 8).set(text); new Int32Array(flag.buffer, 4, 1)[0] = text.length;
Atomics.store(flag, 0, 2); Atomics.notify(flag, 0);`;
      await run(
        `import js\njs.globalThis.forge = js.SharedArrayBuffer.new(65536)\n` +
          `_forger = js.eval(${py(`import('node:worker_threads').then((wt) => { globalThis.forger = new wt.Worker(${JSON.stringify(body)}, { eval: true, workerData: globalThis.forge }); })`)})`,
      );
      const result = await run(
        [
          'import js, time',
          'flag = js.Int32Array.new(js.globalThis.forge)',
          'js.Atomics.store(flag, 0, 1); js.Atomics.notify(flag, 0)',
          // Only a guard against a worker that never answers: a slow machine waits longer, it never fails sooner.
          'deadline = time.monotonic() + 120',
          'while js.Atomics.load(flag, 0) != 2 and time.monotonic() < deadline: time.sleep(0.02)',
          'length = js.Int32Array.new(js.globalThis.forge, 4, 1)[0]',
          'print(js.Atomics.load(flag, 0))',
          'print(bytes(js.Uint8Array.new(js.globalThis.forge, 8, length).to_py()).decode())',
        ].join('\n'),
      );
      const [state, text] = result.stdout.split('\n');
      assert.equal(state, '2', JSON.stringify(result));
      const answers = (JSON.parse(text!) as string[]).map(
        (answer) => JSON.parse(answer) as { error?: { code: string } },
      );
      assert.deepEqual(
        answers.map((answer) => answer.error?.code),
        [
          'EACCES',
          'EACCES',
          'EACCES',
          'EINVAL',
          'EACCES',
          'EACCES',
          'EACCES',
          'EACCES',
          'EBADF',
          'EBADF',
          'EINVAL',
          'EINVAL',
        ],
      );
      assert.deepEqual(fs.readdirSync(outside), ['secret.txt']);
      for (const made of ['.git', 'deep', 'env', 'read.txt']) assert.equal(fs.existsSync(path.join(out, made)), false);
      assert.equal(fs.readFileSync(path.join(out, 'habits', 'old.txt'), 'utf8'), 'new');
      // The session goes on, its own writes unharmed.
      const after = await run(`open(${py(path.join(out, 'after.txt'))}, "w").write("fine")`);
      assert.equal(after.success, true, JSON.stringify(after.diagnostics));
      assert.equal(fs.readFileSync(path.join(out, 'after.txt'), 'utf8'), 'fine');
    },
  );

  test('a session holds a bounded number of files open for writing, and one closed frees its place', async () => {
    const result = await run(
      [
        `d = ${py(path.join(out, 'many'))}`,
        'import os',
        'os.makedirs(d, exist_ok=True)',
        'files = []',
        'try:',
        '    for i in range(300): files.append(open(f"{d}/{i}.txt", "w"))',
        'except OSError as error:',
        '    print(len(files), error.strerror)',
        'files.pop().close()',
        'files.append(open(f"{d}/again.txt", "w"))',
        'for f in files: f.close()',
        'print("closed")',
      ].join('\n'),
    );
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    // Deno's own limit is the process's, far above 300.
    if (sandboxUnderTest !== 'deno' && process.platform === 'linux')
      assert.match(result.stdout, /^256 (Too many open files|No file descriptors available)\nclosed\n$/);
    else assert.match(result.stdout, /closed\n$/);
  });
});
