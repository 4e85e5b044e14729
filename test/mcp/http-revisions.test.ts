// Both protocol revisions on the one /mcp endpoint: a 2026-07-28 client (the SDK v2 Client pinned to it) is
// served per request next to 2025-era clients with their MCP sessions, keeps its Python state by the handle a
// result gave it, and meets the same Host/Origin/token checks and the same answer to a broken body; the SDK's own
// checks of the 2026 headers answer a request whose headers disagree with its body. A changed tool list reaches a
// 2026 client on its subscriptions/listen stream and a 2025 client on its session's, and the servers built per 2026
// request let go of the engine when their exchange ends.
import { after, afterEach, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport, type CallToolResult, type Tool } from '@modelcontextprotocol/client';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ToolBridge } from '../../src/engine/codemode/bridge';
import { Engine } from '../../src/engine/engine';
import { createEngine, silentLogger } from '../../src/engine/index';
import type { RunResult } from '../../src/engine/types';
import { startHttpMcpServer, type HttpMcpServer } from '../../src/mcp/http';
import { fakeBackend } from '../support/fakeBackend';
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

/** The listeners a method like `onStateChange` has handed out and not yet seen disposed, counted as they come and go. */
class LiveListeners {
  private live = 0;
  private readonly waiters = new Set<() => void>();

  get count(): number {
    return this.live;
  }

  /** Counts the subscriptions `target[method]` returns from now on. */
  track<T extends object>(target: T, method: keyof T): void {
    const subscribe = (target[method] as (listener: unknown) => { dispose(): void }).bind(target);
    (target as Record<keyof T, unknown>)[method] = (listener: unknown) => {
      const subscription = subscribe(listener);
      let disposed = false;
      this.live += 1;
      return {
        dispose: () => {
          subscription.dispose();
          if (disposed) return;
          disposed = true;
          this.live -= 1;
          for (const wake of [...this.waiters]) wake();
        },
      };
    };
  }

  /** Resolves once exactly `count` are live. */
  settled(count: number): Promise<void> {
    return new Promise((resolve) => {
      const look = () => {
        if (this.live !== count) return;
        this.waiters.delete(look);
        resolve();
      };
      this.waiters.add(look);
      look();
    });
  }
}

describe('a changed tool list over HTTP', () => {
  let engine: Engine;
  let bridge: ToolBridge;
  let server: HttpMcpServer;
  const listeners = new LiveListeners();
  const closing: (() => Promise<unknown>)[] = [];

  /** A 2026 client that asks for tools/list_changed: the SDK opens its subscriptions/listen stream as it connects. */
  async function connectListening(onChanged: (tools: Tool[]) => void): Promise<Client> {
    const client = new Client(
      { name: 'modern-listening', version: '1' },
      {
        versionNegotiation: { mode: { pin: MODERN } },
        listChanged: {
          tools: { debounceMs: 0, onChanged: (error, tools) => (error ? assert.fail(error) : onChanged(tools ?? [])) },
        },
      },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${server.token}` } },
      }),
    );
    closing.push(() => client.close());
    return client;
  }

  const runPythonHints = (tools: Tool[]) => {
    const { destructiveHint, openWorldHint } = tools.find((tool) => tool.name === 'run_python')?.annotations ?? {};
    return [destructiveHint, openWorldHint];
  };

  before(async () => {
    // No Python runs here: the workspace interpreter's being on or off is what changes the list.
    engine = new Engine({ backends: [fakeBackend(), { ...fakeBackend(), kind: 'python' }] });
    await engine.setBackendEnabled('python', false, 'off for the test');
    bridge = new ToolBridge(silentLogger);
    listeners.track(engine, 'onStateChange');
    listeners.track(bridge, 'onDidChange');
    server = await startHttpMcpServer(engine, { bridge });
  });
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((close) => close().catch(() => undefined)));
    await engine.setBackendEnabled('python', false, 'off for the test');
  });
  after(async () => {
    await server?.close();
    await engine?.dispose();
  });

  test('a 2026 client on its listen stream and a 2025 client in its session both hear that run_python now reaches outside', async () => {
    const legacy = await connectHttp(server.url, server.token);
    closing.push(async () => {
      await legacy.transport.terminateSession();
      await legacy.client.close();
    });
    await legacy.listening;
    const legacyHeard = new Promise<void>((resolve) =>
      legacy.client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    );
    let modernHeard!: (tools: Tool[]) => void;
    const refreshed = new Promise<Tool[]>((resolve) => (modernHeard = resolve));
    const modern = await connectListening((tools) => modernHeard(tools));
    assert.equal(modern.getProtocolEra(), 'modern');
    assert.equal(modern.autoOpenedSubscription?.honoredFilter.toolsListChanged, true);
    assert.deepEqual(runPythonHints((await modern.listTools()).tools), [false, false]);

    await engine.setBackendEnabled('python', true);
    assert.deepEqual(runPythonHints(await refreshed), [true, true]);
    await legacyHeard;
    assert.deepEqual(runPythonHints((await legacy.client.listTools()).tools as Tool[]), [true, true]);
  });

  // Each 2026 request gets a server of its own (createMcpHandler); each server follows the engine and the bridge
  // until it is closed. A leak would leave the count above the server's own and this test to time out.
  test(
    'the servers built per 2026 request, the one for the listen stream too, let go of the engine and the bridge',
    { timeout: 60_000 },
    async () => {
      // What the server itself keeps once the sessions of the test before have ended: its one watch of the tool list.
      await listeners.settled(2);
      for (let i = 0; i < 3; i++) {
        const client = await connectListening(() => undefined);
        for (let j = 0; j < 5; j++) await client.listTools();
        const run = (await client.callTool({ name: 'run_python', arguments: { code: 'x = 1' } })) as CallToolResult;
        assert.notEqual(run.isError, true, JSON.stringify(run.content));
        await client.close();
      }
      await listeners.settled(2);
    },
  );
});
