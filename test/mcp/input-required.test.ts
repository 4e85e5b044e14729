// Questions in the middle of a run for 2026-07-28 clients: the call answers input_required with a sealed
// requestState while the program waits, paused; the retry with the answer resumes that same program. Driven through
// the SDK's own 2026 HTTP entry (createMcpHandler) in process, with hand-built requests where the wire matters and
// with the SDK's v2 client (which answers input_required itself) where it does not.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { Engine } from '../../src/engine/engine';
import { createEngine, FileSettings, silentLogger } from '../../src/engine/index';
import { PausedCalls } from '../../src/mcp/pausedCalls';
import { TaskExtension } from '../../src/mcp/taskExtension';
import { createMcpServer } from '../../src/mcp/server';
import { httpServerForSuite } from '../support/http';
import { testStorageDir } from '../support/mcp';
import { MODERN_REVISION as REVISION, sendModern } from '../support/modernRequest';

const URL_ = 'http://in-process.test/mcp';

interface Answer {
  result?: Record<string, unknown> & { resultType?: string; requestState?: string; inputRequests?: object };
  error?: { code: number; message: string };
}

/** One hand-built 2026 tools/call of run_python; `retry` carries the answer and the state of a round. */
async function call(
  handler: McpHttpHandler,
  id: number,
  code: string,
  retry?: { requestState: string; answer?: Record<string, unknown> },
): Promise<Answer> {
  const params: Record<string, unknown> = { name: 'run_python', arguments: { code } };
  if (retry) {
    params.requestState = retry.requestState;
    if (retry.answer) params.inputResponses = { answer: { action: 'accept', content: retry.answer } };
  }
  return request(handler, id, 'tools/call', params);
}

/** One hand-built 2026 request; `capabilities` are the client's, declared with it. */
function request(
  handler: McpHttpHandler,
  id: number,
  method: string,
  params: Record<string, unknown>,
  capabilities: object = { elicitation: { form: {} } },
): Promise<Answer> {
  return sendModern<Answer>(handler, id, method, params, { capabilities, clientName: 'input-required-test' });
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function stdoutOf(answer: Answer): string {
  return (answer.result?.structuredContent as { stdout: string }).stdout;
}

describe('2026-07-28: a question mid-run pauses the program until the retry answers it', () => {
  let engine: Engine;
  let paused: PausedCalls;
  let handler: McpHttpHandler;

  before(() => {
    engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python' } });
    paused = new PausedCalls({ answerWaitMs: 10 * 60_000 });
    handler = createMcpHandler(() => createMcpServer(engine, { sessionScope: 'input-required', pausedCalls: paused }), {
      legacy: 'reject',
    });
  });
  after(async () => {
    paused.close();
    await handler.close();
    await engine.dispose();
  });

  test('two questions, two rounds, one program: its variables and output run on across them', async () => {
    const code = 'x = 40\na = input("first? ")\nb = input("second? ")\nprint(a, b, x + 2)';
    const first = await call(handler, 1, code);
    assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
    assert.match(JSON.stringify(first.result?.inputRequests), /first\?/);
    const second = await call(handler, 2, code, {
      requestState: first.result!.requestState!,
      answer: { answer: 'Ada' },
    });
    assert.equal(second.result?.resultType, 'input_required', JSON.stringify(second));
    assert.match(JSON.stringify(second.result?.inputRequests), /second\?/);
    assert.notEqual(second.result?.requestState, first.result?.requestState);
    const done = await call(handler, 3, code, {
      requestState: second.result!.requestState!,
      answer: { answer: 'Lovelace' },
    });
    assert.equal(done.result?.resultType, 'complete', JSON.stringify(done));
    assert.equal(stdoutOf(done), 'first? Ada\nsecond? Lovelace\nAda Lovelace 42\n');
    assert.equal(paused.size, 0, 'the call is forgotten once it ends');
  });

  test('a forged, a replayed and a borrowed requestState are refused with -32602, and the paused run goes on', async () => {
    const code = 'name = input("name? ")\nprint("hello", name)';
    const first = await call(handler, 10, code);
    const state = first.result!.requestState!;

    const forged = await call(handler, 11, code, {
      requestState: `${state.slice(0, -4)}AAAA`,
      answer: { answer: 'x' },
    });
    assert.equal(forged.error?.code, -32602, JSON.stringify(forged));
    // The same state with other arguments: bound to the call it was minted for.
    const borrowed = await call(handler, 12, 'print("other")', { requestState: state, answer: { answer: 'x' } });
    assert.equal(borrowed.error?.code, -32602, JSON.stringify(borrowed));
    assert.equal(paused.size, 1, 'the refused retries changed nothing');

    const done = await call(handler, 13, code, { requestState: state, answer: { answer: 'Grace' } });
    assert.equal(stdoutOf(done), 'name? Grace\nhello Grace\n');
    const replayed = await call(handler, 14, code, { requestState: state, answer: { answer: 'again' } });
    assert.equal(replayed.error?.code, -32602, JSON.stringify(replayed));
  });

  test('a retry without the answer asks the same question again', async () => {
    const code = 'print(input("colour? "))';
    const first = await call(handler, 20, code);
    const again = await call(handler, 21, code, { requestState: first.result!.requestState! });
    assert.equal(again.result?.resultType, 'input_required');
    assert.match(JSON.stringify(again.result?.inputRequests), /colour\?/);
    const done = await call(handler, 22, code, {
      requestState: again.result!.requestState!,
      answer: { answer: 'teal' },
    });
    assert.equal(stdoutOf(done), 'colour? teal\nteal\n');
  });

  test("the SDK's 2026 client answers the rounds by itself", async () => {
    const client = new Client(
      { name: 'input-required-client', version: '1' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: REVISION } } },
    );
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { answer: `answer ${asked.length}` } };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(URL_), { fetch: (url, init) => handler.fetch(new Request(url, init)) }),
    );
    try {
      const result = await client.callTool({
        name: 'run_python',
        arguments: { code: 'print(input("one? "), input("two? "))' },
      });
      assert.equal(
        (result.structuredContent as { stdout: string }).stdout,
        'one? answer 1\ntwo? answer 2\nanswer 1 answer 2\n',
      );
      assert.deepEqual(asked, ['one?', 'two?']);
    } finally {
      await client.close();
    }
  });
});

describe('2026-07-28: a retry that never comes stops the run, and the session hears of it', () => {
  let engine: Engine;
  let paused: PausedCalls;
  let handler: McpHttpHandler;

  before(() => {
    engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python' } });
    // Short, so the test does not wait long for the expiry; nothing below depends on how long it is.
    paused = new PausedCalls({ answerWaitMs: 200 });
    handler = createMcpHandler(() => createMcpServer(engine, { sessionScope: 'abandoned', pausedCalls: paused }), {
      legacy: 'reject',
    });
  });
  after(async () => {
    paused.close();
    await handler.close();
    await engine.dispose();
  });

  test("the session's next run says the earlier one was stopped, and keeps its variables", async () => {
    const first = await call(handler, 1, 'kept = 7\nanswer = input("anyone? ")');
    assert.equal(first.result?.resultType, 'input_required');
    // The session runs one program at a time: this run starts once the paused one was stopped.
    const next = await call(handler, 2, 'print(kept)');
    assert.equal(stdoutOf(next), '7\n');
    const notice = (next.result?.structuredContent as { notice?: string }).notice;
    assert.match(notice ?? '', /was stopped before its result was read \(no answer came/);
    const replayed = await call(handler, 3, 'kept = 7\nanswer = input("anyone? ")', {
      requestState: first.result!.requestState!,
      answer: { answer: 'late' },
    });
    assert.equal(replayed.error?.code, -32602, 'the state of a stopped run is refused');
    const after = await call(handler, 4, 'print("quiet")');
    assert.equal((after.result?.structuredContent as { notice?: string }).notice, undefined, 'told once');
  });
});

describe('2026-07-28 over the HTTP server: a paused run outlives the server of the request that started it', () => {
  // With settings, so the server offers `environment` too.
  const suite = httpServerForSuite((engine) => ({
    settings: new FileSettings(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-settings-')), engine, silentLogger),
  }));

  test('input() across rounds, each a request of its own, in the session its handle names', async () => {
    const client = new Client(
      { name: 'input-required-http', version: '1' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: REVISION } } },
    );
    client.setRequestHandler('elicitation/create', async (request) => ({
      action: 'accept',
      content: { answer: request.params.message === 'first?' ? 'Ada' : 'Lovelace' },
    }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(suite.server().url), {
        requestInit: { headers: { authorization: `Bearer ${suite.server().token}` } },
      }),
    );
    try {
      const first = await client.callTool({
        name: 'run_python',
        arguments: { code: 'a = input("first? ")\nb = input("second? ")\nprint(a, b)' },
      });
      const result = first.structuredContent as { stdout: string; handle: string };
      assert.equal(result.stdout, 'first? Ada\nsecond? Lovelace\nAda Lovelace\n');
      const next = await client.callTool({ name: 'run_python', arguments: { code: 'a + b', handle: result.handle } });
      assert.match(JSON.stringify(next.content), /AdaLovelace/);
      // environment lists the sessions of the handle it is given, and none without one.
      const sessionsOf = async (args: Record<string, unknown>) =>
        ((await client.callTool({ name: 'environment', arguments: args })).structuredContent as { sessions: unknown[] })
          .sessions;
      assert.deepEqual(
        (await sessionsOf({ handle: result.handle })).map((s) => (s as { name: string }).name),
        ['default'],
      );
      assert.deepEqual(await sessionsOf({}), []);
      const unknown = await client.callTool({ name: 'environment', arguments: { handle: `h_${'A'.repeat(32)}` } });
      assert.equal(unknown.isError, true);
    } finally {
      await client.close();
    }
  });
});

describe('2026-07-28: a client that declared the tasks extension gets a task for a run and polls it', () => {
  let engine: Engine;
  let tasks: TaskExtension;
  let handler: McpHttpHandler;
  const declaring = { elicitation: { form: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } };

  before(() => {
    engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python' } });
    // Every call a task at once: what a run longer than the grace gets, without a run that long.
    tasks = new TaskExtension({ graceMs: 0 });
    handler = createMcpHandler(() => createMcpServer(engine, { sessionScope: 'tasks-2026', taskExtension: tasks }), {
      legacy: 'reject',
    });
  });
  after(async () => {
    tasks.close();
    await handler.close();
    await engine.dispose();
  });

  test('run_python answers with a task; tasks/get polls it to its result; tasks/update answers its input()', async () => {
    const args = { name: 'run_python', arguments: { code: 'print("hello", input("who? "))' } };
    const created = await request(handler, 1, 'tools/call', args, declaring);
    assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
    const taskId = created.result!.taskId as string;
    let polled = await request(handler, 2, 'tasks/get', { taskId }, declaring);
    for (let id = 3; polled.result?.status === 'working'; id++) {
      // In process, a request never leaves the microtask queue: the run's I/O gets its turn between polls.
      await nextTurn();
      polled = await request(handler, id, 'tasks/get', { taskId }, declaring);
    }
    assert.equal(polled.result?.status, 'input_required', JSON.stringify(polled));
    const [key] = Object.keys(polled.result!.inputRequests as object);
    const updated = await request(
      handler,
      100,
      'tasks/update',
      { taskId, inputResponses: { [key!]: { action: 'accept', content: { answer: 'Ada' } } } },
      declaring,
    );
    assert.equal(updated.error, undefined, JSON.stringify(updated));
    polled = await request(handler, 101, 'tasks/get', { taskId }, declaring);
    for (let id = 102; polled.result?.status !== 'completed'; id++) {
      assert.ok(['working', 'input_required'].includes(String(polled.result?.status)), JSON.stringify(polled));
      await nextTurn();
      polled = await request(handler, id, 'tasks/get', { taskId }, declaring);
    }
    const result = polled.result!.result as { structuredContent: { stdout: string } };
    assert.equal(result.structuredContent.stdout, 'who? Ada\nhello Ada\n');
  });

  test('a client that did not declare it gets the plain result, and no task', async () => {
    const plain = await call(handler, 200, 'print(6 * 7)');
    assert.equal(plain.result?.resultType, 'complete');
    assert.equal(stdoutOf(plain), '42\n');
  });
});
