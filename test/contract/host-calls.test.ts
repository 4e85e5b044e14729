// Calls from Python into the host on every backend, below the engine: `_code_mode_host.call` hands back the host's
// answer as Python data and raises HostCallError when the host refuses; the shipped code_mode module rides on it;
// an interrupt abandons a call the host has not answered, and its late answer is never taken for another's; and
// only the cell's own thread, while the cell runs, may call.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { BackendSession } from '../../src/engine/backends/contract';
import type { HostCallHandler } from '../../src/engine/types';
import { RecordingSink, run } from '../support/backendRuns';
import { backendUnderTest, type BackendUnderTest } from '../support/backendSessions';
import { contractTargets } from '../support/contractTargets';

const NO_THREADS = 'Pyodide has no threads: threading.Thread.start raises before any call is made';

// The suite timeout is a guard against a hang (a hub start included), not a timing assertion.
for (const target of contractTargets()) {
  describe(`host calls on the ${target.label}`, { timeout: 600_000 }, () => {
    let backend: BackendUnderTest;
    let session: BackendSession;
    const calls: [string, unknown][] = [];
    /** The host answers `slow` only when the test says so; `slowArrived` resolves when Python made that call. */
    let slowArrived: () => void = () => undefined;
    let releaseSlow: (value: unknown) => void = () => undefined;
    const nextSlowCall = () => new Promise<void>((resolve) => (slowArrived = resolve));
    const hostCall: HostCallHandler = async (method, params) => {
      calls.push([method, params]);
      if (method === 'slow') {
        slowArrived();
        return new Promise((resolve) => (releaseSlow = resolve));
      }
      if (method.startsWith('missing')) throw new Error(`no such tool: ${method}`);
      return { method, params, list: [1, 2.5, null, true] };
    };

    before(async () => {
      backend = await backendUnderTest(target);
      session = backend.open('host', hostCall);
    });
    after(async () => backend.dispose());

    test('a host call returns the host answer as Python data; a refusal raises HostCallError', async () => {
      calls.length = 0;
      const { outcome, out } = await run(
        session,
        [
          'import _code_mode_host as host',
          'r = host.call("tools.search", {"query": "héllo", "limit": 3, "tags": ["a", None], "exact": True})',
          'print(type(r).__name__, r["params"], r["list"])',
          'try:',
          '    host.call("missing", None)',
          'except host.HostCallError as e:',
          '    print("caught", type(e).__module__, e)',
        ].join('\n'),
      );
      assert.deepEqual(outcome, { status: 'ok' });
      assert.equal(
        out,
        "dict {'query': 'héllo', 'limit': 3, 'tags': ['a', None], 'exact': True} [1, 2.5, None, True]\ncaught _code_mode_host no such tool: missing\n",
      );
      assert.deepEqual(calls, [
        ['tools.search', { query: 'héllo', limit: 3, tags: ['a', null], exact: true }],
        ['missing', null],
      ]);

      const uncaught = await run(session, "import _code_mode_host as host\nhost.call('missing-too', {})");
      assert.ok(uncaught.outcome.status === 'error', JSON.stringify(uncaught.outcome));
      assert.equal(uncaught.outcome.excName, 'HostCallError');
      assert.equal(uncaught.outcome.message, 'HostCallError: no such tool: missing-too');
    });

    test('params that are not JSON raise TypeError and never reach the host', async () => {
      calls.length = 0;
      const notJson = await run(session, "import _code_mode_host as host\nhost.call('x', {'when': object()})");
      assert.ok(notJson.outcome.status === 'error', JSON.stringify(notJson.outcome));
      assert.equal(notJson.outcome.excName, 'TypeError');
      assert.deepEqual(calls, []);
    });

    test('params may be left out: the host is asked with null', async () => {
      calls.length = 0;
      const uncaught = await run(session, "import _code_mode_host as host\nhost.call('missing-params')");
      assert.ok(uncaught.outcome.status === 'error', JSON.stringify(uncaught.outcome));
      assert.equal(uncaught.outcome.excName, 'HostCallError');
      assert.equal(uncaught.outcome.message, 'HostCallError: no such tool: missing-params');
      assert.deepEqual(calls, [['missing-params', null]]);
    });

    test('the shipped code_mode module is importable and calls the host; the backend support files are not importable', async () => {
      const { outcome, out } = await run(
        session,
        [
          'import importlib.util, code_mode',
          'from code_mode import tools',
          'print(code_mode.tools is not None, issubclass(code_mode.ToolError, Exception))',
          "print(tools.search('read file')['params'])",
          'print([importlib.util.find_spec(name) for name in ("driver", "cell", "bootstrap", "kernel_support")])',
        ].join('\n'),
      );
      assert.deepEqual(outcome, { status: 'ok' });
      assert.equal(out, "True True\n{'query': 'read file'}\n[None, None, None, None]\n");
    });

    test('an interrupt abandons a pending host call; its late answer is never taken for the next call', async () => {
      let slowCall = nextSlowCall();
      const sink = new RecordingSink();
      const caught = run(
        session,
        [
          'import _code_mode_host as host',
          'try:',
          '    host.call("slow", None)',
          'except KeyboardInterrupt:',
          '    print("abandoned", flush=True)',
          'print(host.call("fast", None)["method"])',
        ].join('\n'),
        sink,
      );
      await slowCall;
      session.interrupt();
      await sink.waitFor('abandoned');
      releaseSlow('too late');
      const { outcome, out } = await caught;
      assert.deepEqual(outcome, { status: 'ok' });
      assert.equal(out, 'abandoned\nfast\n');

      slowCall = nextSlowCall();
      const uncaught = run(session, 'import _code_mode_host as host\nhost.call("slow", None)');
      await slowCall;
      session.interrupt();
      assert.deepEqual((await uncaught).outcome, { status: 'interrupted' });
      releaseSlow('later still');
      assert.equal(
        (await run(session, 'import _code_mode_host as host\nprint(host.call("again", [1, 2])["params"])')).out,
        '[1, 2]\n',
      );
    });

    test(
      'host calls from another thread are refused with HostCallError',
      { skip: target.backend === 'pyodide' && NO_THREADS },
      async () => {
        calls.length = 0;
        const { outcome, out } = await run(
          session,
          'import threading, _code_mode_host as host\nerrors = []\ndef worker():\n    try:\n        host.call("from-thread", None)\n    except host.HostCallError as e:\n        errors.append(str(e))\nt = threading.Thread(target=worker)\nt.start(); t.join()\nprint(errors)',
        );
        assert.deepEqual(outcome, { status: 'ok' });
        assert.match(out, /main thread/);
        assert.deepEqual(calls, [], 'the refused call never reached the host');
      },
    );
  });
}
