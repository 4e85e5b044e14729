// One suite every backend passes: a session either keeps its state or says it lost it, and what one run does
// to the interpreter's plumbing (closed fds, replaced streams, poisoned modules) does not silently break the
// runs after it. A new backend passes this before it ships.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { interpreterUnder } from '../support/backendSessions';
import { contractTargets } from '../support/contractTargets';
import { testStorageDir } from '../support/mcp';
import { sandboxUnderTest } from '../support/sandboxUnderTest';

for (const target of contractTargets()) {
  const backend = target.backend;
  describe(`session state on the ${target.label}`, () => {
    let engine: Engine;
    const run = (code: string, session = 'contract', reset?: boolean) => engine.run({ code, backend, session, reset });

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

    test(
      'an interpreter killed between runs (the OOM killer) is announced on the next run',
      { skip: process.platform !== 'linux' && 'reads /proc' },
      async () => {
        assert.equal((await run('kept = 41')).success, true);
        // A kernel of another user is not reported by pid: it says its own.
        const pid = target.remoteKernel
          ? Number((await run('import os\nprint(os.getpid())')).stdout)
          : engine.backendInfo(backend, 'contract').pid;
        assert.ok(pid, 'the session has a process');
        const victim = interpreterUnder(pid);
        process.kill(victim, 'SIGKILL');
        // Between runs means after its parent (the backend, the sandbox's init or the Jupyter Server) has seen
        // it die and reaped it: how long that takes depends on the machine's load, not on a fixed pause.
        for (let waited = 0; fs.existsSync(`/proc/${victim}`); waited += 50) {
          assert.ok(waited < 120_000, `process ${victim} was never reaped`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        // And after the backend has heard of it, where the backend owns the process: the news travels up through
        // the sandbox's init and the pipes. A run sent before that races the death, which is another case (the
        // run fails saying the interpreter stopped, and the state loss is announced); a Jupyter kernel's death
        // reaches the backend from the server, which starts the kernel again by itself.
        for (
          let waited = 0;
          backend !== 'jupyter' && engine.backendInfo(backend, 'contract').state === 'ready';
          waited += 50
        ) {
          assert.ok(waited < 120_000, `the ${backend} backend never noticed that its interpreter died`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const next = await run('print("kept" in globals())');
        assert.equal(next.stdout, 'False\n', JSON.stringify(next));
        assert.equal(next.success, true);
        assert.equal(next.session_reset, true, 'the lost state was not announced');
        assert.match(next.reset_reason ?? '', /killed|SIGKILL|signal 9|code 137|kernel died/);
        const after = await run('print(1)');
        assert.equal(after.session_reset, undefined, 'announced once');
      },
    );

    test('closed standard fds are repaired before the next run', async () => {
      const closing = await run('import os\nos.close(1)\nos.close(2)');
      assert.equal(closing.success, true, JSON.stringify(closing.diagnostics));
      const next = await run('import sys\nprint("out again")\nprint("err again", file=sys.stderr)');
      assert.equal(next.stdout, 'out again\n');
      assert.equal(next.stderr, 'err again\n');
      assert.equal(next.session_reset, undefined);
    });

    test('replaced or closed sys.stdout and sys.stderr are put back before the next run', async () => {
      await run('import sys\nsys.stdout = None\nsys.stderr = open("/dev/null", "w")');
      assert.equal((await run('print("visible")')).stdout, 'visible\n');
      await run('import sys\nsys.__stdout__.close()');
      assert.equal((await run('print("visible again")')).stdout, 'visible again\n');
      const redirected = await run(
        'import contextlib, io\nbuffer = io.StringIO()\nwith contextlib.redirect_stdout(buffer):\n    print("captured")\nprint(repr(buffer.getvalue()))',
      );
      assert.equal(redirected.stdout, "'captured\\n'\n", 'redirecting within a run still works');
    });

    test('reset gives a fresh interpreter: poisoned builtins and sys.modules are gone', async () => {
      await run('import builtins, sys\nbuiltins.poisoned = True\nsys.modules["json"] = None');
      const poisoned = await run('import builtins\nprint(hasattr(builtins, "poisoned"))\nimport json');
      assert.equal(poisoned.stdout, 'True\n');
      assert.equal(poisoned.success, false, 'the poisoned module is still poisoned without a reset');
      const fresh = await run(
        'import builtins, json\nprint(hasattr(builtins, "poisoned"), json.dumps(None))',
        'contract',
        true,
      );
      assert.equal(fresh.stdout, 'False null\n');
      assert.equal(fresh.session_reset, true);
      assert.equal(fresh.reset_reason, 'this run asked for a fresh interpreter');
    });

    test('a reset session tells its next caller, whoever reset it', async () => {
      await run('kept = 1', 'shared');
      await engine.resetSession('shared', backend, 'the session was restarted from VS Code');
      const next = await run('print("kept" in globals())', 'shared');
      assert.equal(next.stdout, 'False\n');
      assert.equal(next.reset_reason, 'the session was restarted from VS Code');
    });
  });
}
