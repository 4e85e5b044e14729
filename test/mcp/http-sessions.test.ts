// What an HTTP client's MCP session owns and how it ends: its own Python globals (unless sessions are shared), a
// run whose stream it dropped is cancelled, a stream it comes back for (Last-Event-ID) still brings the result,
// an idle session ends with its Python sessions freed, and past the cap of MCP sessions the least recently active
// idle one is evicted (its client told so by a 404) or, all being busy, a new one is refused with a 503; one
// client's leftover sessions never cost another client that is still there its Python state.
import { afterEach, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { createEngine, type EngineConfig, type Logger } from '../../src/engine/index';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { RunEvent, RunResult } from '../../src/engine/types';
import { startHttpMcpServer, type HttpMcpServer, type HttpMcpServerOptions } from '../../src/mcp/http';
import { connectHttp, initializeBody, post, sseRequest, until, type SseEvent } from '../support/http';
import { runPython, testStorageDir } from '../support/mcp';

describe('MCP sessions over HTTP', () => {
  let engine: Engine | undefined;
  let server: HttpMcpServer | undefined;
  const closing: (() => Promise<void>)[] = [];
  let logged: string[] = [];
  const log: Logger = {
    info: (m) => logged.push(m),
    warn: (m) => logged.push(`warning: ${m}`),
    error: (m) => logged.push(`error: ${m}`),
  };

  async function start(
    options: HttpMcpServerOptions = {},
    config: Partial<EngineConfig> = {},
  ): Promise<{ engine: Engine; server: HttpMcpServer }> {
    logged = [];
    engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python', ...config }, log });
    server = await startHttpMcpServer(engine, { log, ...options });
    return { engine, server };
  }

  async function connect(server: HttpMcpServer) {
    const connection = await connectHttp(server.url, server.token);
    closing.push(() => connection.client.close());
    return { ...connection, sessionId: connection.transport.sessionId! };
  }

  /** A session of raw requests, as a client that never listens and never ends it leaves behind. */
  async function rawSession(server: HttpMcpServer): Promise<string> {
    const reply = await post(server.url, { authorization: `Bearer ${server.token}` }, initializeBody);
    assert.equal(reply.status, 200, reply.body);
    return reply.headers['mcp-session-id'] as string;
  }

  function ping(server: HttpMcpServer, sessionId: string) {
    return post(
      server.url,
      { authorization: `Bearer ${server.token}`, 'mcp-session-id': sessionId },
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    );
  }

  /** The JSON-RPC error of a refusal. */
  function replyError(body: string): { code: number; message: string } {
    const reply = JSON.parse(body) as { jsonrpc: string; error: { code: number; message: string } };
    assert.equal(reply.jsonrpc, '2.0');
    return reply.error;
  }

  const gone = () => logged.filter((m) => m.includes('closed every connection without ending the session')).length;
  const evictions = () => logged.filter((m) => /MCP HTTP session \S+ ended: it was evicted/.test(m)).length;

  afterEach(async () => {
    await Promise.all(closing.splice(0).map((close) => close().catch(() => undefined)));
    await server?.close();
    await engine?.dispose();
  });

  test('two clients do not share globals; each still sees its own session name', async () => {
    const { server } = await start();
    const a = await connect(server);
    const b = await connect(server);
    assert.equal((await runPython(a.client, { code: 'x = 1' })).result.success, true);
    const { result } = await runPython(b.client, { code: 'print(x)' });
    assert.equal(result.success, false);
    assert.equal(result.diagnostics?.exception, 'NameError');
    assert.equal(result.session, 'default');
    assert.equal((await runPython(a.client, { code: 'print(x)' })).result.stdout, '1\n');
  });

  test('with shared sessions they do', async () => {
    const { server } = await start({ shareSessions: true });
    const a = await connect(server);
    const b = await connect(server);
    await runPython(a.client, { code: 'x = 1' });
    assert.equal((await runPython(b.client, { code: 'print(x)' })).result.stdout, '1\n');
  });

  test('a run whose response stream is dropped is cancelled after the grace period, freeing its session', async () => {
    const { engine, server } = await start({ resumeGraceMs: 100 });
    const client = await connect(server);
    const finished: RunResult[] = [];
    engine.onRunEvent((event: RunEvent) => event.type === 'finished' && finished.push(event.result));
    const call = toolCall(7, { code: 'import time\ntime.sleep(600)' });
    // Drop the stream once the run is under way (its first event, the priming one, has come).
    await sseRequest(server.url, { token: server.token, sessionId: client.sessionId }, { body: call }, () => true);
    await until(() => finished.length > 0, 'the dropped run finishes');
    assert.equal(finished[0]!.diagnostics?.error_type, 'CANCELLED');
    const next = await runPython(client.client, { code: 'print("free")' });
    assert.equal(next.result.stdout, 'free\n');
  });

  test('a client that comes back with Last-Event-ID gets the result of a run whose stream it lost', async () => {
    const { server } = await start();
    const client = await connect(server);
    const session = { token: server.token, sessionId: client.sessionId };
    let lastEventId: string | undefined;
    await sseRequest(
      server.url,
      session,
      { body: toolCall(8, { code: 'import time\ntime.sleep(0.5)\nprint("kept for you")' }) },
      (event) => {
        lastEventId = event.id;
        return true;
      },
    );
    assert.ok(lastEventId, 'the stream carries event ids');
    let response: { id?: number; result?: { structuredContent: RunResult } } | undefined;
    await sseRequest(server.url, session, { lastEventId }, (event: SseEvent) => {
      response = event.data ? JSON.parse(event.data) : undefined;
      return response?.id === 8;
    });
    assert.equal(response?.result?.structuredContent.stdout, 'kept for you\n');
    assert.equal(response?.result?.structuredContent.success, true);
  });

  test('an idle session ends: its Python sessions are freed and its id is no longer known (404)', async () => {
    const { engine, server } = await start({ sessionIdleMs: 300 });
    const client = await connect(server);
    await runPython(client.client, { code: 'x = 1' });
    await until(() => engine.describeSessions().length === 0, 'the idle session frees its Python session');
    const reply = await post(
      server.url,
      { authorization: `Bearer ${server.token}`, 'mcp-session-id': client.sessionId },
      JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    );
    assert.equal(reply.status, 404);
    assert.match(
      replyError(reply.body).message,
      /^Session expired: it ended after 0.3 s without a request, and its Python sessions with their variables ended with it; initialize/,
    );
  });

  test('initializes without DELETE stop at the cap: each new one evicts the least recently active idle session, which is told so by a 404', async () => {
    const { server } = await start({ maxHttpSessions: 4 });
    const ids: string[] = [];
    for (let i = 0; i < 14; i++) ids.push(await rawSession(server));
    assert.equal(evictions(), 10, logged.join('\n'));
    for (const id of ids.slice(0, 10)) {
      const reply = await ping(server, id);
      assert.equal(reply.status, 404, reply.body);
      const error = replyError(reply.body);
      assert.equal(error.code, -32001);
      assert.match(
        error.message,
        /^Session expired: it was evicted to make room for a new session \(at most 4 MCP sessions/,
      );
      assert.match(error.message, /initialize a new one$/);
    }
    for (const id of ids.slice(10)) assert.equal((await ping(server, id)).status, 200);
    // A session that is used again is active again: the next to go is the one idle longest.
    assert.equal((await ping(server, ids[10]!)).status, 200);
    await rawSession(server);
    assert.equal((await ping(server, ids[11]!)).status, 404);
    assert.equal((await ping(server, ids[10]!)).status, 200);
  });

  test('a client that still listens outlasts a flood of sessions left behind; evicted in its turn, its next call fails with the 404', async () => {
    const { server } = await start({ maxHttpSessions: 3 });
    const listener = await connect(server);
    await listener.listening;
    await runPython(listener.client, { code: 'x = 1' });
    for (let i = 0; i < 20; i++) await rawSession(server);
    assert.equal(evictions(), 18);
    assert.equal((await runPython(listener.client, { code: 'print(x)' })).result.stdout, '1\n');
  });

  test('among clients that all listen, the one idle longest is evicted, and its next call fails with the 404 that says why', async () => {
    const { server } = await start({ maxHttpSessions: 2 });
    const first = await connect(server);
    const second = await connect(server);
    await Promise.all([first.listening, second.listening]);
    await runPython(first.client, { code: 'x = 1' });
    await runPython(second.client, { code: 'y = 2' });
    await rawSession(server);
    assert.equal(evictions(), 1);
    await assert.rejects(first.client.listTools(), (error: Error & { code?: number }) => {
      assert.equal(error.code, 404);
      assert.match(error.message, /Session expired: it was evicted to make room for a new session/);
      return true;
    });
    assert.equal((await runPython(second.client, { code: 'print(y)' })).result.stdout, '2\n');
  });

  test('with every session busy a new one is refused with a 503 and a JSON-RPC error; nothing is evicted', async () => {
    const { engine, server } = await start({ maxHttpSessions: 3, resumeGraceMs: 600_000 });
    const release = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'http-cap-')), 'release');
    const waitForRelease = `import os, time\nwhile not os.path.exists(${JSON.stringify(release)}):\n    time.sleep(0.01)\nprint("released")`;
    // One busy with a request in flight, one with a run whose stream its client dropped (it may come back), one
    // with a run as a task (no request in flight for it).
    const inFlight = await connect(server);
    const call = runPython(inFlight.client, { code: waitForRelease });
    const tasking = await connect(server);
    await tasking.client.request(
      { method: 'tools/call', params: { name: 'run_python', arguments: { code: waitForRelease } } },
      CreateTaskResultSchema,
      { task: { ttl: 600_000 } },
    );
    const dropped = await rawSession(server);
    await sseRequest(
      server.url,
      { token: server.token, sessionId: dropped },
      { body: toolCall(3, { code: waitForRelease }) },
      () => true,
    );
    await until(
      () => engine.describeSessions().filter((s) => s.runningRunId !== undefined).length === 3,
      'the three runs are under way',
    );
    for (let i = 0; i < 3; i++) {
      const refused = await post(server.url, { authorization: `Bearer ${server.token}` }, initializeBody);
      assert.equal(refused.status, 503, refused.body);
      assert.equal(refused.headers['mcp-session-id'], undefined);
      const error = replyError(refused.body);
      assert.equal(error.code, -32000);
      assert.match(error.message, /all 3 MCP sessions this server keeps are busy/);
    }
    assert.equal(evictions(), 0);
    assert.equal(logged.filter((m) => /new sessions are refused: all 3 MCP sessions are busy/.test(m)).length, 1);

    fs.writeFileSync(release, '');
    assert.equal((await call).result.stdout, 'released\n');
    await rawSession(server);
    assert.equal(evictions(), 1);
  });

  test("leftover sessions of one client (closed without DELETE) never evict another client's live Python session", async () => {
    const { server } = await start({}, { maxSessions: 2 });
    const live = await connect(server);
    await live.listening;
    assert.equal((await runPython(live.client, { code: 'x = 41' })).result.success, true);
    const leftovers: string[] = [];
    for (let i = 1; i <= 5; i++) {
      // As LangChain's close(), mcp-remote or an Inspector CLI call leave theirs: the connection closes, no DELETE.
      const { client, transport, listening } = await connectHttp(server.url, server.token);
      await listening;
      assert.equal((await runPython(client, { code: `z = ${i}` })).result.success, true);
      leftovers.push(transport.sessionId!);
      await client.close();
      await until(() => gone() === i, 'the server sees the leftover client gone');
    }
    const { result } = await runPython(live.client, { code: 'print(x + 1)' });
    assert.equal(result.stdout, '42\n', JSON.stringify(result));
    assert.equal(result.session_reset, undefined);
    assert.ok(
      logged.some((m) => /it was the least recently used of a client that is gone/.test(m)),
      logged.join('\n'),
    );

    // A leftover that comes back is told its state was lost, and why.
    const back = await post(
      server.url,
      { authorization: `Bearer ${server.token}`, 'mcp-session-id': leftovers[0]! },
      toolCall(4, { code: 'print(z)' }),
    );
    const comeback = back.body
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map(
        (line) => JSON.parse(line.slice('data: '.length)) as { id?: number; result: { structuredContent: RunResult } },
      )
      .find((message) => message.id === 4)!.result.structuredContent;
    assert.equal(comeback.session_reset, true);
    assert.match(comeback.reset_reason!, /ended to make room .* a client that is gone/);
  });

  test('among clients that are all there, the one holding the most Python sessions gives one up', async () => {
    const { server } = await start({}, { maxSessions: 3 });
    const small = await connect(server);
    const big = await connect(server);
    await Promise.all([small.listening, big.listening]);
    await runPython(small.client, { code: 'x = 41' });
    await runPython(big.client, { code: 'a = 1', session: 'a' });
    await runPython(big.client, { code: 'b = 2', session: 'b' });
    const third = await runPython(big.client, { code: 'c = 3', session: 'c' });
    assert.equal(third.result.success, true);
    assert.equal((await runPython(small.client, { code: 'print(x + 1)' })).result.stdout, '42\n');
    const lost = await runPython(big.client, { code: 'print(a)', session: 'a' });
    assert.equal(lost.result.session_reset, true);
    assert.match(lost.result.reset_reason!, /the client that holds the most \(2\)/);
  });
});

function toolCall(id: number, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'run_python', arguments: args } });
}
