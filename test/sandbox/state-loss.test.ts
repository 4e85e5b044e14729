// No silent state loss (the security issue behind these cases):
// - every Pyodide instance replaced or host restarted is announced, including when code scribbles over the output
//   ring the worker shares with its host, and a corrupt ring is a lost instance, never a hang;
// - user code that replaces what the harness uses (json, traceback, linecache, os, sys.path, builtins, io, base64)
//   or raises from __str__ cannot break the session's later runs, which keep its state.
// No state shared between sessions, each with a scratch folder of its own: scratch-folders.test.ts.
// On Linux every case runs (the sandbox is bubblewrap there); nothing is skipped.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { explain } from '../support/explainRun';
import { sandboxUnderTest } from '../support/sandboxUnderTest';
import { testStorageDir } from '../support/mcp';
import type { Run } from '../support/pyodideProbe';

/** The smallest thing displays.py takes for a PNG: its signature. */
const PNG_BYTES = 'b"\\x89PNG\\r\\n\\x1a\\n" + bytes(16)';

/** Only a guard against something that never happens: a slow machine waits longer, it never fails sooner. */
const GUARD_MS = 120_000;

async function pause(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Puts the worker's output ring in a JS global of Python's realm, so a cell can change it synchronously. */
async function reachRing(run: Run): Promise<void> {
  await run(
    `import js\njs.eval("import('node:worker_threads').then((wt) => { globalThis.ringBuffer = wt.workerData.outputRing; })")`,
  );
  for (const deadline = Date.now() + GUARD_MS; Date.now() < deadline; await pause(25)) {
    if ((await run('import js\nprint(hasattr(js.globalThis, "ringBuffer"))')).stdout === 'True\n') return;
  }
  assert.fail("the output ring never reached Python's realm");
}

describe('Pyodide: no silent state loss', () => {
  let engine: Engine;

  before(() => {
    engine = createEngine({ storageDir: testStorageDir, pyodide: { sandbox: sandboxUnderTest } });
  });
  after(async () => {
    await engine?.dispose();
  });

  describe('a desynchronised output ring loses the instance, announced, never a hang', () => {
    // Each is done by the cell itself, so the result of that very cell must say what happened.
    const scribbles: Record<string, { js: string; thenPrint: boolean }> = {
      'the whole ring overwritten with 0xff, then a print': {
        js: 'new Uint8Array(globalThis.ringBuffer).fill(255)',
        thenPrint: true,
      },
      'the whole ring overwritten with 0xff, nothing printed after': {
        js: 'new Uint8Array(globalThis.ringBuffer).fill(255)',
        thenPrint: false,
      },
      'a bogus write counter over garbage records': {
        js: 'const b = globalThis.ringBuffer; new Uint8Array(b, 8).fill(3); const c = new Int32Array(b, 0, 2); Atomics.store(c, 0, Atomics.load(c, 1) + 1000)',
        thenPrint: false,
      },
      'a record claiming 4 GiB': {
        js: 'const b = globalThis.ringBuffer; const c = new Int32Array(b, 0, 2); const r = Atomics.load(c, 1); const d = new Uint8Array(b, 8); const m = d.length - 1; d[r & m] = 0; for (let i = 1; i < 5; i++) d[(r + i) & m] = 0xff; Atomics.store(c, 0, r + 100)',
        thenPrint: false,
      },
      'a read counter that makes the ring look full, then a print that waits for room': {
        js: 'const b = globalThis.ringBuffer; const c = new Int32Array(b, 0, 2); Atomics.store(c, 1, Atomics.load(c, 0) - (b.byteLength - 8))',
        thenPrint: true,
      },
    };
    for (const [name, { js, thenPrint }] of Object.entries(scribbles)) {
      test(name, async () => {
        const session = `ring-${Object.keys(scribbles).indexOf(name)}`;
        const run: Run = (code) => engine.run({ code, backend: 'pyodide', session });
        try {
          assert.equal((await run('kept = "state"')).success, true);
          await reachRing(run);
          const scribbled = await run(
            `import js\njs.eval(${JSON.stringify(js)})\n${thenPrint ? 'print("after the scribble")' : ''}`,
          );
          assert.equal(scribbled.session_reset, true, explain(scribbled));
          assert.equal(scribbled.diagnostics?.error_type, 'BACKEND_CRASHED', explain(scribbled));
          assert.match(scribbled.reset_reason ?? '', /output ring .* corrupted/, explain(scribbled));
          // Told once; the fresh instance works, and it has none of the old state, as the result said.
          const next = await run('print("fresh")');
          assert.equal(next.stdout, 'fresh\n', explain(next));
          assert.equal(next.session_reset, undefined, explain(next));
          assert.equal((await run('print(kept)')).diagnostics?.exception, 'NameError');
        } finally {
          await engine.resetSession(session, 'pyodide');
        }
      });
    }

    test('overwritten between runs (by a callback the last cell left behind): the next run says so', async () => {
      const session = 'ring-between-runs';
      const run: Run = (code) => engine.run({ code, backend: 'pyodide', session });
      try {
        const setUp = await run(
          `kept = "state"\nimport js\njs.eval("import('node:worker_threads').then((wt) => { new Uint8Array(wt.workerData.outputRing).fill(255); globalThis.scribbled = true; })")`,
        );
        // The scribble may land before this cell's output is collected: then this very result says so.
        assert.ok(setUp.success || setUp.session_reset, explain(setUp));
        // Until a run is told. A run that sees the scribble done and is not told went on silently: the failure.
        const deadline = Date.now() + GUARD_MS;
        for (let attempt = 0; ; attempt++) {
          assert.ok(Date.now() < deadline, 'the scribble never happened');
          const probe =
            attempt === 0 && setUp.session_reset
              ? setUp
              : await run('import js\nprint(getattr(js.globalThis, "scribbled", False), kept)');
          if (probe.session_reset) {
            assert.match(probe.reset_reason ?? '', /output ring .* corrupted/, explain(probe));
            break;
          }
          assert.equal(
            probe.stdout,
            'False state\n',
            `the ring was scribbled over and the session went on without saying so: ${explain(probe)}`,
          );
          await pause(25);
        }
        assert.equal((await run('print("fresh")')).stdout, 'fresh\n');
      } finally {
        await engine.resetSession(session, 'pyodide');
      }
    });
  });

  describe('an instance lost between runs is announced by the next run, whatever the ring holds', () => {
    // Each is done by a callback the cell leaves behind, after its result. The server replaces the host process
    // of a lost instance, and announces it from its own knowledge of that process, not from what the ring says.
    const losses: Record<string, string> = {
      'the write counter moved over half a record':
        'const c = new Int32Array(wt.workerData.outputRing, 0, 2); Atomics.add(c, 0, 8)',
      'the read counter moved back': 'const c = new Int32Array(wt.workerData.outputRing, 0, 2); Atomics.sub(c, 1, 5)',
      'both counters moved on together':
        'const c = new Int32Array(wt.workerData.outputRing, 0, 2); Atomics.add(c, 0, 64); Atomics.add(c, 1, 64)',
      'both counters back to zero':
        'const c = new Int32Array(wt.workerData.outputRing, 0, 2); Atomics.store(c, 0, 0); Atomics.store(c, 1, 0)',
      'the ring made to look full, then a print that waits for room':
        "const b = wt.workerData.outputRing; const c = new Int32Array(b, 0, 2); Atomics.store(c, 1, Atomics.load(c, 0) - (b.byteLength - 8)); setTimeout(() => console.log('waits'), 0)",
      'a connection tried from JavaScript, its failure unhandled':
        "import('node:net').then((net) => net.connect(9, '127.0.0.1'))",
    };
    for (const [name, js] of Object.entries(losses)) {
      test(name, async () => {
        const session = `lost-${Object.keys(losses).indexOf(name)}`;
        const run: Run = (code) => engine.run({ code, backend: 'pyodide', session });
        try {
          assert.equal((await run('kept = "state"')).success, true);
          const setUp = await run(
            // Printed first, so that the counters stand somewhere other than zero.
            `print("before")\nimport js\njs.eval(${JSON.stringify(`import('node:worker_threads').then((wt) => { ${js}; globalThis.moved = true; })`)})`,
          );
          assert.ok(setUp.success || setUp.session_reset, explain(setUp));
          const deadline = Date.now() + GUARD_MS;
          let last = explain(setUp);
          for (let attempt = 0; ; attempt++) {
            // What the last run said tells a loss that never came (False: the callback never ran) from one missed.
            assert.ok(Date.now() < deadline, `the loss never happened; the last run said: ${last}`);
            const probe =
              attempt === 0 && setUp.session_reset
                ? setUp
                : await run('import js\nprint(getattr(js.globalThis, "moved", False), kept)');
            last = explain(probe);
            if (probe.session_reset) break;
            // A run that finds the state gone and is not told is the silent loss.
            assert.match(probe.stdout, /^(False|True) state\n$/, `state lost without a word: ${explain(probe)}`);
            await pause(25);
          }
          const next = await run('print("fresh")');
          assert.equal(next.stdout, 'fresh\n', explain(next));
          assert.equal(next.session_reset, undefined, explain(next));
          assert.equal((await run('print(kept)')).diagnostics?.exception, 'NameError');
        } finally {
          await engine.resetSession(session, 'pyodide');
        }
      });
    }

    test("the worker's realm holds no module loader, under either mechanism", async () => {
      const session = 'no-loader';
      const probe = await engine.run({
        code: 'import js\nprint(js.eval("typeof require"), js.eval("typeof globalThis.require"), js.eval("typeof process.mainModule"))',
        backend: 'pyodide',
        session,
      });
      assert.equal(probe.stdout, 'undefined undefined undefined\n', explain(probe));
      await engine.resetSession(session, 'pyodide');
    });
  });

  describe('user code that replaces what the harness uses breaks none of the later runs', () => {
    const patches: Record<string, string> = {
      'json.dumps replaced': 'import json\njson.dumps = lambda *a, **k: 1/0',
      'json.loads replaced, and the json module taken away':
        'import json, sys\njson.loads = lambda *a, **k: 1/0\nsys.modules["json"] = None',
      'traceback replaced':
        'import traceback\ntraceback.format_exception = traceback.format_exception_only = lambda *a, **k: 1/0\ntraceback.TracebackException = None',
      'linecache.cache replaced': 'import linecache\nlinecache.cache = None',
      'os.getcwd, os.chdir, os.fstat, os.open and os.path.join replaced':
        'import os\nos.getcwd = os.chdir = os.fstat = os.open = lambda *a, **k: 1/0\nos.path.join = None',
      'sys.path and sys.argv replaced': 'import sys\nsys.path = None\nsys.argv = None',
      'builtins.str, isinstance, type and len replaced':
        'import builtins\nbuiltins.str = builtins.isinstance = builtins.type = builtins.len = lambda *a, **k: 1/0',
      'io, base64 and binascii replaced':
        'import io, base64, binascii\nio.BytesIO = io.open = base64.b64encode = binascii.b2a_base64 = None',
      'a sys.stdout whose flush raises SystemExit':
        'import sys\nclass Stream:\n    def write(self, text): return len(text)\n    def flush(self): raise SystemExit(3)\nsys.stdout = Stream()',
    };
    for (const [name, patch] of Object.entries(patches)) {
      test(name, async () => {
        const session = `patched-${Object.keys(patches).indexOf(name)}`;
        const run: Run = (code) => engine.run({ code, backend: 'pyodide', session });
        try {
          assert.equal((await run('kept = 41')).success, true);
          await run(patch);
          const counted = await run('kept += 1\nprint(kept)');
          assert.equal(counted.success, true, explain(counted));
          assert.equal(counted.stdout, '42\n');
          assert.equal(counted.session_reset, undefined, explain(counted));
          const failed = await run('raise ValueError("boom")');
          assert.equal(failed.diagnostics?.exception, 'ValueError', explain(failed));
          assert.equal(failed.diagnostics?.message, 'ValueError: boom');
          assert.match(failed.diagnostics?.traceback ?? '', /ValueError: boom/);
          assert.equal(failed.session_reset, undefined, explain(failed));
          const shown = await run(`display(${PNG_BYTES}, title="shown")\nprint(kept)`);
          assert.equal(shown.success, true, explain(shown));
          assert.equal(shown.stdout, '42\n');
          assert.deepEqual(
            shown.displays?.map((d) => [d.mime, d.title]),
            [['image/png', 'shown']],
          );
        } finally {
          await engine.resetSession(session, 'pyodide');
        }
      });
    }

    test('an exception whose __str__ and __repr__ raise is reported as itself, and the session goes on', async () => {
      const session = 'unprintable';
      const run: Run = (code) => engine.run({ code, backend: 'pyodide', session });
      try {
        await run('kept = 1');
        const failed = await run(
          'class Unprintable(Exception):\n    def __str__(self): raise RuntimeError("no str")\n    def __repr__(self): raise RuntimeError("no repr")\nraise Unprintable()',
        );
        assert.equal(failed.diagnostics?.exception, 'Unprintable', explain(failed));
        assert.equal(failed.diagnostics?.message, 'Unprintable: <exception str() failed>');
        assert.match(failed.diagnostics?.traceback ?? '', /raise Unprintable\(\)/);
        const exited = await run(
          'class Code:\n    __hash__ = None\n    def __eq__(self, other): raise RuntimeError("no eq")\n    def __str__(self): raise RuntimeError("no str")\nraise SystemExit(Code())',
        );
        assert.equal(exited.diagnostics?.exception, 'SystemExit', explain(exited));
        const next = await run('print(kept)');
        assert.equal(next.stdout, '1\n', explain(next));
        assert.equal(next.session_reset, undefined);
      } finally {
        await engine.resetSession(session, 'pyodide');
      }
    });
  });
});
