// The workspace-Python backend is not a sandbox: its code runs as the user, with the user's files, network and
// powers. What it promises (docs/sandbox.md, "The workspace-Python backend") must hold whatever that code does,
// so each promise is attacked here the way careless or hostile code would:
//   - the driver survives the session's own objects and patches: a structured error, the state kept;
//   - no process a session started outlives a reset, a dispose or the server, even after the code killed its
//     reaper and left a setsid, double-forked child;
//   - the memory limit counts all memory of the session's processes, shared mappings included.
// Linux runs every case (bubblewrap is installed by `npm test`; util-linux is always there); nothing is skipped.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Engine } from '../../src/engine/engine';
import { createPythonBackend, type PythonBackendConfig } from '../../src/engine/backends/python/backend';
import type { ContainmentChoice } from '../../src/engine/backends/python/containment';
import type { Logger, RunResult } from '../../src/engine/types';
import { connectStdio, runPython, type StdioConnection } from '../support/mcp';
import { waitUntil } from '../support/pythonSession';

const linux = process.platform === 'linux';
const TEST_TIMEOUT = 300_000;
const needsProc = { skip: !linux && 'finding processes by their argv needs /proc (Linux)' };
const quiet: Logger = { info() {}, warn() {}, error() {} };

function newEngine(config: PythonBackendConfig = {}): Engine {
  return new Engine({
    backends: [createPythonBackend({ log: quiet, ...config })],
    config: { defaultBackend: 'python' },
    log: quiet,
  });
}

/** Live processes (not zombies) whose argv[0] is `marker`, from /proc as this process sees it. */
function markedProcesses(marker: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0')[0] !== marker) continue;
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z') found.push(Number(name));
    } catch {
      // Ended since the listing.
    }
  }
  return found;
}

function assertStructuredError(result: RunResult, exception: string, message: string | RegExp): void {
  assert.equal(result.success, false);
  assert.equal(
    result.diagnostics?.error_type,
    'RuntimeError',
    `not a structured error: ${JSON.stringify(result.diagnostics)}`,
  );
  assert.equal(result.diagnostics?.exception, exception);
  if (typeof message === 'string') assert.equal(result.diagnostics?.message, message);
  else assert.match(result.diagnostics?.message ?? '', message);
  assert.equal(result.session_reset, undefined, 'the session lost its state');
}

describe(
  "workspace Python: the driver survives what the session's objects and code do",
  { timeout: TEST_TIMEOUT },
  () => {
    const engine = newEngine();
    const run = (code: string, timeoutS?: number) => engine.run({ code, session: 'objects', timeoutS });

    before(async () => {
      const kept = await run('kept = "state"\nimport builtins, sys\nsaved_builtins = dict(vars(builtins))');
      assert.equal(kept.success, true, JSON.stringify(kept.diagnostics));
    });
    after(() => engine.dispose());

    /** The session still has its state, and prints. */
    async function assertKept(): Promise<void> {
      const result = await run('print(kept)');
      assert.equal(result.stdout, 'state\n', `the session lost its state: ${JSON.stringify(result.diagnostics)}`);
      assert.equal(result.session_reset, undefined);
    }

    test('an exception whose __str__ raises', async () => {
      const result = await run(
        'class Unprintable(Exception):\n    def __str__(self):\n        raise RuntimeError("no str")\nraise Unprintable()',
      );
      assertStructuredError(result, 'Unprintable', 'Unprintable: <exception str() failed>');
      assert.match(result.diagnostics?.traceback ?? '', /line 4/);
      await assertKept();
    });

    test('sys.exit() with an object whose __str__ raises, and a SystemExit whose code is a property that raises', async () => {
      const result = await run(
        'import sys\nclass Unprintable:\n    def __str__(self):\n        raise RuntimeError("no str")\nsys.exit(Unprintable())',
      );
      assertStructuredError(result, 'SystemExit', 'SystemExit: <exception str() failed>');
      const property = await run('class Exit(SystemExit):\n    code = property(lambda self: 1 / 0)\nraise Exit(0)');
      assert.equal(property.success, true, 'the exit code is the one given, whatever a subclass says');
      await assertKept();
    });

    test('an exception whose argument has a __repr__ that raises; classes whose __name__, __traceback__, __notes__ raise', async () => {
      const repr = await run(
        'class Unrepresentable:\n    def __repr__(self):\n        raise RuntimeError("no repr")\nraise KeyError(Unrepresentable())',
      );
      assertStructuredError(repr, 'KeyError', 'KeyError: <exception str() failed>');
      const name = await run(
        'class Meta(type):\n    __name__ = property(lambda cls: 1 / 0)\nclass Named(Exception, metaclass=Meta):\n    pass\nraise Named("named")',
      );
      assertStructuredError(name, 'Named', 'Named: named');
      const traceback = await run(
        'class Traced(Exception):\n    __traceback__ = property(lambda self: 1 / 0)\n    __notes__ = property(lambda self: 1 / 0)\nraise Traced("traced")',
      );
      assertStructuredError(traceback, 'Traced', 'Traced: traced');
      await assertKept();
    });

    test('the standard library patched: json, traceback, linecache, os, io, select, signal, threading', async () => {
      const patch = [
        'import io, json, linecache, os, select, signal, threading, traceback',
        'json.dumps = json.loads = lambda *a, **k: 1 / 0',
        'json.encoder.encode_basestring_ascii = json.encoder.c_make_encoder = None',
        'traceback.format_exception = lambda *a, **k: 1 / 0',
        'traceback.TracebackException = None',
        'linecache.getline = linecache.getlines = None',
        'os.getpid = lambda: 1',
        'os.write = os.read = os.dup = os.dup2 = os.fstat = os.kill = os.listdir = os.open = os.close = None',
        'io.open = None',
        'select.select = select.poll = None',
        'signal.signal = signal.getsignal = None',
        'threading.get_ident = lambda: 0',
        'raise ValueError("patched")',
      ].join('\n');
      const result = await run(patch);
      assertStructuredError(result, 'ValueError', 'ValueError: patched');
      assert.match(
        result.diagnostics?.traceback ?? '',
        /Traceback \(most recent call last\):[\s\S]*line 13[\s\S]*ValueError: patched/,
      );
      await assertKept();
    });

    test(
      'a run stopped by its time limit after patching os still ends the processes it started',
      needsProc,
      async () => {
        const marker = `code-mode-child-${randomUUID()}`;
        // A session of its own: the one above keeps the os module its code patched.
        const stopped = await engine.run({
          session: 'stopped',
          timeoutS: 2,
          code: [
            'import os, shutil, subprocess, time',
            `subprocess.Popen([${JSON.stringify(marker)}, "1000"], executable=shutil.which("sleep"))`,
            'os.kill = os.killpg = os.listdir = os.open = os.read = os.pread = os.close = os.waitpid = None',
            'time.sleep(1000)',
          ].join('\n'),
        });
        assert.equal(stopped.diagnostics?.error_type, 'TIMEOUT', JSON.stringify(stopped.diagnostics));
        await waitUntil(
          () => markedProcesses(marker).length === 0,
          `the stopped run's child survived: ${markedProcesses(marker).join(', ')}`,
        );
        assert.equal((await engine.run({ session: 'stopped', code: 'print("serving")' })).stdout, 'serving\n');
      },
    );

    test('builtins replaced: str, repr, len, isinstance, issubclass, type, open, list, dict, iter, getattr', async () => {
      const names = [
        'str',
        'repr',
        'len',
        'isinstance',
        'issubclass',
        'type',
        'open',
        'list',
        'dict',
        'iter',
        'getattr',
        'hasattr',
        'max',
        'min',
        'range',
        'bytes',
        'memoryview',
      ];
      const result = await run(
        `import builtins\nfor name in ${JSON.stringify(names)}:\n    setattr(builtins, name, None)\nraise KeyError("k")`,
      );
      assertStructuredError(result, 'KeyError', "KeyError: 'k'");
      const restored = await run('builtins.__dict__.update(saved_builtins)\nprint(kept)');
      assert.equal(restored.stdout, 'state\n');
    });

    test('sys.stdout and sys.stderr replaced by objects whose write and flush raise', async () => {
      const result = await run(
        'import sys\nclass Broken:\n    def write(self, text):\n        raise RuntimeError("cannot write")\n    def flush(self):\n        raise SystemExit(1)\nsys.stdout = sys.stderr = Broken()\nprint("lost")',
      );
      assertStructuredError(result, 'RuntimeError', 'RuntimeError: cannot write');
      await assertKept();
    });

    test('__del__ that raises SystemExit or KeyboardInterrupt, with sys.unraisablehook broken, run while the driver works', async () => {
      const planted = await run(
        'import gc, sys\ngc.disable()\nclass Finalizer:\n    def __del__(self):\n        raise SystemExit(3)\nclass Interrupter:\n    def __del__(self):\n        raise KeyboardInterrupt\nfor kind in (Finalizer, Interrupter):\n    cycle = kind()\n    cycle.me = cycle\ndel cycle\nsys.unraisablehook = lambda *a: 1 / 0\ngc.enable()',
      );
      assert.equal(planted.success, true, JSON.stringify(planted.diagnostics));
      const collected = await run('import gc\ngc.collect()\nprint(kept)');
      assert.equal(collected.stdout, 'state\n');
      await assertKept();
    });
  },
);

/** Code that kills its reaper (its parent), then leaves a setsid, double-forked `sleep` whose argv[0] is `marker`. */
function escapee(marker: string): string {
  return [
    'import os, shutil, signal',
    'if os.fork() == 0:',
    '    os.setsid()',
    '    if os.fork() == 0:',
    `        os.execv(shutil.which("sleep"), [${JSON.stringify(marker)}, "1000"])`,
    '    os._exit(0)',
    'os.wait()',
    'parent = os.getppid()',
    'os.kill(parent, signal.SIGKILL)',
    'print("sent SIGKILL to my parent", parent)',
  ].join('\n');
}

describe('workspace Python: no process a session started outlives it', { timeout: TEST_TIMEOUT }, () => {
  const markers: string[] = [];
  const newMarker = () => {
    const marker = `code-mode-escapee-${randomUUID()}`;
    markers.push(marker);
    return marker;
  };
  after(() => {
    // Whatever a failed case left behind.
    for (const pid of markers.flatMap(markedProcesses)) process.kill(pid, 'SIGKILL');
  });

  test("the environment report says what holds them: on Linux a PID namespace of the session's own", async () => {
    const engine = newEngine();
    try {
      const bounds = (await engine.describeBackend('python')) as {
        processes: { mechanism: string; complete: boolean; gaps: string[] };
      };
      if (linux) {
        assert.equal(
          bounds.processes.mechanism,
          'pid-namespace',
          `no PID namespace on Linux: ${bounds.processes.gaps.join('; ')}`,
        );
        assert.equal(bounds.processes.complete, true);
      } else {
        assert.equal(bounds.processes.complete, false);
        assert.ok(bounds.processes.gaps.length > 0);
      }
    } finally {
      await engine.dispose();
    }
  });

  const mechanisms: ContainmentChoice[] = linux ? ['auto', 'bubblewrap', 'unshare'] : ['auto'];
  for (const containment of mechanisms) {
    for (const end of ['reset', 'dispose'] as const) {
      test(
        `${containment}: the code kills its reaper and leaves a setsid child; after ${end === 'reset' ? 'engine.resetSession' : 'engine.dispose'} nothing survives`,
        needsProc,
        async () => {
          const engine = newEngine({ containment });
          const marker = newMarker();
          try {
            const kept = await engine.run({ code: 'kept = "state"', session: 'escape' });
            assert.equal(kept.success, true, JSON.stringify(kept.diagnostics));
            const attack = await engine.run({ code: escapee(marker), session: 'escape' });
            await waitUntil(() => markedProcesses(marker).length === 1, 'the setsid child started');
            const after = await engine.run({ code: 'print(kept)', session: 'escape' });
            if (end === 'reset') await engine.resetSession('escape', 'python');
            else await engine.dispose();
            await waitUntil(
              () => markedProcesses(marker).length === 0,
              `processes of the session survived its ${end}: ${markedProcesses(marker).join(', ')}`,
            );
            if (linux) {
              // The reaper is the namespace's init: the kernel dropped the signal, and the session lived on.
              assert.equal(attack.success, true, JSON.stringify(attack.diagnostics));
              assert.match(attack.stdout, /sent SIGKILL to my parent 1\n/);
              assert.equal(after.stdout, 'state\n', JSON.stringify(after.diagnostics));
            }
            if (end === 'reset') {
              const fresh = await engine.run({ code: 'print("fresh")', session: 'escape' });
              assert.equal(fresh.stdout, 'fresh\n');
              assert.equal(fresh.session_reset, true, 'the reset is announced');
            }
          } finally {
            await engine.dispose();
          }
        },
      );
    }
  }

  test(
    "the server's exit: the CLI killed with SIGKILL takes every process of its sessions with it",
    needsProc,
    async () => {
      const conn = await connectStdio(['--backend', 'python']);
      const marker = newMarker();
      try {
        const { result } = await runPython(conn.client, { code: escapee(marker), backend: 'python' });
        await waitUntil(() => markedProcesses(marker).length === 1, 'the setsid child started');
        const server = conn.transport.pid;
        assert.ok(server, 'the server runs');
        process.kill(server, 'SIGKILL');
        await waitUntil(
          () => markedProcesses(marker).length === 0,
          `processes of the server's sessions survived it: ${markedProcesses(marker).join(', ')}`,
        );
        if (linux) assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      } finally {
        await conn.close().catch(() => undefined);
      }
    },
  );
});

describe(
  "workspace Python: --python-memory-mb counts all memory of the session's processes",
  { timeout: TEST_TIMEOUT },
  () => {
    let storage: string;
    let conn: StdioConnection;
    const run = async (code: string) =>
      (await runPython(conn.client, { code, backend: 'python', timeout_s: 100 })).result;
    /** A shared anonymous mapping of 1 GiB, touched page by page, then held: RLIMIT_DATA alone does not count it. */
    const sharedGiB =
      'import mmap, time\nshared = mmap.mmap(-1, 1 << 30)\nfor page in range(0, 1 << 30, mmap.PAGESIZE):\n    shared[page] = 1\nprint("touched", flush=True)\nwhile True:\n    time.sleep(0.05)';

    before(async () => {
      storage = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-python-memory-'));
      conn = await connectStdio(['--storage', storage, '--backend', 'python', '--python-memory-mb', '256']);
    });
    after(async () => {
      await conn?.close();
      fs.rmSync(storage, { recursive: true, force: true });
    });

    test('the environment tool says what is enforced', async () => {
      await run('pass');
      const env = (await conn.client.callTool({ name: 'environment', arguments: {} })) as CallToolResult;
      const memory = (
        env.structuredContent as { backends: { python: { bounds: { memory: Record<string, unknown> } } } }
      ).backends.python.bounds.memory;
      assert.equal(memory.limit_mb, 256);
      if (linux) {
        assert.match(String(memory.per_process), /RLIMIT_DATA/);
        assert.match(String(memory.session_total), /all the session's processes together/);
        assert.match(String(memory.applied), /memory limited to 256 MB/);
      }
    });

    test(
      '1 GiB of shared memory in the interpreter is stopped with a clear error; the server serves on and the next run works',
      { skip: !linux && 'memory limits are enforced on Linux only' },
      async () => {
        assert.equal((await run('kept = "state"')).success, true);
        const result = await run(sharedGiB);
        assert.equal(result.success, false, `1 GiB of shared memory under a 256 MB limit: ${result.stdout}`);
        const diagnostics = result.diagnostics;
        if (diagnostics?.error_type === 'RuntimeError') {
          // Refused where it was allocated: the session keeps its state.
          assert.match(diagnostics.message, /memory limit is 256 MB/);
          assert.equal((await run('print(kept)')).stdout, 'state\n');
        } else {
          // Ended by the session's memory check: the interpreter is gone, and the run says why and that the state went.
          assert.equal(diagnostics?.error_type, 'BACKEND_CRASHED', JSON.stringify(diagnostics));
          assert.match(diagnostics?.message ?? '', /over its memory limit of 256 MB/);
          assert.match(diagnostics?.message ?? '', /session state was reset/);
          const next = await run('print("next")\nprint(kept)');
          assert.equal(next.stdout, 'next\n');
          assert.equal(next.diagnostics?.exception, 'NameError', 'the state loss was announced, and is real');
        }
        assert.equal((await run('print("serving")')).stdout, 'serving\n');
      },
    );

    test(
      '1 GiB of shared memory in a child process ends that child; the session keeps its state',
      { skip: !linux && 'memory limits are enforced on Linux only' },
      async () => {
        assert.equal((await run('kept = "state"')).success, true);
        const result = await run(
          `import subprocess, sys\nchild = subprocess.run([sys.executable, "-c", ${JSON.stringify(sharedGiB)}])\nprint("child", child.returncode)`,
        );
        assert.equal(result.success, true, JSON.stringify(result.diagnostics));
        assert.equal(result.stdout, `child -9\n`);
        assert.match(result.stderr, /over its memory limit of 256 MB: ended pid \d+/);
        assert.equal((await run('print(kept)')).stdout, 'state\n');
      },
    );
  },
);
