// What an HTTP client's MCP session owns and how it ends: its own Python globals (unless sessions are shared), a
// run whose stream it dropped is cancelled, a stream it comes back for (Last-Event-ID) still brings the result,
// and an idle session ends with its Python sessions freed.
import { afterEach, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import type { RunEvent, RunResult } from '../../src/engine/types';
import { startHttpMcpServer, type HttpMcpServer, type HttpMcpServerOptions } from '../../src/mcp/http';
import { connectHttp, post, sseRequest, until, type SseEvent } from '../support/http';
import { runPython, testStorageDir } from '../support/mcp';

describe('MCP sessions over HTTP', () => {
  let engine: Engine | undefined;
  let server: HttpMcpServer | undefined;
  const closing: (() => Promise<void>)[] = [];

  async function start(options: HttpMcpServerOptions = {}): Promise<{ engine: Engine; server: HttpMcpServer }> {
    engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python' } });
    server = await startHttpMcpServer(engine, options);
    return { engine, server };
  }

  async function connect(server: HttpMcpServer) {
    const connection = await connectHttp(server.url, server.token);
    closing.push(() => connection.client.close());
    return { ...connection, sessionId: connection.transport.sessionId! };
  }

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
  });
});

function toolCall(id: number, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'run_python', arguments: args } });
}
