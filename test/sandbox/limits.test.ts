// Limits on what a session sends the server, enforced by the server (docs/sandbox.md, "Resources"): code in a run can
// change every limit inside its interpreter (displays.py's are module globals), so the server checks frames from
// their headers, and displays and output before it keeps them, and bounds what it keeps across runs. The memory
// cases run a server in a child process with a 256 MB heap: a server that keeps what it should not dies there.
// On Linux every case runs; nothing is skipped.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { FrameDecoder, FrameError, MAX_FRAME_FROM_INTERPRETER_BYTES } from '../../src/engine/framing';
import { createEngine } from '../../src/engine/index';
import { repoRoot, testStorageDir } from '../support/mcp';
import { inNestedWorker, settleInWorker, writeToChannel, type Run } from '../support/pyodideProbe';
import { sandboxUnderTest } from '../support/sandboxUnderTest';

const MIB = 1024 * 1024;
const HEAP_MB = 256;

interface ChildDisplay {
  mime: string;
  bytes: number;
  head: string;
  tail: string;
}

interface ChildRun {
  success: boolean;
  stdout: string;
  diagnostics: unknown;
  displays: ChildDisplay[];
  /** After a full collection, with the run's result let go of. */
  heapUsed: number;
  history: {
    retainedBytes: number;
    runs: { displays: number; dropped?: { count: number; bytes?: number; reason: string } }[];
  };
}

/** Runs a scenario of test/support/limitsChild.ts in a server with a small heap; its exit code says whether it survived. */
function serve(
  scenario: string,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; runs: ChildRun[]; stderr: string }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      `--max-old-space-size=${HEAP_MB}`,
      '--expose-gc',
      path.join(repoRoot, 'test', 'support', 'limitsChild.ts'),
      scenario,
    ],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-20_000)));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      const runs = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as ChildRun);
      resolve({ code, signal, runs, stderr });
    });
  });
}

describe('limits the server enforces on what sessions send', () => {
  let engine: Engine;
  const attacker: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'limits-attacker' });
  const bystander: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'limits-bystander' });

  before(async () => {
    engine = createEngine({ storageDir: testStorageDir, pyodide: { sandbox: sandboxUnderTest } });
    const kept = await bystander('kept = "bystander state"');
    assert.equal(kept.success, true, JSON.stringify(kept.diagnostics));
  });

  after(async () => {
    await engine?.dispose();
  });

  test(
    "Pyodide code that raises displays.py's limits cannot make the server keep more: 30 MB displays and a flood past the per-run count",
    { timeout: 900_000 },
    async () => {
      const { code, signal, runs, stderr } = await serve('pyodide-displays');
      assert.equal(
        code,
        0,
        `the server (a ${HEAP_MB} MB heap) did not survive (${signal ?? code}): ${stderr.slice(-3000)}`,
      );
      const [big, flood, next] = runs;

      assert.equal(big.success, true, JSON.stringify(big.diagnostics));
      assert.equal(big.stdout, 'sent\n');
      assert.equal(big.displays.length, 6);
      for (const [i, display] of big.displays.entries()) {
        assert.ok(display.bytes <= 5 * MIB, `display ${i} keeps ${display.bytes} bytes`);
        if (i % 2 === 0) {
          // Text is cut, and says so.
          assert.equal(display.mime, 'text/plain');
          assert.match(display.head, /^x+$/);
          assert.match(display.tail, /\n\.\.\. \[\d+ bytes not shown: a display carries at most 5 MB\]$/);
        } else {
          // An image too large becomes a note.
          assert.equal(display.mime, 'text/plain');
          assert.match(display.tail, /^image\/png of \d+\.\d MB not shown: a display carries at most 5 MB$/);
        }
      }

      assert.equal(flood.success, true, JSON.stringify(flood.diagnostics));
      assert.equal(flood.displays.length, 21, 'at most 20 displays and the note');
      assert.ok(flood.displays.slice(0, 20).every((d) => d.bytes === 4_000_000));
      assert.equal(flood.displays[20].tail, '40 more display(s) not shown: at most 20 per run');

      assert.equal(next.success, true, JSON.stringify(next.diagnostics));
      assert.equal(next.stdout, 'still here\n');
      assert.ok(next.history.retainedBytes <= 64 * MIB, `the history holds ${next.history.retainedBytes} bytes`);
      assert.ok(
        next.heapUsed < 160 * MIB,
        `the server's heap holds ${Math.round(next.heapUsed / MIB)} MiB between runs`,
      );
    },
  );

  test(
    'the run history stays within its byte budget over runs of the largest displays the limits allow',
    { timeout: 900_000 },
    async () => {
      // 10 runs of 20 displays of 5 MiB: 1 GiB through a server with a 256 MB heap.
      const { code, signal, runs, stderr } = await serve('history');
      assert.equal(
        code,
        0,
        `the server (a ${HEAP_MB} MB heap) did not survive (${signal ?? code}): ${stderr.slice(-3000)}`,
      );
      assert.equal(runs.length, 10);
      for (const [i, run] of runs.entries()) {
        assert.equal(run.success, true, JSON.stringify(run.diagnostics));
        assert.equal(run.displays.length, 20, 'every display within the limits reaches the result');
        assert.ok(run.displays.every((d) => d.mime === 'image/png' && d.bytes === 5 * MIB));
        assert.ok(
          run.history.retainedBytes <= 64 * MIB,
          `run ${i}: the history holds ${run.history.retainedBytes} bytes`,
        );
      }
      const last = runs.at(-1)!;
      assert.equal(last.history.runs.length, 10, 'every run is still listed');
      const [oldest] = last.history.runs;
      assert.equal(oldest.displays, 0);
      assert.equal(oldest.dropped?.count, 20);
      assert.match(oldest.dropped?.reason ?? '', /keeps the displays of recent runs only \(64 MB in all\)/);
      // Flat: what the server holds between runs does not grow with the number of runs.
      const settled = runs.slice(1).map((run) => run.heapUsed);
      assert.ok(
        Math.max(...settled) - Math.min(...settled) < 16 * MIB,
        `heap between runs: ${settled.map((b) => Math.round(b / MIB)).join(', ')} MiB`,
      );
      assert.ok(
        last.heapUsed < 64 * MIB + 64 * MIB,
        `the server's heap holds ${Math.round(last.heapUsed / MIB)} MiB between runs`,
      );
    },
  );

  test('a frame whose header claims more than the limit is refused before its body is buffered', () => {
    const decoder = new FrameDecoder(MAX_FRAME_FROM_INTERPRETER_BYTES);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(MAX_FRAME_FROM_INTERPRETER_BYTES + 1);
    assert.throws(
      () => decoder.push(Buffer.concat([header, Buffer.alloc(64 * 1024, 0x20)])),
      (error: unknown) => {
        assert.ok(error instanceof FrameError);
        assert.match(
          error.message,
          new RegExp(
            `${MAX_FRAME_FROM_INTERPRETER_BYTES + 1} bytes exceeds the limit of ${MAX_FRAME_FROM_INTERPRETER_BYTES} bytes`,
          ),
        );
        return true;
      },
    );
    assert.equal(decoder.pendingBytes, 0, 'nothing of the body is held');
    assert.ok(MAX_FRAME_FROM_INTERPRETER_BYTES <= 8 * MIB, 'far below the 64 MiB a frame to an interpreter may take');
  });

  test(
    'a Pyodide host sending a frame over the limit is stopped at its header, and the reset is announced',
    { timeout: 300_000 },
    async () => {
      // 32 MiB: below the general frame limit, far above what a host may send.
      const claimed = 32 * MIB;
      const outcome = await settleInWorker(
        attacker,
        inNestedWorker(
          `const head = Buffer.alloc(4); head.writeUInt32BE(${claimed}); ${writeToChannel(`Buffer.concat([head, Buffer.alloc(${MIB}, 0x20)])`)}; await new Promise(() => undefined); return 'still alive'`,
        ),
      );
      // The reason comes from the run that saw the process stopped: the poll, or the one after it.
      assert.match(
        outcome,
        new RegExp(
          `^reset:.*malformed message from the Pyodide process: incoming frame of ${claimed} bytes exceeds the limit of ${MAX_FRAME_FROM_INTERPRETER_BYTES} bytes; the Pyodide process was stopped`,
        ),
      );
      const next = await attacker('print("fresh")');
      assert.equal(next.stdout, 'fresh\n');
      const other = await bystander('print(kept)');
      assert.equal(other.stdout, 'bystander state\n', 'another session lost its state');
    },
  );

  test(
    'a workspace-Python driver sending a frame over the limit is stopped, and its run says why',
    { timeout: 120_000 },
    async () => {
      const claimed = 32 * MIB;
      const forged = await engine.run({
        code: `import os, struct, time\nos.write(4, struct.pack(">I", ${claimed}) + b" " * 65536)\ntime.sleep(60)`,
        backend: 'python',
        session: 'limits-forger',
        timeoutS: 30,
      });
      assert.equal(forged.diagnostics?.error_type, 'BACKEND_CRASHED', JSON.stringify(forged.diagnostics));
      assert.match(
        forged.diagnostics?.message ?? '',
        new RegExp(
          `the driver broke the protocol \\(incoming frame of ${claimed} bytes exceeds the limit of ${MAX_FRAME_FROM_INTERPRETER_BYTES} bytes\\)`,
        ),
      );
      assert.equal(forged.diagnostics?.session_reset, true);
      const next = await engine.run({ code: 'print("fresh")', backend: 'python', session: 'limits-forger' });
      assert.equal(next.stdout, 'fresh\n');
    },
  );
});
