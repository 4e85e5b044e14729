// The loopback HTTP transport with bodies it cannot take: too big (declared or streamed) gets a real 413 with a
// JSON-RPC error, not a reset connection; not JSON gets 400 with -32700; and the server goes on serving.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { startHttpMcpServer, type HttpMcpServer } from '../../src/mcp/http';
import { MAX_MESSAGE_BYTES } from '../../src/mcp/jsonRpcInput';
import { testStorageDir } from '../support/mcp';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * POSTs `body` with a declared Content-Length, or chunked in 64 KiB writes. Resolves with the response even
 * when the server closes the connection while the rest of the body is still being sent.
 */
function post(server: HttpMcpServer, body: Buffer, transfer: 'content-length' | 'chunked'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${server.token}`,
    };
    if (transfer === 'content-length') headers['content-length'] = String(body.length);
    const req = http.request(server.url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    if (transfer === 'content-length') req.end(body);
    else {
      for (let at = 0; at < body.length; at += 64 * 1024) req.write(body.subarray(at, at + 64 * 1024));
      req.end();
    }
  });
}

const initialize = Buffer.from(
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'limits', version: '1' } },
  }),
);

function jsonRpcError(reply: Reply): { code: number; message: string; id: unknown } {
  const parsed = JSON.parse(reply.body) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
  assert.equal(parsed.jsonrpc, '2.0');
  return { ...parsed.error, id: parsed.id };
}

describe('MCP over loopback HTTP: bodies it cannot take', () => {
  let engine: Engine;
  let server: HttpMcpServer;
  const tooBig = Buffer.alloc(MAX_MESSAGE_BYTES + 4 * 1024 * 1024, 0x20);

  before(async () => {
    engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python' } });
    server = await startHttpMcpServer(engine);
  });
  after(async () => {
    await server?.close();
    await engine?.dispose();
  });

  async function assertStillServing() {
    const reply = await post(server, initialize, 'content-length');
    assert.equal(reply.status, 200, reply.body);
  }

  test('a declared Content-Length over the limit is refused at once with 413 and a JSON-RPC error', async () => {
    const reply = await post(server, tooBig, 'content-length');
    assert.equal(reply.status, 413);
    assert.equal(reply.headers.connection, 'close');
    const error = jsonRpcError(reply);
    assert.equal(error.code, -32600);
    assert.equal(error.id, null);
    assert.match(error.message, new RegExp(`${tooBig.length} bytes, over the limit of ${MAX_MESSAGE_BYTES} bytes`));
    await assertStillServing();
  });

  test('a chunked body that grows over the limit gets 413 and a JSON-RPC error, then the connection closes', async () => {
    const reply = await post(server, tooBig, 'chunked');
    assert.equal(reply.status, 413);
    assert.equal(reply.headers.connection, 'close');
    const error = jsonRpcError(reply);
    assert.equal(error.code, -32600);
    assert.match(error.message, new RegExp(`over the limit of ${MAX_MESSAGE_BYTES} bytes`));
    await assertStillServing();
  });

  test('a body just under the limit is read (the session check answers it, not the size check)', async () => {
    const padded = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"pad":"'),
      Buffer.alloc(MAX_MESSAGE_BYTES - 100, 0x61),
      Buffer.from('"}}'),
    ]);
    const reply = await post(server, padded, 'chunked');
    assert.equal(reply.status, 400, reply.body);
    assert.match(jsonRpcError(reply).message, /session/);
  });

  test('a body that is not JSON gets 400 with -32700', async () => {
    for (const transfer of ['content-length', 'chunked'] as const) {
      const reply = await post(server, Buffer.from('{"jsonrpc": "2.0", "id": 1,'), transfer);
      assert.equal(reply.status, 400);
      const error = jsonRpcError(reply);
      assert.equal(error.code, -32700);
      assert.equal(error.id, null);
    }
    await assertStillServing();
  });
});
