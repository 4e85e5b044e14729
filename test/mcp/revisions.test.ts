// Protocol revision 2026-07-28 over stdio, served by the built CLI next to 2025-11-25: the SDK v2 Client pinned to
// 2026-07-28 connects, lists and calls the tools, keeps its Python state for the connection and answers input();
// a 2025 client on the SDK v1 still connects to the same build; and hand-built 2026 requests show the wire facts the
// Client consumes (resultType, the cache fields, the server's identity in `_meta`) and the per-request log level.
import { after, before, describe, it } from 'node:test';
import * as assert from 'node:assert/strict';
import { ProtocolError, type CallToolResult, type ListToolsResult } from '@modelcontextprotocol/client';
import type { RunResult } from '../../src/engine/types';
import { TOOL_NAMES } from '../../src/mcp/toolNames';
import { PRODUCT_VERSION } from '../../src/version';
import { connectStdio, runPython, type StdioConnection } from '../support/mcp';
import {
  connectModern,
  lastSentId,
  META,
  MODERN_REVISION,
  ModernRawStdio,
  type Frame,
  type ModernConnection,
} from '../support/modernClient';

const INVALID_PARAMS = -32602;

/** What a 2026-07-28 result must carry on the wire besides its own fields. */
function assertModernResult(frame: Frame, what: string): Record<string, unknown> {
  assert.ok(frame.result, `${what} is a result: ${JSON.stringify(frame.error ?? frame)}`);
  assert.equal(frame.result.resultType, 'complete', `${what}: resultType`);
  const serverInfo = frame.result._meta?.[META.serverInfo] as { name?: string; version?: string } | undefined;
  assert.equal(serverInfo?.name, 'code-mode-python', `${what}: _meta serverInfo ${JSON.stringify(frame.result._meta)}`);
  assert.equal(serverInfo?.version, PRODUCT_VERSION, `${what}: _meta serverInfo version`);
  return frame.result;
}

const names = (list: { tools: { name: string }[] }) => list.tools.map((tool) => tool.name);

describe('protocol revision 2026-07-28 over stdio, with the SDK v2 client (and 2025 beside it)', () => {
  // The 2026 connection is awaited by each test that needs it, so a refused connect fails those tests with the
  // SDK's reason while the 2025 client's tests still run.
  let connecting: Promise<ModernConnection>;
  let legacy: StdioConnection | undefined;
  const questions: string[] = [];
  const modern = () => connecting;
  const runModern = async (args: Record<string, unknown>): Promise<{ result: RunResult; raw: CallToolResult }> => {
    const { client } = await modern();
    const raw = await client.callTool({ name: 'run_python', arguments: args }, { timeout: 120_000 });
    return { result: raw.structuredContent as unknown as RunResult, raw };
  };

  before(async () => {
    connecting = connectModern({
      capabilities: { elicitation: {} },
      onElicit: (request) => {
        questions.push(request.params.message);
        // Answers the one field the server asks for, whatever it calls it.
        const schema = (request.params as { requestedSchema?: { properties?: object; required?: string[] } })
          .requestedSchema;
        const field = schema?.required?.[0] ?? Object.keys(schema?.properties ?? {})[0] ?? 'answer';
        return { action: 'accept', content: { [field]: 'Ada' } };
      },
    });
    // Kept from rejecting unobserved: each test awaits it and fails with its reason.
    connecting.catch(() => undefined);
    legacy = await connectStdio();
  });
  after(async () => {
    await (await connecting.catch(() => undefined))?.close();
    await legacy?.close();
  });

  it('connects pinned to 2026-07-28: the era is modern and the server names itself code-mode-python', async () => {
    const { client } = await modern();
    assert.equal(client.getProtocolEra(), 'modern');
    const server = client.getServerVersion();
    assert.equal(server?.name, 'code-mode-python');
    assert.equal(server?.version, PRODUCT_VERSION);
    assert.ok(
      client.getDiscoverResult()?.supportedVersions.includes(MODERN_REVISION),
      JSON.stringify(client.getDiscoverResult()),
    );
  });

  it('tools/list: every tool, in one order on every call and on both revisions; the cache fields on the wire', async () => {
    const { client, received, sent } = await modern();
    const first = await client.listTools(undefined, { cacheMode: 'refresh' });
    const firstId = lastSentId(sent, 'tools/list');
    const second = await client.listTools(undefined, { cacheMode: 'refresh' });
    const secondId = lastSentId(sent, 'tools/list');
    assert.notEqual(firstId, secondId, 'both lists were asked of the server, not served from the cache');
    assert.deepEqual([...names(first)].sort(), [...TOOL_NAMES].sort());
    assert.deepEqual(names(second), names(first));
    assert.ok(legacy, 'the 2025 client connected');
    const legacyList = await legacy.client.listTools();
    assert.deepEqual(names(legacyList), names(first), 'the 2025 list has the same order');
    for (const tool of first.tools) {
      const old = legacyList.tools.find((t) => t.name === tool.name);
      assert.deepEqual(tool.inputSchema, old?.inputSchema, `${tool.name}'s inputSchema is the same on both revisions`);
    }
    for (const id of [firstId, secondId]) {
      const result = assertModernResult(await received.answerTo(id), 'tools/list');
      assert.deepEqual(names(result as unknown as ListToolsResult), names(first), 'the wire order is the order');
      assert.equal(typeof result.ttlMs, 'number', `ttlMs: ${JSON.stringify(result.ttlMs)}`);
      assert.ok((result.ttlMs as number) >= 0, `ttlMs: ${String(result.ttlMs)}`);
      assert.ok(
        ['public', 'private'].includes(result.cacheScope as string),
        `cacheScope: ${String(result.cacheScope)}`,
      );
    }
  });

  it('run_python keeps its variables between calls of one connection, with no handle passed', async () => {
    const { received, sent } = await modern();
    const set = await runModern({ code: 'x = 41' });
    assert.equal(set.result.success, true, JSON.stringify(set.result.diagnostics));
    const { result, raw } = await runModern({ code: 'x + 1' });
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.deepEqual(result.outputs, [{ type: 'execute_result', text: '42' }]);
    assert.equal(result.session, set.result.session);
    assert.equal(result.backend, 'pyodide');
    assert.equal(raw.isError, false);
    // A stdio connection is the session: no handle is minted for the client to pass back.
    for (const answer of [set.result, result]) assert.ok(!('handle' in answer), JSON.stringify(answer));
    const frame = await received.answerTo(lastSentId(sent, 'tools/call', 'run_python'));
    const wire = assertModernResult(frame, 'tools/call run_python');
    assert.deepEqual((wire.structuredContent as RunResult).outputs, result.outputs);
  });

  it('an unknown tool is a JSON-RPC error -32602; a bad argument of a known tool is a tool result with isError', async () => {
    const { client, received, sent } = await modern();
    const error = await client.callTool({ name: 'no_such_tool', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof ProtocolError, String(error));
    assert.equal(error.code, INVALID_PARAMS);
    assert.match(error.message, /no_such_tool/);
    const unknownAnswer = await received.answerTo(lastSentId(sent, 'tools/call', 'no_such_tool'));
    assert.equal(unknownAnswer.error?.code, INVALID_PARAMS, `the server answered it: ${JSON.stringify(unknownAnswer)}`);

    const bad = await client.callTool({ name: 'run_python', arguments: { code: 'print(1)', timeout_s: 'x' } });
    assert.equal(bad.isError, true, JSON.stringify(bad));
    assert.match(JSON.stringify(bad.content), /timeout_s/);
    const badAnswer = assertModernResult(
      await received.answerTo(lastSentId(sent, 'tools/call', 'run_python')),
      'tools/call with a bad argument',
    );
    assert.equal(badAnswer.isError, true);
  });

  it('a 2025 client on the SDK v1 still connects to the same build and runs code', async () => {
    assert.ok(legacy, 'the 2025 client connected');
    assert.equal(legacy.client.getServerVersion()?.name, 'code-mode-python');
    const { result } = await runPython(legacy.client, { code: 'print(6 * 7)' });
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(result.stdout, '42\n');
  });

  it('input() asks a 2026 client that declared elicitation, in an input_required result, and its answer reaches Python', async () => {
    const { received, sent } = await modern();
    questions.length = 0;
    const [sentBefore, receivedBefore] = [sent.length, received.frames.length];
    const { result } = await runModern({ code: 'name = input("name? ")\nprint("hello", name)' });
    assert.equal(result.stdout, 'name? Ada\nhello Ada\n', JSON.stringify(result.diagnostics));
    assert.deepEqual(questions, ['name?']);
    // On the wire: the call is answered input_required with the question; the SDK retries it with the answer and
    // the state as given, and the retry gets the run's result. The server sent no request of its own (2026 has none).
    const calls = sent.slice(sentBefore).filter((frame) => frame.method === 'tools/call');
    assert.equal(calls.length, 2, `the call and one retry: ${JSON.stringify(calls)}`);
    const first = await received.answerTo(calls[0].id!);
    const asked = first.result;
    assert.ok(asked, JSON.stringify(first));
    assert.equal(asked.resultType, 'input_required', JSON.stringify(asked));
    const inputRequests = Object.entries(asked.inputRequests as Record<string, { method: string; params: Frame }>);
    assert.deepEqual(
      inputRequests.map(([, request]) => [request.method, request.params.message]),
      [['elicitation/create', 'name?']],
    );
    const retry = calls[1].params as { inputResponses?: Record<string, unknown>; requestState?: unknown };
    assert.deepEqual(Object.keys(retry.inputResponses ?? {}), [inputRequests[0][0]]);
    assert.equal(retry.requestState, asked.requestState);
    assertModernResult(await received.answerTo(calls[1].id!), 'the retried call');
    const fromServer = received.frames
      .slice(receivedBefore)
      .filter((f) => f.method !== undefined && f.id !== undefined);
    assert.deepEqual(fromServer, []);
  });
});

describe('hand-built 2026-07-28 requests over stdio: what is on the wire', () => {
  let raw: ModernRawStdio;
  const runArgs = (session: string) => ({
    name: 'run_python',
    arguments: { code: 'x = 1', reset: true, session },
  });
  const runResult = (frame: Frame) => assertModernResult(frame, 'run_python').structuredContent as RunResult;

  before(() => {
    raw = ModernRawStdio.start();
  });
  after(async () => {
    await raw?.close();
  });

  it('server/discover offers 2026-07-28, as a complete result that names the server', async () => {
    const discover = assertModernResult(await raw.request('server/discover'), 'server/discover');
    assert.ok((discover.supportedVersions as string[]).includes(MODERN_REVISION), JSON.stringify(discover));
    assert.ok(discover.capabilities && typeof discover.capabilities === 'object', JSON.stringify(discover));
    assert.ok((discover.capabilities as Record<string, unknown>).tools, 'tools are offered');
  });

  it('a run logs to the client only when its request asks for a log level, and only at that level or above', async () => {
    // The asked-for reset is logged at info: no level asked, and warning asked, hear nothing; info hears it.
    const silent = runResult(await raw.request('tools/call', runArgs('log-none')));
    const warningOnly = runResult(
      await raw.request('tools/call', runArgs('log-warning'), { [META.logLevel]: 'warning' }),
    );
    const told = runResult(await raw.request('tools/call', runArgs('log-info'), { [META.logLevel]: 'info' }));
    for (const run of [silent, warningOnly, told]) {
      assert.equal(run.success, true, JSON.stringify(run.diagnostics));
      assert.equal(run.session_reset, true, `${run.session}: the run did reset its session`);
    }
    // Anything the three runs logged was written before the answer to a request sent after them.
    const barrier = await raw.request('tools/list');
    const logs = raw.received
      .before(barrier)
      .filter((frame) => frame.method === 'notifications/message')
      .map((frame) => frame.params as { level: string; logger?: string; data: { event?: string; run_id?: string } });
    const resets = logs.filter((log) => log.data.event === 'session_reset');
    assert.deepEqual(
      resets.map((log) => log.data.run_id),
      [told.run_id],
      `only the run that asked for info was told: ${JSON.stringify(logs)}`,
    );
    assert.equal(resets[0].level, 'info');
    assert.equal(resets[0].logger, 'code-mode-python');
  });
});
