// The loopback Streamable HTTP transport: who is refused, and a full run through a real MCP client.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import type { RunResult } from '../../src/engine/types';
import { startHttpMcpServer, type HttpMcpServer } from '../../src/mcp/http';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connectHttp, initializeBody, post } from '../support/http';
import { testStorageDir } from '../support/mcp';

describe('MCP over loopback HTTP', () => {
  let engine: Engine;
  let server: HttpMcpServer;

  before(async () => {
    engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python' } });
    server = await startHttpMcpServer(engine);
  });
  after(async () => {
    await server?.close();
    await engine?.dispose();
  });

  test('binds 127.0.0.1 only', () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  test('a request without the token is refused with 401', async () => {
    const res = await post(server.url, {});
    assert.equal(res.status, 401);
  });

  test('a wrong token is refused with 401', async () => {
    const res = await post(server.url, { authorization: `Bearer ${server.token.slice(1)}x` });
    assert.equal(res.status, 401);
    const truncated = await post(server.url, { authorization: 'Bearer abc' });
    assert.equal(truncated.status, 401);
  });

  test('a browser Origin is refused with 403 even with the token', async () => {
    const res = await post(server.url, { authorization: `Bearer ${server.token}`, origin: 'https://evil.example' });
    assert.equal(res.status, 403);
    const local = await post(server.url, { authorization: `Bearer ${server.token}`, origin: 'http://127.0.0.1' });
    assert.equal(local.status, 403);
  });

  test('a foreign Host (DNS rebinding) is refused with 403', async () => {
    const res = await post(server.url, { authorization: `Bearer ${server.token}`, host: 'evil.example' });
    assert.equal(res.status, 403);
  });

  test('a request without a session that is not initialize is refused with 400', async () => {
    const res = await post(
      server.url,
      { authorization: `Bearer ${server.token}` },
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    );
    assert.equal(res.status, 400);
  });

  test('a full run over HTTP with the token', async () => {
    const { client } = await connectHttp(server.url, server.token);
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'run_python'));
      const progress: string[] = [];
      const raw = (await client.callTool(
        {
          name: 'run_python',
          arguments: { code: 'import sys\nprint("over http", flush=True)\nprint(sys.version_info[0])' },
        },
        undefined,
        { onprogress: (p) => progress.push(p.message ?? '') },
      )) as CallToolResult;
      const result = raw.structuredContent as unknown as RunResult;
      assert.equal(result.success, true);
      assert.equal(result.stdout, 'over http\n3\n');
      assert.equal(result.backend, 'python');
      assert.match(progress.join(''), /over http/);
    } finally {
      await client.close();
    }
  });
});

describe(
  'MCP over a Unix domain socket (how VS Code reaches the extension: no TCP port at all)',
  { skip: process.platform === 'win32' && 'Unix domain sockets' },
  () => {
    test('it answers on the socket with the token, refuses without it or with a foreign Host, and removes the socket on close', async () => {
      const engine = createEngine({ storageDir: testStorageDir });
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-socket-test-'));
      const socketPath = path.join(dir, 'mcp.sock');
      const server = await startHttpMcpServer(engine, { socketPath });
      try {
        assert.equal(server.socketPath, socketPath);
        assert.equal(server.url, 'http://localhost/mcp');
        assert.ok(fs.statSync(socketPath).isSocket());
        const answered = await post(
          server.url,
          { authorization: `Bearer ${server.token}` },
          initializeBody,
          socketPath,
        );
        assert.equal(answered.status, 200);
        assert.match(answered.body, /"protocolVersion"/);
        assert.equal((await post(server.url, {}, initializeBody, socketPath)).status, 401);
        const rebound = await post(
          'http://attacker.example/mcp',
          { authorization: `Bearer ${server.token}` },
          initializeBody,
          socketPath,
        );
        assert.equal(rebound.status, 403);
      } finally {
        await server.close();
        await engine.dispose();
      }
      assert.equal(fs.existsSync(socketPath), false, 'closing removes the socket');
      fs.rmSync(dir, { recursive: true, force: true });
    });
  },
);
