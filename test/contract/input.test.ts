// input(), sys.stdin and getpass on every backend: the question reaches whoever started the run, the answer
// comes back, a dismissed question is end of file, and time spent waiting for a person is not the run's.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import type { InputHandler, InputRequest } from '../../src/engine/types';
import { contractTargets } from '../support/contractTargets';
import { testStorageDir } from '../support/mcp';
import { sandboxUnderTest } from '../support/sandboxUnderTest';

for (const target of contractTargets()) {
  const backend = target.backend;
  describe(`input on the ${target.label}`, () => {
    let engine: Engine;
    const run = (code: string, onInput?: InputHandler, timeoutS?: number) =>
      engine.run({ code, backend, session: 'input', onInput, timeoutS });

    before(async () => {
      engine = createEngine({
        storageDir: testStorageDir,
        pyodide: { sandbox: sandboxUnderTest },
        jupyter: await target.setUp(),
      });
    });
    after(async () => {
      await engine.dispose();
      await target.tearDown();
    });

    test('input() asks the front door with its prompt, and the answer comes back', async () => {
      const asked: InputRequest[] = [];
      const result = await run('name = input("name? ")\nprint("hello", name)', async (request) => {
        asked.push(request);
        return 'Ada';
      });
      assert.deepEqual(asked, [{ prompt: 'name? ', password: false }]);
      assert.equal(result.stdout, 'name? Ada\nhello Ada\n');
    });

    test('sys.stdin.readline and getpass ask too; getpass answers are not echoed', async () => {
      const answers = ['first line', 's3cret'];
      const asked: InputRequest[] = [];
      const result = await run(
        'import sys, getpass\nline = sys.stdin.readline()\npw = getpass.getpass("pw: ")\nprint(repr(line), len(pw))',
        async (request) => {
          asked.push(request);
          return answers.shift();
        },
      );
      assert.equal(result.stdout, "'first line\\n' 6\n");
      assert.deepEqual(asked, [
        { prompt: '', password: false },
        { prompt: 'pw: ', password: true },
      ]);
    });

    test('a dismissed question is EOFError, as at the end of a file', async () => {
      const result = await run('input("continue? ")', async () => undefined);
      assert.equal(result.diagnostics?.exception, 'EOFError');
      assert.match(result.diagnostics?.message ?? '', /input was cancelled/);
      const lines = await run('import sys\nprint(repr(sys.stdin.readline()))', async () => undefined);
      assert.equal(lines.stdout, "''\n");
    });

    test('with nobody to ask, input() fails at once with a message that says what to do', async () => {
      const result = await run('input("name? ")');
      assert.equal(result.diagnostics?.exception, 'EOFError');
      assert.match(result.diagnostics?.message ?? '', /input\(\) has nobody to answer it.*Put the data in the code/);
    });

    test('time spent waiting for the answer does not count against the time limit', async () => {
      const result = await run(
        'import time\ntime.sleep(0.2)\nprint(input("slow? "))',
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 1500));
          return 'answered';
        },
        1,
      );
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.equal(result.stdout, 'slow? answered\nanswered\n');
    });

    test('interrupting a run that waits for an answer stops it and dismisses the question', async () => {
      let dismissed = false;
      const pending = run(
        'input("never answered? ")',
        (_request, signal) =>
          new Promise((resolve) => signal.addEventListener('abort', () => ((dismissed = true), resolve(undefined)))),
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(engine.interrupt('input', backend), true);
      const result = await pending;
      assert.equal(result.success, false);
      assert.equal(dismissed, true);
      assert.equal((await run('print("next")')).stdout, 'next\n');
    });
  });
}
