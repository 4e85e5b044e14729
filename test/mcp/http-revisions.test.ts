// Both protocol revisions on the one /mcp endpoint: a 2026-07-28 client (the SDK v2 Client pinned to it) is
// served per request next to 2025-era clients with their MCP sessions, keeps its Python state by the handle a
// result gave it, and meets the same Host/Origin/token checks and the same answer to a broken body; the SDK's own
// checks of the 2026 headers answer a request whose headers disagree with its body.
import { after, afterEach, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import type { RunResult } from '../../src/engine/types';
import { startHttpMcpServer, type HttpMcpServer } from '../../src/mcp/http';
import { connectHttp, post } from '../support/http';
import { runPython, testStorageDir } from '../support/mcp';

const MODERN = '2026-07-28';

/** A 2026-07-28 request as the v2 Client sends it: the revision, who asks and what it can do, in its own _meta. */
function modernRequest(method: string, params: Record<string, unknown> = {}): string {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta } });
}

function modernHeaders(method: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'mcp-protocol-version': MODERN, 'mcp-method': method, ...extra };
}

function replyError(body: string): { code: number; message: string } {
  return (JSON.parse(body) as { error: { code: number; message: string } }).error;
}

describe('both protocol revisions over HTTP', () => {
  let engine: Engine;
  let server: HttpMcpServer;
  const closing: (() => Promise<unknown>)[] = [];

  async function connectModern(url: string, token: string): Promise<Client> {
    const client = new Client(
      { name: 'modern-http-test', version: '1' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    closing.push(() => client.close());
    return client;
  }

  /** run_python from the 2026 client, with progress asked for, so the answer comes as an SSE stream. */
  async function runModern(client: Client, args: Record<string, unknown>): Promise<RunResult & { handle?: string }> {
    const progress: unknown[] = [];
    const result = (await client.callTool(
      { name: 'run_python', arguments: args },
      {
        onprogress: (p) => progress.push(p),
      },
    )) as CallToolResult;
    assert.ok(progress.length > 0, 'the run reported progress on the stream');
    return result.structuredContent as unknown as RunResult & { handle?: string };
  }

  before(async () => {
    engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python' } });
    server = await startHttpMcpServer(engine);
  });
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((close) => close().catch(() => undefined)));
  });
  after(async () => {
    await server?.close();
    await engine?.dispose();
  });

  test('a 2026-07-28 client connects to the same /mcp and lists the tools', async () => {
    const client = await connectModern(server.url, server.token);
    assert.equal(client.getProtocolEra(), 'modern');
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === 'run_python'));
  });

  test('a 2025 client and a 2026 client side by side, each with its own Python state; the 2026 one keeps its by its handle', async () => {
    const legacy = await connectHttp(server.url, server.token);
    closing.push(() => legacy.client.close());
    const modern = await connectModern(server.url, server.token);

    assert.equal((await runPython(legacy.client, { code: 'x = "legacy"' })).result.success, true);
    const first = await runModern(modern, { code: 'x = "modern"\nprint("set", flush=True)' });
    assert.equal(first.stdout, 'set\n');
    assert.match(first.handle ?? '', /^h_/);

    const again = await runModern(modern, { code: 'print(x, flush=True)', handle: first.handle });
    assert.equal(again.stdout, 'modern\n');
    assert.equal((await runPython(legacy.client, { code: 'print(x)' })).result.stdout, 'legacy\n');
    const { tools } = await legacy.client.listTools();
    assert.ok(tools.some((tool) => tool.name === 'run_python'));
  });

  test('a 2026 client that abandons a call (its answer stream closes, the 2026 way to cancel) cancels the run', async () => {
    const client = await connectModern(server.url, server.token);
    const finished = new Promise<RunResult>((resolve) => {
      const listener = engine.onRunEvent((event) => {
        if (event.type !== 'finished') return;
        listener.dispose();
        resolve(event.result);
      });
    });
    const abandon = new AbortController();
    const call = client.callTool(
      { name: 'run_python', arguments: { code: 'import time\nprint("started", flush=True)\ntime.sleep(600)' } },
      { signal: abandon.signal, onprogress: () => abandon.abort() },
    );
    await assert.rejects(call);
    assert.equal((await finished).diagnostics?.error_type, 'CANCELLED');
  });

  test('a 2026 request without the token is refused with 401 and the challenge, and the client fails to connect', async () => {
    const reply = await post(server.url, modernHeaders('tools/list'), modernRequest('tools/list'));
    assert.equal(reply.status, 401);
    assert.match(String(reply.headers['www-authenticate']), /^Bearer realm="code-mode-python"/);
    const client = new Client({ name: 'no-token', version: '1' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(server.url))));
  });

  test('a 2026 request with a browser Origin is refused with 403 even with the token', async () => {
    const headers = modernHeaders('tools/list', {
      authorization: `Bearer ${server.token}`,
      origin: 'https://evil.example',
    });
    const reply = await post(server.url, headers, modernRequest('tools/list'));
    assert.equal(reply.status, 403);
  });

  test('a 2026 request whose Mcp-Method header disagrees with its body is refused with 400 and -32020', async () => {
    const headers = modernHeaders('tools/call', { authorization: `Bearer ${server.token}` });
    const reply = await post(server.url, headers, modernRequest('tools/list'));
    assert.equal(reply.status, 400, reply.body);
    assert.equal(replyError(reply.body).code, -32020);
  });

  test('a broken body gets the same answer whichever revision its headers claim', async () => {
    const broken = '{"jsonrpc": "2.0", "id": 1,';
    const authorization = `Bearer ${server.token}`;
    const legacy = await post(server.url, { authorization }, broken);
    const modern = await post(server.url, modernHeaders('tools/list', { authorization }), broken);
    assert.equal(legacy.status, 400);
    assert.equal(modern.status, 400);
    assert.deepEqual(JSON.parse(modern.body), JSON.parse(legacy.body));
    assert.equal(replyError(modern.body).code, -32700);
  });
});

describe('both protocol revisions over HTTP with shared sessions', () => {
  test('a 2026 client uses the Python sessions every client shares', async () => {
    const engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python' } });
    const server = await startHttpMcpServer(engine, { shareSessions: true });
    const legacy = await connectHttp(server.url, server.token);
    const modern = new Client(
      { name: 'modern-shared', version: '1' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    try {
      await modern.connect(
        new StreamableHTTPClientTransport(new URL(server.url), {
          requestInit: { headers: { authorization: `Bearer ${server.token}` } },
        }),
      );
      await runPython(legacy.client, { code: 'shared = 42' });
      const result = (await modern.callTool({
        name: 'run_python',
        arguments: { code: 'print(shared)' },
      })) as CallToolResult;
      assert.equal((result.structuredContent as unknown as RunResult).stdout, '42\n');
    } finally {
      await Promise.all([legacy.client.close(), modern.close()].map((closed) => closed.catch(() => undefined)));
      await server.close();
      await engine.dispose();
    }
  });
});
