// The CLI's spare Pyodide interpreter (engine/spare.ts) over a real MCP client: started with the server when
// Pyodide is the default backend, taken by the first session, and absent with --no-pyodide-spare. What the spare
// does for the session that takes it is tested in test/integration/engine-spare.test.ts; here, only the front door.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { connectStdio, runPython } from '../support/mcp';
import { until } from '../support/http';

const SPARE_STARTED = /Pyodide host process (\d+) started for session \(spare\)/;

describe('the CLI keeps a spare Pyodide interpreter', () => {
  test('started with the server and taken by the first session; another follows', async () => {
    const conn = await connectStdio();
    try {
      await until(() => SPARE_STARTED.test(conn.stderr()), 'the spare to be started', 120_000);
      const sparePid = Number(SPARE_STARTED.exec(conn.stderr())![1]);
      const { result } = await runPython(conn.client, { code: 'print(6 * 7)' });
      assert.equal(result.stdout, '42\n');
      assert.equal(result.session_reset, undefined);
      assert.match(conn.stderr(), /session "default" \(pyodide\) takes the spare interpreter/);
      assert.match(
        conn.stderr(),
        new RegExp(
          `ready in \\d+ ms, from the (cached|shipped) snapshot; pid ${sparePid}|ready in \\d+ ms, cold[^;]*; pid ${sparePid}`,
        ),
        'the first run ran in the spare',
      );
      await until(
        () => [...conn.stderr().matchAll(new RegExp(SPARE_STARTED, 'g'))].length === 2,
        'the next spare to be started',
        120_000,
      );
    } finally {
      await conn.close();
    }
  });

  test('none with --no-pyodide-spare, nor with another default backend', async () => {
    for (const args of [['--no-pyodide-spare'], ['--backend', 'python']]) {
      const conn = await connectStdio(args);
      try {
        const { result } = await runPython(conn.client, { code: 'print(6 * 7)', backend: 'pyodide' });
        assert.equal(result.stdout, '42\n');
        assert.doesNotMatch(conn.stderr(), /\(spare\)/, `${args.join(' ')}: ${conn.stderr().slice(0, 2000)}`);
      } finally {
        await conn.close();
      }
    }
  });
});
