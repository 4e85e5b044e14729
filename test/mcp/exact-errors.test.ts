// The MCP layer answers as JSON-RPC and the spec say, the same over stdio and over HTTP: invalid params inside a
// known method are -32602 with the request's id and a short message (never -32603 with a zod dump), an envelope
// error keeps its id, batches are refused on both, an error message carries no "MCP error" prefix of its own
// (the client's SDK adds one), and tasks answer what happened to them.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { startHttpMcpServer, type HttpMcpServer } from '../../src/mcp/http';
import { initializeBody } from '../support/http';
import { testStorageDir } from '../support/mcp';
import { RawStdioServer, type RawMessage } from '../support/rawStdio';

interface Case {
  name: string;
  message: Record<string, unknown> | unknown[];
  code: number;
  id: unknown;
}

const cases: Case[] = [
  {
    name: 'tools/call with arguments "x"',
    message: { jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'run_python', arguments: 'x' } },
    code: -32602,
    id: 21,
  },
  {
    name: 'tools/call without a name',
    message: { jsonrpc: '2.0', id: 22, method: 'tools/call', params: { arguments: {} } },
    code: -32602,
    id: 22,
  },
  {
    name: 'logging/setLevel with an unknown level',
    message: { jsonrpc: '2.0', id: 23, method: 'logging/setLevel', params: { level: 'loud' } },
    code: -32602,
    id: 23,
  },
  {
    name: 'tasks/get with a numeric id',
    message: { jsonrpc: '2.0', id: 24, method: 'tasks/get', params: { taskId: 5 } },
    code: -32602,
    id: 24,
  },
  {
    name: 'tasks/get of a task that does not exist',
    message: { jsonrpc: '2.0', id: 25, method: 'tasks/get', params: { taskId: 'no-such-task' } },
    code: -32602,
    id: 25,
  },
  {
    name: 'params as an array',
    message: { jsonrpc: '2.0', id: 26, method: 'tools/list', params: [1, 2] },
    code: -32602,
    id: 26,
  },
  { name: 'a request missing "jsonrpc"', message: { id: 27, method: 'tools/list' }, code: -32600, id: 27 },
  { name: 'a batch', message: [{ jsonrpc: '2.0', id: 28, method: 'tools/list' }], code: -32600, id: null },
];

/** What every answer to a broken request must be: the right code and id, and a message a person can read. */
function assertExactError(answer: RawMessage, expected: Case): void {
  assert.equal(answer.jsonrpc, '2.0');
  assert.equal(answer.id, expected.id, JSON.stringify(answer));
  assert.equal(answer.error?.code, expected.code, JSON.stringify(answer));
  const message = answer.error?.message ?? '';
  assert.ok(message.length > 0 && message.length < 400, `a short message, not a dump: ${message}`);
  assert.doesNotMatch(message, /^MCP error/, 'the client adds the "MCP error" prefix itself');
  assert.doesNotMatch(message, /"code":|\[\n/, 'no raw zod issues');
}

describe('stdio: errors inside known methods are exact', () => {
  let server: RawStdioServer;
  before(async () => {
    server = await RawStdioServer.start(['--backend', 'python']);
  });
  after(() => server?.kill());

  for (const expected of cases) {
    test(`${expected.name} → ${expected.code}`, async () => {
      server.write(`${JSON.stringify(expected.message)}\n`);
      assertExactError(await server.answerTo(expected.id), expected);
      const next = await server.request(`after-${expected.name}`, 'tools/list');
      assert.ok('result' in next, 'the server keeps serving');
    });
  }
});

describe('HTTP: the same errors as over stdio', () => {
  let engine: Engine;
  let server: HttpMcpServer;
  let sessionId: string;

  /** POSTs one message in the session; the answer comes as JSON (refused before the SDK) or as one SSE event. */
  function ask(message: unknown): Promise<{ status: number; answer: RawMessage }> {
    return new Promise((resolve, reject) => {
      const headers = {
        authorization: `Bearer ${server.token}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      };
      const req = http.request(server.url, { method: 'POST', headers }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          const json = res.headers['content-type']?.includes('text/event-stream')
            ? text
                .split('\n')
                .find((line) => line.startsWith('data:'))
                ?.slice(5)
            : text;
          try {
            resolve({ status: res.statusCode ?? 0, answer: JSON.parse(json ?? '') as RawMessage });
          } catch {
            reject(new Error(`HTTP ${res.statusCode}: not a JSON-RPC answer: ${text}`));
          }
        });
      });
      req.on('error', reject);
      req.end(JSON.stringify(message));
    });
  }

  before(async () => {
    engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python' } });
    server = await startHttpMcpServer(engine);
    const init = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        server.url,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${server.token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.headers['mcp-session-id'])));
        },
      );
      req.on('error', reject);
      req.end(initializeBody);
    });
    sessionId = init;
    await ask({ jsonrpc: '2.0', method: 'notifications/initialized' }).catch(() => undefined);
  });
  after(async () => {
    await server?.close();
    await engine?.dispose();
  });

  for (const expected of cases) {
    test(`${expected.name} → ${expected.code}`, async () => {
      const { answer } = await ask(expected.message);
      assertExactError(answer, expected);
      const { answer: next } = await ask({ jsonrpc: '2.0', id: `after-${expected.name}`, method: 'tools/list' });
      assert.ok('result' in next, 'the session keeps serving');
    });
  }
});

describe('tasks and input() over stdio answer what happened', () => {
  let server: RawStdioServer;
  before(async () => {
    server = await RawStdioServer.start(['--backend', 'python'], { elicitation: {} });
  });
  after(() => server?.kill());

  async function startTask(id: number, code: string): Promise<string> {
    const answer = await server.request(id, 'tools/call', {
      name: 'run_python',
      arguments: { code, timeout_s: 120 },
      task: { ttl: 600_000 },
    });
    const taskId = (answer.result as { task?: { taskId?: string } } | undefined)?.task?.taskId;
    assert.ok(taskId, JSON.stringify(answer));
    return taskId;
  }

  async function taskStatus(id: string, taskId: string): Promise<string> {
    const answer = await server.request(id, 'tasks/get', { taskId });
    return String((answer.result as { status?: string }).status);
  }

  test('tasks/result of a cancelled task is -32602 saying it was cancelled', async () => {
    const taskId = await startTask(31, 'import time\ntime.sleep(600)');
    const cancelled = await server.request(32, 'tasks/cancel', { taskId });
    assert.ok('result' in cancelled, JSON.stringify(cancelled));
    const answer = await server.request(33, 'tasks/result', { taskId });
    assertExactError(answer, { name: 'cancelled', message: {}, code: -32602, id: 33 });
    assert.match(answer.error?.message ?? '', /was cancelled/);
  });

  test('a task waiting on input() reports input_required, then works on once answered', async () => {
    const taskId = await startTask(41, 'name = input("name? ")\nprint("hello", name)');
    const question = await server.requestFromServer('elicitation/create');
    assert.equal(await taskStatus('41-status', taskId), 'input_required');
    server.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { answer: 'Ada' } } })}\n`,
    );
    for (let status = 'input_required'; status !== 'completed';) {
      status = await taskStatus(`41-poll-${Date.now()}`, taskId);
      assert.ok(['input_required', 'working', 'completed'].includes(status), status);
      if (status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const result = await server.request(42, 'tasks/result', { taskId });
    assert.match(JSON.stringify(result.result), /hello Ada/);
  });

  test('a declined input() says it was declined, and the answered question is not cancelled afterwards', async () => {
    server.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 51, method: 'tools/call', params: { name: 'run_python', arguments: { code: 'input("name? ")' } } })}\n`,
    );
    const question = await server.requestFromServer('elicitation/create');
    server.write(`${JSON.stringify({ jsonrpc: '2.0', id: question.id, result: { action: 'decline' } })}\n`);
    const answer = await server.answerTo(51);
    const structured = (
      answer.result as { structuredContent?: { diagnostics?: { exception?: string; message?: string } } }
    ).structuredContent;
    assert.equal(structured?.diagnostics?.exception, 'EOFError');
    assert.match(structured?.diagnostics?.message ?? '', /declined/);
    const next = await server.request(52, 'tools/list');
    assert.ok('result' in next);
    const cancels = server.arrived.filter(
      (m) => m.method === 'notifications/cancelled' && (m.params as { requestId?: unknown }).requestId === question.id,
    );
    assert.deepEqual(cancels, [], 'no cancellation for a question the client answered');
  });
});
