// With the network setting on, the sandbox shares the machine's network and nothing else changes: code can
// fetch and connect, but still cannot see other processes, spawn, or touch files outside its folders.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { testStorageDir } from '../support/mcp';
import { inNestedWorker, settleInWorker, type Run } from '../support/pyodideProbe';
import { sandboxUnderTest, underDeno } from '../support/sandboxUnderTest';

describe('Pyodide with codeMode.pyodide.network on', () => {
  let engine: Engine;
  let web: http.Server;
  let port = 0;
  let hits = 0;
  const run: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'online' });

  before(async () => {
    web = http.createServer((_req, res) => {
      hits++;
      res.end('hello from the host');
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    port = (web.address() as AddressInfo).port;
    engine = createEngine({ storageDir: testStorageDir, pyodide: { network: 'on', sandbox: sandboxUnderTest } });
  });
  after(async () => {
    web.close();
    await engine?.dispose();
  });

  test('the environment report says the network is on', () => {
    assert.equal(engine.sandbox('pyodide')?.network, 'on');
  });

  test('fetch and sockets reach the network (Python sockets are not TCP in Pyodide; JavaScript ones are)', async () => {
    const fetched = await settleInWorker(run, `fetch('http://127.0.0.1:${port}/').then((r) => r.text())`);
    assert.equal(fetched, 'ok:hello from the host');
    assert.equal(hits, 1);
    const socket = await settleInWorker(
      run,
      inNestedWorker(
        `return await new Promise((resolve, reject) => { const s = require('node:net').connect(${port}, '127.0.0.1'); s.on('connect', () => { s.end(); resolve('connected'); }); s.on('error', reject); })`,
      ),
    );
    assert.equal(socket, 'ok:ok:connected');
  });

  test(
    'the rest of the boundary holds',
    { skip: process.platform !== 'linux' && !underDeno && 'needs bubblewrap (Linux) or Deno' },
    async () => {
      assert.match(
        await settleInWorker(run, inNestedWorker(`process.kill(${process.pid}, 0); return 'visible'`)),
        underDeno ? /^ok:err:Requires run access/ : /^ok:err:kill ESRCH/,
      );
      assert.match(
        await settleInWorker(run, inNestedWorker(`return require('node:fs').readFileSync('/etc/passwd', 'utf8')`)),
        /^ok:err:/,
      );
      assert.match(
        await settleInWorker(run, inNestedWorker(`return require('node:child_process').execSync('id').toString()`)),
        /^ok:err:/,
      );
    },
  );
});
