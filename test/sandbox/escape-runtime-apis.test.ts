// The escape suite's part on the runtime's own APIs (escape.test.ts says what the suite is): Node's built-ins that
// spawn, load or open, workers and their permission model, and Deno's API as Python reaches it (js.Deno).
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as os from 'node:os';
import * as path from 'node:path';
import { escapeTarget } from '../support/escapeTarget';
import { settleInWorker, SPAWN_LOAD_OPEN_ATTEMPTS } from '../support/pyodideProbe';
import { underDeno } from '../support/sandboxUnderTest';

describe('Pyodide sandbox escape suite', () => {
  const host = escapeTarget();
  const { attacker, nested, assertUnharmed } = host;

  describe('Node built-ins that spawn, load or open', () => {
    for (const [name, body] of Object.entries(SPAWN_LOAD_OPEN_ATTEMPTS)) {
      test(`${name} is refused in a nested worker`, async () => {
        const outcome = await nested(body);
        assert.match(outcome, /^ok:err:/, `${name} was not refused: ${outcome}`);
      });
    }
    test("a worker cannot be given execArgv, which would start it without Node's permission model", async () => {
      for (const execArgv of ['[]', "['--no-warnings']", "['--allow-fs-write=/']"]) {
        const outcome = await nested(
          `return await new Promise((resolve, reject) => { const w = new (require('node:worker_threads').Worker)("require('node:worker_threads').parentPort.postMessage(typeof process.permission)", { eval: true, execArgv: ${execArgv} }); w.on('message', resolve); w.on('error', reject); })`,
        );
        assert.match(outcome, /^ok:err:.*execArgv/, `a worker with execArgv ${execArgv} started: ${outcome}`);
      }
      const fromPython = await settleInWorker(
        attacker,
        `import('node:worker_threads').then((wt) => { new wt.Worker('1', { eval: true, execArgv: [] }); return 'started'; })`,
      );
      assert.match(fromPython, /^refused:.*execArgv/);
    });

    test("workers started from workers, however deep, keep the process's permission model", async () => {
      // Node's model shows as process.permission; Deno's as run access never granted, in every realm.
      const model = `(typeof Deno === 'object' ? 'run ' + Deno.permissions.querySync({ name: 'run' }).state : typeof process.permission)`;
      const grandchild = `new Promise((resolve, reject) => { const w = new (require('node:worker_threads').Worker)(${JSON.stringify(`const { parentPort, Worker } = require('node:worker_threads'); try { new Worker('1', { eval: true, execArgv: [] }); parentPort.postMessage('great-grandchild started') } catch (e) { parentPort.postMessage(`)} + ${JSON.stringify(model)} + " + ' ' + e.code) }", { eval: true }); w.on('message', resolve); w.on('error', reject); })`;
      const outcome = await nested(`return ${model} + ' / ' + (await ${grandchild})`);
      assert.equal(
        outcome,
        underDeno ? 'ok:ok:run prompt / run prompt ERR_ACCESS_DENIED' : 'ok:ok:object / object ERR_ACCESS_DENIED',
      );
    });

    test('after all of that, the server and the other session are unharmed', assertUnharmed);
  });

  describe(
    "Deno's own API, reachable from Python as js.Deno",
    { skip: !underDeno && 'the host runs under Node here: there is no Deno API' },
    () => {
      const denoAttempts: Record<string, string> = {
        'Deno.Command': `return new Deno.Command('/usr/bin/id').outputSync().code`,
        'Deno.kill of the server': `Deno.kill(${process.pid}, 'SIGKILL'); return 'killed'`,
        'Deno.dlopen': `return String(Deno.dlopen('/usr/lib/x86_64-linux-gnu/libc.so.6', {}))`,
        'Deno.env': `return JSON.stringify(Deno.env.toObject())`,
        'Deno.connect': `return String(await Deno.connect({ hostname: '127.0.0.1', port: 9 }))`,
        'Deno.listen': `return String(Deno.listen({ port: 0 }).addr.port)`,
        'Deno.systemMemoryInfo': `return JSON.stringify(Deno.systemMemoryInfo())`,
        'Deno.readTextFile outside': `return await Deno.readTextFile('/etc/passwd')`,
        'Deno.writeTextFile in the workspace': `await Deno.writeTextFile(${JSON.stringify(path.join(os.tmpdir(), 'code-mode-deno-probe'))}, 'x'); return 'written'`,
        'Deno.symlink to outside': `Deno.symlinkSync('/etc/passwd', Deno.makeTempDirSync() + '/link'); return 'linked'`,
        'a remote module': `return String(await import('https://deno.land/std/version.ts'))`,
        'an npm module': `return String(await import('npm:left-pad'))`,
        'a web Worker asking for more permissions': `return await new Promise((resolve, reject) => { const w = new Worker('data:text/javascript,postMessage(1)', { type: 'module', deno: { permissions: { run: true } } }); w.onmessage = () => resolve('started'); w.onerror = (e) => { e.preventDefault(); reject(new Error(e.message)); }; })`,
      };
      for (const [name, body] of Object.entries(denoAttempts)) {
        test(`${name} is refused in a nested worker`, async () => {
          const outcome = await nested(body);
          // Asking a worker for permissions is an unstable option Deno answers by ending the process: the session resets.
          assert.match(
            outcome,
            /^ok:err:|^reset:[\s\S]*--unstable-worker-options/,
            `${name} was not refused: ${outcome}`,
          );
        });
      }
      test('Deno.Command from Python itself is refused', async () => {
        const python = await attacker('import js\njs.Deno.Command.new("/usr/bin/id").outputSync()');
        assert.match(python.diagnostics?.message ?? '', /Requires run access/);
        await assertUnharmed();
      });
    },
  );
});
