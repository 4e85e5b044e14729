// No state shared between sessions (the security issue behind these cases): each session has its own scratch
// folder; another session (another client of one HTTP server) cannot read it, and it is removed when the session
// ends. The other half of no silent state loss: state-loss.test.ts.
// On Linux every case runs (the sandbox is bubblewrap there); nothing is skipped.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { explain } from '../support/explainRun';
import { connectHttp, until } from '../support/http';
import { sandboxFlags, sandboxUnderTest } from '../support/sandboxUnderTest';
import { cliPath, runPython, testStorageDir } from '../support/mcp';
import { inNestedWorker, settleInWorker, type Run } from '../support/pyodideProbe';

const scratchParent = path.join(testStorageDir, 'scratch');

describe('scratch folders are per session', () => {
  let engine: Engine;

  before(() => {
    engine = createEngine({ storageDir: testStorageDir, pyodide: { sandbox: sandboxUnderTest } });
  });
  after(async () => {
    await engine?.dispose();
  });

  const scratchOf = async (run: Run): Promise<string> => {
    const result = await run('import os\nprint(os.environ["CODE_MODE_SCRATCH"])');
    assert.equal(result.success, true, explain(result));
    return result.stdout.trim();
  };

  test("two clients' sessions of the same name cannot read each other's files, from Python or a fresh JS realm", async () => {
    const alice: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'default', scope: 'client-alice' });
    const bob: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'default', scope: 'client-bob' });
    const aliceScratch = await scratchOf(alice);
    const bobScratch = await scratchOf(bob);
    assert.notEqual(aliceScratch, bobScratch);
    for (const folder of [aliceScratch, bobScratch]) assert.equal(path.dirname(folder), fs.realpathSync(scratchParent));
    const secret = path.join(aliceScratch, 'secret.txt');
    const wrote = await alice(
      `open(${JSON.stringify(secret)}, "w").write("alice's secret")\nprint(${JSON.stringify(secret)})`,
    );
    assert.equal(wrote.success, true, explain(wrote));
    assert.equal(wrote.displays?.[0]?.data, "alice's secret", 'her own printed file is shown to her');

    const read = await bob(`print(open(${JSON.stringify(secret)}).read())`);
    assert.equal(read.diagnostics?.exception, 'FileNotFoundError', explain(read));
    const listed = await bob(
      `import os\nprint(os.listdir(${JSON.stringify(scratchParent)}) if os.path.isdir(${JSON.stringify(scratchParent)}) else [])`,
    );
    assert.doesNotMatch(listed.stdout, new RegExp(path.basename(aliceScratch)), explain(listed));
    for (const attempt of [
      await settleInWorker(bob, `import('node:fs').then((fs) => fs.readFileSync(${JSON.stringify(secret)}, 'utf8'))`),
      await settleInWorker(
        bob,
        inNestedWorker(`return require('node:fs').readFileSync(${JSON.stringify(secret)}, 'utf8')`),
      ),
    ]) {
      assert.doesNotMatch(attempt, /alice's secret|^ok:ok:|^ok:(?!err)/, attempt);
    }
    // Printing her file's path shows Bob nothing either.
    const printed = await bob(`print(${JSON.stringify(secret)})`);
    assert.equal(printed.displays, undefined, explain(printed));

    const described = engine.describeSessions().filter((s) => s.backend === 'pyodide');
    assert.equal(described.find((s) => s.scope === 'client-alice')?.scratchDir, aliceScratch);
    assert.equal(described.find((s) => s.scope === 'client-bob')?.scratchDir, bobScratch);
    await engine.endScope('client-alice');
    await engine.endScope('client-bob');
  });

  test('workspace-Python sessions get folders of their own too', async () => {
    const one = await scratchOf((code) => engine.run({ code, backend: 'python', session: 'one' }));
    const two = await scratchOf((code) => engine.run({ code, backend: 'python', session: 'two' }));
    assert.notEqual(one, two);
    assert.ok(fs.statSync(one).isDirectory() && fs.statSync(two).isDirectory());
    await engine.resetSession('one', 'python');
    await engine.resetSession('two', 'python');
  });

  test('a reset keeps the folder and its files; the end of the session removes them', async () => {
    const run: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'kept', scope: 'client-carol' });
    const folder = await scratchOf(run);
    await run(`open(${JSON.stringify(path.join(folder, 'data.txt'))}, "w").write("data")`);
    // A run that asks for a fresh interpreter, and a reset from VS Code: the session goes on, with its files.
    const fresh = await engine.run({
      code: 'import os\nprint(os.environ["CODE_MODE_SCRATCH"])',
      backend: 'pyodide',
      session: 'kept',
      scope: 'client-carol',
      reset: true,
    });
    assert.equal(fresh.stdout.trim(), folder);
    await engine.resetSession('kept', 'pyodide');
    assert.equal(await scratchOf(run), folder);
    assert.equal(fs.readFileSync(path.join(folder, 'data.txt'), 'utf8'), 'data');
    // The client goes away: the session ends, and its folder with it.
    await engine.endScope('client-carol');
    assert.equal(fs.existsSync(folder), false, 'the folder of an ended session is removed');
  });

  test('an evicted session and a disposed engine take their folders along', async () => {
    const small = createEngine({
      storageDir: testStorageDir,
      config: { maxSessions: 1 },
      pyodide: { sandbox: sandboxUnderTest },
    });
    try {
      const first = await scratchOf((code) => small.run({ code, backend: 'python', session: 'first' }));
      const second = await scratchOf((code) => small.run({ code, backend: 'python', session: 'second' }));
      await until(() => !fs.existsSync(first), "the evicted session's folder is removed");
      assert.ok(fs.existsSync(second));
      await small.dispose();
      assert.equal(fs.existsSync(second), false, 'disposing the engine removes the folders of its sessions');
    } finally {
      await small.dispose();
    }
  });
});

describe('two HTTP clients of one CLI server', () => {
  let child: ChildProcess;
  let stderr = '';
  let url = '';
  let token = '';
  let workspace: string;

  before(async () => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-workspace-'));
    child = spawn(
      process.execPath,
      [
        cliPath,
        '--http',
        '--backend',
        'pyodide',
        '--storage',
        testStorageDir,
        '--workspace',
        workspace,
        ...sandboxFlags,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await until(
      () => /bearer token .*: (\S+)/.test(stderr) || child.exitCode !== null,
      'the CLI says where it serves, with which token',
    );
    url = /MCP over HTTP on (\S+)/.exec(stderr)?.[1] ?? '';
    token = /bearer token .*: (\S+)/.exec(stderr)?.[1] ?? '';
    assert.ok(url && token, stderr);
  });
  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(workspace, { recursive: true, force: true });
  });

  test("cannot read each other's scratch files; each one's folder goes when it does", async () => {
    const a = await connectHttp(url, token);
    const b = await connectHttp(url, token);
    const own = async (client: typeof a.client) =>
      (await runPython(client, { code: 'import os\nprint(os.environ["CODE_MODE_SCRATCH"])' })).result.stdout.trim();
    const aScratch = await own(a.client);
    const bScratch = await own(b.client);
    assert.notEqual(aScratch, bScratch);
    const secret = path.join(aScratch, 'from-a.txt');
    const wrote = await runPython(a.client, {
      code: `open(${JSON.stringify(secret)}, "w").write("a's data")\nprint(open(${JSON.stringify(secret)}).read())`,
    });
    assert.equal(wrote.result.stdout, "a's data\n", explain(wrote.result));

    const read = await runPython(b.client, { code: `print(open(${JSON.stringify(secret)}).read())` });
    assert.equal(read.result.diagnostics?.exception, 'FileNotFoundError', explain(read.result));
    assert.doesNotMatch(JSON.stringify(read.raw), /a's data/);

    // environment tells each client the folder of its own session.
    const environmentOf = async (client: typeof a.client) =>
      (await client.callTool({ name: 'environment', arguments: {} })).structuredContent as {
        sessions: { name: string; backend: string; scratch_dir: string | null }[];
      };
    assert.deepEqual(
      (await environmentOf(a.client)).sessions.map((s) => s.scratch_dir),
      [aScratch],
    );
    assert.deepEqual(
      (await environmentOf(b.client)).sessions.map((s) => s.scratch_dir),
      [bScratch],
    );

    // A ends its MCP session: its Python session ends, and its folder goes; B's stays until the server stops.
    await a.transport.terminateSession();
    await a.client.close();
    await until(() => !fs.existsSync(aScratch), "the ended client's scratch folder is removed");
    assert.ok(fs.existsSync(bScratch));
    await b.client.close();
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
    child.kill('SIGTERM');
    const how = await exited;
    assert.equal(
      fs.existsSync(bScratch),
      false,
      `the server removes the folders of its sessions when it exits (it exited with ${String(how)}): ${stderr.slice(-2000)}`,
    );
  });
});
