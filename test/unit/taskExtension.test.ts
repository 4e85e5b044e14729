// The tasks extension (io.modelcontextprotocol/tasks) for 2026-07-28 clients, on real SDK servers: each request gets
// a Server of its own from createMcpHandler (as http.ts serves 2026), all sharing one TaskExtension, and is driven
// in process with hand-built 2026 requests. The tool's work is a stand-in for a run (it ends when the test says,
// asks through the channel as input() does), so what is tested is the lifecycle and its wire, not Python.
import { afterEach, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  createMcpHandler,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { inputViaElicitation } from '../../src/mcp/elicitInput';
import { plainChannel } from '../../src/mcp/runChannel';
import { RunTaskStore } from '../../src/mcp/runTaskStore';
import { serveTaskMethods } from '../../src/mcp/taskMethods';
import type { RunChannel } from '../../src/mcp/shared';
import { declaresTasks, TASKS_EXTENSION, TaskExtension, type TaskExtensionOptions } from '../../src/mcp/taskExtension';
import { sendModern } from '../support/modernRequest';

const DECLARING = { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } };

type Work = (channel: RunChannel) => Promise<CallToolResult>;

interface Answer {
  status: number;
  result?: Record<string, unknown> & { resultType?: string; taskId?: string; status?: string };
  error?: { code: number; message: string; data?: unknown };
}

/** A run the test ends: `end(text)` resolves it; its channel is kept to look at. */
function controlledRun() {
  let end!: (text: string) => void;
  let channel!: RunChannel;
  const work: Work = async (given) => {
    channel = given;
    const text = await new Promise<string>((resolve, reject) => {
      end = resolve;
      given.signal.addEventListener('abort', () => reject(new Error(`stopped: ${String(given.signal.reason)}`)));
    });
    return { content: [{ type: 'text', text }] };
  };
  return { work, end: (text: string) => end(text), channel: () => channel };
}

/** A run that reads lines as input() does (the real elicitation form) and answers with them. */
function askingRun(prompts: string[]): Work {
  return async (channel) => {
    const read = inputViaElicitation(channel)!;
    const lines: string[] = [];
    for (const prompt of prompts) lines.push((await read({ prompt, password: false }, channel.signal)) ?? '');
    return { content: [{ type: 'text', text: lines.join(' ') }] };
  };
}

class Harness {
  readonly tasks: TaskExtension;
  readonly handler: McpHttpHandler;
  readonly legacy = new RunTaskStore();
  /** What the next tools/call of each tool runs. */
  readonly works = new Map<string, Work>();
  private id = 0;

  constructor(options: TaskExtensionOptions = {}) {
    this.tasks = new TaskExtension({
      graceMs: 200,
      keepMs: 60_000,
      answerWaitMs: 60_000,
      pollIntervalMs: 250,
      ...options,
    });
    this.handler = createMcpHandler(() => this.server(), { legacy: 'reject' });
  }

  /** What http.ts's factory would build, cut down to one tool whose calls go through the extension. */
  private server(): Server {
    const server = new Server({ name: 'task-extension-test', version: '1' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', () => ({ tools: [{ name: 'run', inputSchema: { type: 'object' } }] }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const work = this.works.get(String(request.params.arguments?.work))!;
      if (!declaresTasks(ctx)) return work(plainChannel(server, ctx));
      return (await this.tasks.serve(server, ctx, work)) as CallToolResult;
    });
    serveTaskMethods(server, this.legacy, this.tasks);
    return server;
  }

  async send(
    method: string,
    params: Record<string, unknown>,
    options: { capabilities?: object; progressToken?: string } = {},
  ): Promise<Answer> {
    return sendModern<Omit<Answer, 'status'>>(this.handler, ++this.id, method, params, {
      capabilities: options.capabilities ?? DECLARING,
      clientName: 'task-extension-test',
      ...(options.progressToken !== undefined ? { meta: { progressToken: options.progressToken } } : {}),
    });
  }

  call(work: string, options?: { capabilities?: object; progressToken?: string }): Promise<Answer> {
    return this.send('tools/call', { name: 'run', arguments: { work } }, options);
  }

  get(taskId: string, capabilities?: object): Promise<Answer> {
    return this.send('tasks/get', { taskId }, { capabilities });
  }

  /** Polls tasks/get until the task's status is `status`. */
  async until(taskId: string, status: string): Promise<Answer> {
    for (let i = 0; i < 200; i++) {
      const answer = await this.get(taskId);
      if (answer.result?.status === status) return answer;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`task ${taskId} never became ${status}`);
  }

  async close(): Promise<void> {
    this.tasks.close();
    this.legacy.close();
    await this.handler.close();
  }
}

describe('2026-07-28 tasks extension', () => {
  const harnesses: Harness[] = [];
  const harness = (graceMs?: number, options: TaskExtensionOptions = {}) => {
    const made = new Harness({ ...(graceMs === undefined ? {} : { graceMs }), ...options });
    harnesses.push(made);
    return made;
  };
  afterEach(async () => {
    await Promise.all(harnesses.splice(0).map((h) => h.close()));
  });

  test('a run that ends within the grace answers as any call does: no task', async () => {
    const h = harness();
    h.works.set('quick', async () => ({ content: [{ type: 'text', text: 'done' }] }));
    const answer = await h.call('quick');
    assert.equal(answer.result?.resultType, 'complete', JSON.stringify(answer));
    assert.deepEqual(answer.result?.content, [{ type: 'text', text: 'done' }]);
    assert.equal(h.tasks.size, 0);
    assert.equal(h.tasks.runningCount, 0);
  });

  test('a run past the grace answers with a task; tasks/get polls it to its result', async () => {
    const h = harness();
    const run = controlledRun();
    h.works.set('slow', run.work);
    const created = await h.call('slow');
    const task = created.result!;
    assert.equal(task.resultType, 'task', JSON.stringify(created));
    assert.equal(task.status, 'working');
    assert.match(task.taskId!, /^[0-9a-f]{32}$/, 'an unguessable id');
    assert.equal(task.ttlMs, null, 'no ttl while the run goes on');
    assert.equal(task.pollIntervalMs, 250);
    assert.ok(!Number.isNaN(Date.parse(task.createdAt as string)));
    assert.equal(h.tasks.runningCount, 1);
    assert.equal(run.channel().signal.aborted, false, "the call's answer does not stop the run");

    const working = await h.get(task.taskId!);
    assert.equal(working.result?.resultType, 'complete', 'tasks/get answers are complete results');
    assert.equal(working.result?.status, 'working');
    assert.equal(working.result?.result, undefined);

    run.end('finally');
    const done = await h.until(task.taskId!, 'completed');
    assert.deepEqual(done.result?.result, { content: [{ type: 'text', text: 'finally' }] });
    assert.equal(typeof done.result?.ttlMs, 'number', 'an ended task says how long it is kept');
    assert.ok((done.result!.ttlMs as number) >= 60_000);
    assert.equal(h.tasks.runningCount, 0);
  });

  test("after the call is answered, the run's progress is the task's status message", async () => {
    const h = harness();
    const run = controlledRun();
    h.works.set('slow', run.work);
    const created = await h.call('slow', { progressToken: 'p1' });
    await run.channel().notify({
      method: 'notifications/progress',
      params: { progressToken: 'p1', progress: 1, message: 'step 1\nstep 2\n' },
    });
    const working = await h.get(created.result!.taskId!);
    assert.equal(working.result?.statusMessage, 'step 2');
    run.end('ok');
  });

  test('grace 0: every call of a declaring client is a task at once', async () => {
    const h = harness(0);
    h.works.set('quick', async () => ({ content: [{ type: 'text', text: 'done' }] }));
    const created = await h.call('quick');
    assert.equal(created.result?.resultType, 'task');
    const done = await h.until(created.result!.taskId!, 'completed');
    assert.deepEqual(done.result?.result, { content: [{ type: 'text', text: 'done' }] });
  });

  test('a client that did not declare the extension never gets a task, and may not name one (-32021)', async () => {
    const h = harness(0);
    const run = controlledRun();
    h.works.set('slow', run.work);
    const plain = h.call('slow', { capabilities: { elicitation: { form: {} } } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    run.end('plain');
    const answer = await plain;
    assert.equal(answer.result?.resultType, 'complete');

    const other = controlledRun();
    h.works.set('slow', other.work);
    const created = await h.call('slow');
    const refused = await h.get(created.result!.taskId!, { elicitation: { form: {} } });
    assert.equal(refused.error?.code, -32021, JSON.stringify(refused));
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.error?.data, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    for (const method of ['tasks/update', 'tasks/cancel']) {
      const answer = await h.send(method, { taskId: created.result!.taskId! }, { capabilities: {} });
      assert.equal(answer.error?.code, -32021, `${method}: ${JSON.stringify(answer)}`);
    }
    other.end('x');
  });

  test('a question makes the task input_required; tasks/update answers it and the run goes on to its next', async () => {
    const h = harness();
    h.works.set('ask', askingRun(['first? ', 'second? ']));
    const created = await h.call('ask');
    const task = created.result!;
    assert.equal(task.resultType, 'task', 'a question within the grace makes the task at once');
    assert.equal(task.status, 'input_required');

    const asking = await h.get(task.taskId!);
    assert.equal(asking.result?.status, 'input_required');
    const requests = asking.result?.inputRequests as Record<
      string,
      { method: string; params: { mode: string; message: string } }
    >;
    assert.deepEqual(Object.keys(requests), ['input_1']);
    assert.equal(requests.input_1.method, 'elicitation/create');
    assert.equal(requests.input_1.params.mode, 'form');
    assert.equal(requests.input_1.params.message, 'first?');

    // Keys not outstanding are ignored, as the spec asks; the answer to input_1 goes through.
    const ack = await h.send('tasks/update', {
      taskId: task.taskId,
      inputResponses: {
        nope: { action: 'accept', content: { answer: 'ignored' } },
        input_1: { action: 'accept', content: { answer: 'Ada' } },
      },
    });
    assert.equal(ack.result?.resultType, 'complete', JSON.stringify(ack));

    const now = await pollFor(h, task.taskId!, (r) =>
      Object.hasOwn((r.inputRequests as object | undefined) ?? {}, 'input_2'),
    );
    assert.deepEqual(Object.keys(now.inputRequests as object), ['input_2'], 'the answered question is no longer asked');
    const input2 = (now.inputRequests as Record<string, { params: { message: string } }>).input_2;
    assert.equal(input2.params.message, 'second?', 'a new key for each question: never reused');

    // An answer to the question already answered changes nothing.
    await h.send('tasks/update', {
      taskId: task.taskId,
      inputResponses: { input_1: { action: 'accept', content: { answer: 'again' } } },
    });
    await h.send('tasks/update', {
      taskId: task.taskId,
      inputResponses: { input_2: { action: 'accept', content: { answer: 'Lovelace' } } },
    });
    const done = await h.until(task.taskId!, 'completed');
    assert.deepEqual(done.result?.result, { content: [{ type: 'text', text: 'Ada Lovelace' }] });
  });

  test('a declined question fails the input() of the run, whose error result completes the task', async () => {
    const h = harness(0);
    h.works.set('ask', askingRun(['name? ']));
    const created = await h.call('ask');
    await h.until(created.result!.taskId!, 'input_required');
    await h.send('tasks/update', {
      taskId: created.result!.taskId,
      inputResponses: { input_1: { action: 'decline' } },
    });
    const done = await h.until(created.result!.taskId!, 'completed');
    const result = done.result?.result as CallToolResult;
    assert.equal(result.isError, true, 'a tool error is completed, not failed');
    assert.match(JSON.stringify(result.content), /input was declined/);
  });

  test('tasks/cancel stops the run and the task says cancelled; cancelling an ended task changes nothing', async () => {
    const h = harness(0);
    const run = controlledRun();
    h.works.set('slow', run.work);
    const created = await h.call('slow');
    const taskId = created.result!.taskId!;
    const ack = await h.send('tasks/cancel', { taskId });
    assert.equal(ack.result?.resultType, 'complete', JSON.stringify(ack));
    assert.equal(run.channel().signal.aborted, true);
    assert.equal(run.channel().nobodyWaits?.(), true, "the session's next run hears of it");
    const cancelled = await h.get(taskId);
    assert.equal(cancelled.result?.status, 'cancelled');
    assert.equal(cancelled.result?.result, undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal((await h.get(taskId)).result?.status, 'cancelled', 'the stopped run does not complete it');

    h.works.set('quick', async () => ({ content: [{ type: 'text', text: 'done' }] }));
    const quick = await h.call('quick');
    await h.until(quick.result!.taskId!, 'completed');
    const again = await h.send('tasks/cancel', { taskId: quick.result!.taskId! });
    assert.equal(again.result?.resultType, 'complete');
    assert.equal((await h.get(quick.result!.taskId!)).result?.status, 'completed');
  });

  test('a cancelled task withdraws its question: the run is not left waiting', async () => {
    const h = harness(0);
    let failure: unknown;
    h.works.set('ask', async (channel) => {
      try {
        return await askingRun(['name? '])(channel);
      } catch (error) {
        failure = error;
        throw error;
      }
    });
    const created = await h.call('ask');
    await h.until(created.result!.taskId!, 'input_required');
    await h.send('tasks/cancel', { taskId: created.result!.taskId! });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.match(String(failure), /withdrawn/);
    assert.equal(h.tasks.runningCount, 0);
  });

  test('a JSON-RPC error of the run fails the task with that error; another error is a tool error result', async () => {
    const h = harness(0);
    h.works.set('protocol', async () => {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'bad state');
    });
    h.works.set('throws', async () => {
      throw new Error('kaboom');
    });
    const failed = await h.until((await h.call('protocol')).result!.taskId!, 'failed');
    assert.deepEqual(failed.result?.error, { code: -32602, message: 'bad state' });
    assert.match(String(failed.result?.statusMessage), /bad state/);
    const completed = await h.until((await h.call('throws')).result!.taskId!, 'completed');
    assert.equal((completed.result?.result as CallToolResult).isError, true);
    assert.match(JSON.stringify(completed.result?.result), /kaboom/);
  });

  test('an unknown task is -32602 for every method; tasks/result and tasks/list are not methods of 2026', async () => {
    const h = harness();
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const answer = await h.send(method, { taskId: 'f'.repeat(32) });
      assert.equal(answer.error?.code, -32602, `${method}: ${JSON.stringify(answer)}`);
      assert.match(answer.error!.message, /Task not found/);
    }
    for (const method of ['tasks/result', 'tasks/list']) {
      const answer = await h.send(method, { taskId: 'f'.repeat(32) });
      assert.equal(answer.error?.code, -32601, `${method}: ${JSON.stringify(answer)}`);
    }
  });

  test('server/discover declares the extension', async () => {
    const h = harness();
    const answer = await h.send('server/discover', {});
    assert.deepEqual((answer.result?.capabilities as { extensions?: object }).extensions, { [TASKS_EXTENSION]: {} });
  });

  test('closing stops every run and forgets every task', async () => {
    const h = harness(0);
    const run = controlledRun();
    h.works.set('slow', run.work);
    const created = await h.call('slow');
    h.tasks.close();
    assert.equal(run.channel().signal.aborted, true);
    assert.equal(h.tasks.size, 0);
    const gone = await h.get(created.result!.taskId!);
    assert.equal(gone.error?.code, -32602);
  });

  test('results past the byte budget lose their displays, oldest first', async () => {
    const h = harness(0, { maxResultBytes: 600 * 1024 });
    const big = (tag: string): CallToolResult => ({
      content: [
        { type: 'text', text: tag },
        { type: 'image', data: 'A'.repeat(400 * 1024), mimeType: 'image/png' },
      ],
    });
    h.works.set('big1', async () => big('one'));
    h.works.set('big2', async () => big('two'));
    const first = await h.until((await h.call('big1')).result!.taskId!, 'completed');
    assert.equal((first.result?.result as CallToolResult).content.length, 2);
    const second = await h.until((await h.call('big2')).result!.taskId!, 'completed');
    assert.equal((second.result?.result as CallToolResult).content.length, 2, 'the newest stays whole');
    const older = await h.get(first.result!.taskId as string);
    const kept = (older.result?.result as CallToolResult).content;
    assert.equal(kept[0]!.type, 'text');
    assert.ok(!kept.some((item) => item.type === 'image'), 'the oldest gave up its image');
    assert.ok(h.tasks.heldResultBytes <= 600 * 1024);
  });
});

describe('2025-11-25 requests of the same names', () => {
  test("go to the connection's own task store, as taskMethods.ts serves them; tasks/update is no method there", async () => {
    const tasks = new TaskExtension();
    const legacy = new RunTaskStore();
    const server = new Server({ name: 'task-extension-test', version: '1' }, { capabilities: {} });
    serveTaskMethods(server, legacy, tasks);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'legacy-test', version: '1' });
    await client.connect(clientSide);
    try {
      const task = legacy.createTask({ ttl: 60_000, pollInterval: 1000 });
      const loose = z.looseObject({});
      const got = await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, loose);
      assert.equal(got.status, 'working');
      assert.equal(got.ttl, 60_000, 'the 2025 shape (ttl, not ttlMs)');
      const cancelled = await client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, loose);
      assert.equal(cancelled.status, 'cancelled', '2025 answers tasks/cancel with the task');
      await assert.rejects(
        client.request({ method: 'tasks/get', params: { taskId: 'f'.repeat(32) } }, loose),
        (error: { code?: number }) => error.code === -32602,
      );
      await assert.rejects(
        client.request({ method: 'tasks/update', params: { taskId: task.taskId } }, loose),
        (error: { code?: number }) => error.code === -32601,
      );
    } finally {
      await client.close();
      tasks.close();
      legacy.close();
    }
  });
});

/** tasks/get until `seen` holds of its result. */
async function pollFor(
  h: Harness,
  taskId: string,
  seen: (result: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const answer = await h.get(taskId);
    if (answer.result && seen(answer.result)) return answer.result;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('never seen');
}
