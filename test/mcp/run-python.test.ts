// run_python through the SDK's real Client over stdio against the built CLI, for both backends.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { BackendKind } from '../../src/engine/types';
import { connectStdio, repoRoot, runPython, type StdioConnection } from '../support/mcp';
import { notInText } from '../../src/mcp/tools/run';

for (const backend of ['pyodide', 'python'] as BackendKind[]) {
  describe(`run_python over stdio — ${backend}`, () => {
    let conn: StdioConnection;
    const run = (args: Record<string, unknown>, options?: Parameters<typeof runPython>[2]) =>
      runPython(conn.client, { backend, ...args }, options);

    before(async () => {
      conn = await connectStdio(['--backend', backend]);
    });
    after(async () => {
      await conn?.close();
    });

    test('lists run_python with its arguments, and every result carries the fields docs/tools.md promises', async () => {
      const { tools } = await conn.client.listTools();
      const tool = tools.find((t) => t.name === 'run_python');
      assert.ok(tool, 'run_python is listed');
      assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}), [
        'code',
        'file',
        'backend',
        'timeout_s',
        'session',
        'reset',
        'handle',
      ]);
      for (const code of ['print(1)', 'raise ValueError("x")']) {
        const { raw } = await run({ code });
        const fields = Object.keys(raw.structuredContent ?? {});
        for (const field of [
          'success',
          'stdout',
          'stderr',
          'duration_ms',
          'diagnostics',
          'backend',
          'session',
          'run_id',
        ])
          assert.ok(fields.includes(field), `${code}: ${field} in ${fields.join(', ')}`);
      }
    });

    test('success returns the structured result and a text rendering', async () => {
      const { result, raw } = await run({ code: 'print(1 + 1)' });
      assert.equal(result.success, true);
      assert.equal(result.stdout, '2\n');
      assert.equal(result.stderr, '');
      assert.equal(result.diagnostics, null);
      assert.equal(result.backend, backend);
      assert.ok(Number.isInteger(result.duration_ms), `whole milliseconds: ${result.duration_ms}`);
      assert.equal(raw.isError, false);
      assert.match((raw.content[0] as { text: string }).text, /^2\n\[ok in \d+ ms/);
      assert.deepEqual(
        JSON.parse((raw.content[1] as { text: string }).text),
        notInText(result),
        'the JSON of what the text does not say follows',
      );
    });

    test('the content a model reads carries each piece of output once', async () => {
      const { result, raw } = await run({
        code: 'print("MARKER-7f3a " * 3)\nimport sys\nprint("ERR-9c1d", file=sys.stderr)',
      });
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      const text = raw.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
      assert.equal(text.split('MARKER-7f3a').length - 1, 3, text);
      assert.equal(text.split('ERR-9c1d').length - 1, 1, text);
      // The structured content still has all of it.
      assert.equal(result.stdout, 'MARKER-7f3a MARKER-7f3a MARKER-7f3a \n');
      assert.equal(result.stderr, 'ERR-9c1d\n');
      // An error's message once, at the end of its traceback.
      const failed = await run({ code: 'def f():\n    raise ValueError("UNIQUE-" + "4e2b")\nf()' });
      const failedText = failed.raw.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
      assert.equal(failedText.split('UNIQUE-4e2b').length - 1, 1, failedText);
      assert.match(failedText, /\[RuntimeError\]\nTraceback[^]*ValueError: UNIQUE-4e2b/);
    });

    test('a syntax error is reported as SyntaxError', async () => {
      const { result, raw } = await run({ code: 'def broken(:\n  pass' });
      assert.equal(result.success, false);
      assert.equal(result.diagnostics?.error_type, 'SyntaxError');
      assert.match(result.diagnostics?.traceback ?? '', /SyntaxError/);
      assert.equal(raw.isError, true);
    });

    test('a runtime exception carries its name and traceback', async () => {
      const { result } = await run({ code: 'def f(x):\n    return 1 / x\n\nprint("before")\nf(0)' });
      assert.equal(result.success, false);
      assert.equal(result.stdout, 'before\n');
      assert.equal(result.diagnostics?.error_type, 'RuntimeError');
      assert.match(result.diagnostics?.message ?? '', /^ZeroDivisionError: division by zero/);
      assert.match(result.diagnostics?.traceback ?? '', /line 2, in f\n\s+return 1 \/ x/);
    });

    test('stdout and stderr are kept apart', async () => {
      const { result } = await run({ code: 'import sys\nprint("out")\nprint("err", file=sys.stderr)\nprint("out2")' });
      assert.equal(result.stdout, 'out\nout2\n');
      assert.equal(result.stderr, 'err\n');
    });

    test('state persists across calls in a session', async () => {
      await run({ code: 'counter = 41' });
      const { result } = await run({ code: 'counter += 1\nprint(counter)' });
      assert.equal(result.stdout, '42\n');
    });

    test('named sessions are isolated, and reset clears one', async () => {
      await run({ code: 'secret = "a"', session: 'iso-a' });
      await run({ code: 'secret = "b"', session: 'iso-b' });
      assert.equal((await run({ code: 'print(secret)', session: 'iso-a' })).result.stdout, 'a\n');
      assert.equal((await run({ code: 'print(secret)', session: 'iso-b' })).result.stdout, 'b\n');
      const { result } = await run({ code: 'print("secret" in globals())', session: 'iso-a', reset: true });
      assert.equal(result.stdout, 'False\n');
    });

    test('an endless loop times out and the next call works with state kept', async () => {
      await run({ code: 'kept = "yes"', session: 'loop' });
      const { result } = await run({ code: 'while True: pass', timeout_s: 2, session: 'loop' });
      assert.equal(result.success, false);
      assert.equal(result.diagnostics?.error_type, 'TIMEOUT');
      assert.equal(result.diagnostics?.timeout_s, 2);
      // The MCP front end names the limit as its callers set it.
      assert.match(result.diagnostics?.message ?? '', /time limit of 2 s \(the timeout_s of this call\)/);
      assert.equal(result.diagnostics?.session_reset, false);
      const next = await run({ code: 'print(kept)', session: 'loop' });
      assert.equal(next.result.stdout, 'yes\n');
    });

    test('time.sleep(60) is stopped by the time limit and the next call works', async () => {
      const { result } = await run({
        code: 'import time\nprint("sleeping", flush=True)\ntime.sleep(60)',
        timeout_s: 1,
        session: 'sleepy',
      });
      assert.equal(result.diagnostics?.error_type, 'TIMEOUT');
      assert.equal(result.stdout, 'sleeping\n');
      assert.ok(result.duration_ms < 20_000, `stopped long before 60 s (took ${result.duration_ms} ms)`);
      const next = await run({ code: 'print("awake")', session: 'sleepy' });
      assert.equal(next.result.stdout, 'awake\n');
    });

    test('a 10 MB print comes back capped and the server keeps serving', async () => {
      const { result } = await run({ code: 'print("x" * (10 * 1024 * 1024))\nprint("end")', session: 'flood' });
      assert.equal(result.success, true);
      assert.equal(result.truncated, true);
      assert.ok(result.stdout.length < 80 * 1024, `capped (${result.stdout.length} chars)`);
      assert.match(result.stdout, /^x+\n… \[\d+ bytes of output truncated\] …\nx+\nend\n$/);
      const next = await run({ code: 'print("alive")', session: 'flood' });
      assert.equal(next.result.stdout, 'alive\n');
    });

    test('8 concurrent calls on different sessions each see only their own output', async () => {
      const calls = Array.from({ length: 8 }, (_, i) =>
        run({
          code: `import time\nfor k in range(5):\n    print("s${i}-", k, sep="")\n    time.sleep(0.01)\nmine = ${i}`,
          session: `par-${i}`,
        }),
      );
      const results = await Promise.all(calls);
      results.forEach(({ result }, i) => {
        assert.equal(result.success, true, JSON.stringify(result.diagnostics));
        assert.equal(result.stdout, [0, 1, 2, 3, 4].map((k) => `s${i}-${k}\n`).join(''));
      });
    });

    test('8 concurrent calls on one session are queued, never interleaved', async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          run({ code: `for k in range(3):\n    print("q${i}", k)`, session: 'queue' }),
        ),
      );
      results.forEach(({ result }, i) => assert.equal(result.stdout, `q${i} 0\nq${i} 1\nq${i} 2\n`));
    });

    test('missing or invalid arguments give a clean error and the server keeps serving', async () => {
      const missing = await conn.client.callTool({ name: 'run_python', arguments: {} });
      assert.equal(missing.isError, true);
      assert.match(JSON.stringify(missing.content), /code/);
      const badBackend = await conn.client.callTool({ name: 'run_python', arguments: { code: '1', backend: 'ruby' } });
      assert.equal(badBackend.isError, true);
      const badTimeout = await conn.client.callTool({ name: 'run_python', arguments: { code: '1', timeout_s: -3 } });
      assert.equal(badTimeout.isError, true);
      const badSession = await conn.client.callTool({
        name: 'run_python',
        arguments: { code: '1', session: '../etc' },
      });
      assert.equal(badSession.isError, true);
      const next = await run({ code: 'print("still here")' });
      assert.equal(next.result.stdout, 'still here\n');
    });

    test('output streams as progress notifications', async () => {
      const messages: string[] = [];
      const { result } = await run(
        // The trailing sleep keeps the last notification out of the response's pipe read: the SDK client
        // handles notifications a microtask late, so one read holding both drops the progress.
        {
          code: 'import sys, time\nfor i in range(3):\n    print("tick", i, flush=True)\n    time.sleep(0.05)\nprint("oops", file=sys.stderr, flush=True)\ntime.sleep(0.05)',
        },
        { onprogress: (p) => messages.push(p.message ?? '') },
      );
      assert.equal(result.success, true);
      const streamed = messages.join('');
      assert.match(streamed, /tick 0\n[^]*tick 1\n[^]*tick 2\n/);
      assert.match(streamed, /\[stderr\] oops/);
    });

    test('a 32 KB burst of output comes as a few coalesced progress notifications, none of it lost', async (t) => {
      const messages: string[] = [];
      const { result } = await run(
        // 4096 lines of 8 bytes, each flushed on its own; the pause keeps the last notification out of the response's read.
        {
          code: 'import time\nfor i in range(4096):\n    print("burst..", flush=True)\ntime.sleep(0.3)',
          session: 'burst',
        },
        { onprogress: (p) => messages.push(p.message ?? '') },
      );
      assert.equal(result.stdout.length, 32 * 1024);
      t.diagnostic(`${backend}: ${messages.length} progress notifications for 32 KB of output`);
      assert.ok(messages.length >= 1 && messages.length <= 10, `${messages.length} notifications`);
      assert.equal(messages.join(''), result.stdout, 'the notifications carry the output whole');
    });

    test('cancellation interrupts the run and the session keeps serving', async () => {
      const controller = new AbortController();
      let firstOutput!: () => void;
      const started = new Promise<void>((resolve) => (firstOutput = resolve));
      const pending = run(
        { code: 'print("spinning", flush=True)\nwhile True: pass', session: 'cancel', timeout_s: 120 },
        { signal: controller.signal, onprogress: () => firstOutput() },
      );
      await started;
      controller.abort('user cancelled');
      await assert.rejects(pending);
      // If the cancel had not reached the interpreter, this call would queue behind a 120 s loop.
      const next = await run({ code: 'print("after cancel")', session: 'cancel' }, { timeout: 30_000 });
      assert.equal(next.result.stdout, 'after cancel\n');
    });
  });
}

describe('a workspace folder that holds the server itself', () => {
  test('is mounted in Pyodide with its files, the bundle included', async () => {
    const conn = await connectStdio(['--pyodide-only', '--workspace', repoRoot]);
    try {
      const { result } = await runPython(conn.client, {
        code: 'import os\nprint(os.getcwd())\nprint(sorted(n for n in os.listdir(".") if n in ("dist", "package.json")))',
      });
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.equal(result.stdout, `${repoRoot}\n['dist', 'package.json']\n`);
    } finally {
      await conn.close();
    }
  });
});
