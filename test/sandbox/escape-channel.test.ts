// The escape suite's part on the channel to the server (escape.test.ts says what the suite is): garbage, forged
// messages and a scribbled output ring end only the attacker's session, announced.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { escapeTarget } from '../support/escapeTarget';
import { writeToChannel } from '../support/pyodideProbe';

describe('Pyodide sandbox escape suite', () => {
  const host = escapeTarget();
  const { attacker, nested, assertUnharmed } = host;

  describe('the channel to the server', () => {
    test('garbage written to the host channel ends that session, announced, and nothing else', async () => {
      const outcome = await nested(
        `${writeToChannel('Buffer.from([0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8])')}; await new Promise(() => undefined); return 'still alive'`,
      );
      assert.match(outcome, /^reset:.*malformed message from the Pyodide process/);
      const next = await attacker('print("fresh")');
      assert.equal(next.stdout, 'fresh\n');
      await assertUnharmed();
    });

    test('a forged message of the right shape but impossible content is refused the same way', async () => {
      const forged = JSON.stringify({
        type: 'ready',
        pyodideVersion: 'x'.repeat(5000),
        pythonVersion: '3',
        fromSnapshot: true,
        loadMs: 1,
      });
      const outcome = await nested(
        `const body = Buffer.from(${JSON.stringify(forged)}); const head = Buffer.alloc(4); head.writeUInt32BE(body.length); ${writeToChannel('Buffer.concat([head, body])')}; await new Promise(() => undefined); return 'still alive'`,
      );
      assert.match(outcome, /^reset:.*malformed message from the Pyodide process: pyodideVersion/);
      await assertUnharmed();
    });

    test('a forged result for a run that is not running ends that session, announced, and nothing else', async () => {
      const forged = JSON.stringify({
        type: 'result',
        runId: 'not-a-run',
        outcome: { status: 'ok' },
        output: [{ stream: 'stdout', text: 'forged' }],
      });
      const sent = await nested(
        `const body = Buffer.from(${JSON.stringify(forged)}); const head = Buffer.alloc(4); head.writeUInt32BE(body.length); ${writeToChannel('Buffer.concat([head, body])')}; return 'sent'`,
      );
      // The server answers only for the run it started (host-trust.test.ts has the variants).
      assert.match(sent, /^reset:.*the Pyodide process sent a 'result' message for run "not-a-run"/);
      const next = await attacker('print("real")');
      assert.equal(next.stdout, 'real\n');
      await assertUnharmed();
    });

    test('scribbling over the output ring resets only this session, and says so', async () => {
      const scribble = await attacker(
        `import js\njs.eval("import('node:worker_threads').then((wt) => new Uint8Array(wt.workerData.outputRing).fill(255))")\nprint("scribbled")`,
      );
      const next = scribble.session_reset ? scribble : await attacker('print("after")');
      if (next.success && !next.session_reset) assert.equal(next.stdout, 'after\n');
      else assert.equal(next.session_reset, true, JSON.stringify(next));
      const again = await attacker('print("works")');
      assert.equal(again.stdout, 'works\n');
      await assertUnharmed();
    });
  });
});
