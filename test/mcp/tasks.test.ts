// run_python as an MCP task (2025-11-25 tasks utility), through the SDK's real client: over stdio against the
// built CLI (a run that outlives the client's request timeout, failures, the file form, cancellation, a client that
// does not use tasks) and over HTTP (tasks stay with their MCP session and end with it).
import { after, afterEach, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import type { RunEvent, RunResult } from '../../src/engine/types';
import { startHttpMcpServer, type HttpMcpServer } from '../../src/mcp/http';
import { connectHttp, until } from '../support/http';
import { connectStdio, runPython, testStorageDir, type StdioConnection } from '../support/mcp';
import { RawStdioServer } from '../support/rawStdio';
import { notInText } from '../../src/mcp/tools/run';

/** What a client with a short patience allows any one request. */
const REQUEST_TIMEOUT_MS = 5000;

interface Progress {
  progress: number;
  message?: string;
}

/** tools/call of run_python with `task`: answered at once with the task. */
async function startTask(
  client: Client,
  args: Record<string, unknown>,
  onprogress?: (p: Progress) => void,
): Promise<Task> {
  const { task } = await client.request(
    { method: 'tools/call', params: { name: 'run_python', arguments: args } },
    CreateTaskResultSchema,
    {
      task: { ttl: 60_000 },
      timeout: REQUEST_TIMEOUT_MS,
      onprogress,
    },
  );
  return task;
}

/** Polls tasks/get (each request under the short timeout) until the task ends; every status seen, in order. */
async function pollUntilDone(client: Client, taskId: string): Promise<Task['status'][]> {
  const seen: Task['status'][] = [];
  let status: Task['status'] = 'working';
  await until(async () => {
    status = (await client.experimental.tasks.getTask(taskId, { timeout: REQUEST_TIMEOUT_MS })).status;
    if (seen.at(-1) !== status) seen.push(status);
    return status !== 'working' && status !== 'input_required';
  }, `task ${taskId} ends`);
  return seen;
}

async function taskResult(client: Client, taskId: string): Promise<CallToolResult & { structuredContent: RunResult }> {
  return (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, {
    timeout: REQUEST_TIMEOUT_MS,
  })) as CallToolResult & { structuredContent: RunResult };
}

describe('run_python as a task over stdio', () => {
  let conn: StdioConnection;

  before(async () => {
    conn = await connectStdio(['--backend', 'python'], {}, { tasks: {} });
  });
  after(async () => {
    await conn?.close();
  });

  test('the server offers tasks, and run_python alone may run as one', async () => {
    assert.ok(conn.client.getServerCapabilities()?.tasks?.requests?.tools?.call, 'tasks for tools/call');
    assert.ok(conn.client.getServerCapabilities()?.tasks?.cancel, 'tasks/cancel');
    const { tools } = await conn.client.listTools();
    const taskSupport = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    assert.deepEqual(taskSupport, {
      run_python: 'optional',
      code_file: undefined,
      learnings: undefined,
      packages: undefined,
      environment: undefined,
    });
  });

  test('an 8 s run outlives a 5 s request timeout: working, then completed, and its result is fetched afterwards', async () => {
    const progress: Progress[] = [];
    const task = await startTask(
      conn.client,
      { code: 'import time\ntime.sleep(8)\nprint("slept")', timeout_s: 60 },
      (p) => progress.push(p),
    );
    assert.equal(task.status, 'working');
    assert.equal(task.ttl, 120_000, "the 60 s asked for, raised to outlive the run's 60 s limit by a minute");

    const statuses = await pollUntilDone(conn.client, task.taskId);
    assert.deepEqual(statuses, ['working', 'completed']);
    const result = await taskResult(conn.client, task.taskId);
    assert.equal(result.isError, false);
    assert.equal(result.structuredContent.success, true);
    assert.equal(result.structuredContent.stdout, 'slept\n');
    assert.deepEqual(result._meta?.[RELATED_TASK_META_KEY], { taskId: task.taskId });
    // The run was silent, so it sent its heartbeat under the progress token of the call, answered long before.
    assert.ok(
      progress.some((p) => /still running: \d+ s elapsed/.test(p.message ?? '')),
      JSON.stringify(progress),
    );
  });

  test('a run that fails ends its task failed, and tasks/result still says why', async () => {
    const task = await startTask(conn.client, { code: 'print("before")\n1 / 0' });
    // A short run may have ended before the first tasks/get: only the end is certain.
    assert.equal((await pollUntilDone(conn.client, task.taskId)).at(-1), 'failed');
    const result = await taskResult(conn.client, task.taskId);
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent.stdout, 'before\n');
    assert.equal(result.structuredContent.diagnostics?.exception, 'ZeroDivisionError');
  });

  test('a code file runs as a task too', async () => {
    const filename = `task_file_${process.pid}.py`;
    await conn.client.callTool({
      name: 'code_file',
      arguments: { action: 'create', filename, content: 'total = sum(range(10))\nprint(total)\n' },
    });
    const task = await startTask(conn.client, { file: filename });
    assert.equal((await pollUntilDone(conn.client, task.taskId)).at(-1), 'completed');
    assert.equal((await taskResult(conn.client, task.taskId)).structuredContent.stdout, '45\n');
  });

  test('tasks/cancel interrupts the run, and the next call on its session works with the state kept', async () => {
    await runPython(conn.client, { code: 'kept = "yes"', session: 'cancelled' });
    const progress: Progress[] = [];
    const task = await startTask(
      conn.client,
      { code: 'import time\nprint("started", flush=True)\ntime.sleep(300)', timeout_s: 600, session: 'cancelled' },
      (p) => progress.push(p),
    );
    await until(() => progress.some((p) => p.message?.includes('started')), 'the run is under way');
    const cancelled = await conn.client.experimental.tasks.cancelTask(task.taskId, { timeout: REQUEST_TIMEOUT_MS });
    assert.equal(cancelled.status, 'cancelled');
    assert.equal((await conn.client.experimental.tasks.getTask(task.taskId)).status, 'cancelled');
    // Were the sleep not interrupted, this call would wait behind it for five minutes.
    const next = await runPython(conn.client, { code: 'print(kept)', session: 'cancelled' }, { timeout: 30_000 });
    assert.equal(next.result.stdout, 'yes\n');
    assert.equal(next.result.session_reset, undefined);
  });

  test('a task asked of a tool that cannot be one is refused with -32601', async () => {
    const error = await conn.client
      .request({ method: 'tools/call', params: { name: 'environment', arguments: {} } }, CreateTaskResultSchema, {
        task: {},
        timeout: REQUEST_TIMEOUT_MS,
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(error instanceof McpError, String(error));
    assert.equal(error.code, ErrorCode.MethodNotFound);
  });
});

describe('run_python without tasks', () => {
  let conn: StdioConnection;

  before(async () => {
    conn = await connectStdio(['--backend', 'python']);
  });
  after(async () => {
    await conn?.close();
  });

  test('a client that does not ask for a task gets the ordinary result and progress, and no task is made', async () => {
    const progress: Progress[] = [];
    const { result, raw } = await runPython(
      conn.client,
      { code: 'print("a")\nimport time\ntime.sleep(0.3)\nprint("b")' },
      { onprogress: (p) => progress.push(p) },
    );
    assert.equal(raw.task, undefined);
    assert.equal(result.success, true);
    assert.equal(result.stdout, 'a\nb\n');
    assert.deepEqual(JSON.parse((raw.content[1] as { text: string }).text), notInText(result));
    // What reached the SDK client is only a prefix of the output for sure: the client handles a notification a
    // microtask late, so one that arrives in the same read as the response finds its handler gone (measured on
    // a loaded machine). That every piece is sent, before the response, is checked on the wire below.
    assert.ok(
      progress.length > 0 && 'a\nb\n'.startsWith(progress.map((p) => p.message).join('')),
      JSON.stringify(progress),
    );
    // The SDK's own way with a task-capable tool called plainly is a task polled behind the client's back.
    assert.deepEqual((await conn.client.experimental.tasks.listTasks()).tasks, []);
  });

  test('every piece of output goes out as progress before the response, on the wire', async () => {
    const server = await RawStdioServer.start(['--backend', 'python']);
    try {
      const response = await server.request(1, 'tools/call', {
        name: 'run_python',
        arguments: { code: 'print("a")\nimport time\ntime.sleep(0.3)\nprint("b")' },
        _meta: { progressToken: 'p' },
      });
      assert.ok('result' in response, JSON.stringify(response));
      const before = server.arrived.slice(0, server.arrived.indexOf(response));
      const messages = before
        .filter((m) => m.method === 'notifications/progress')
        .map((m) => (m.params as { message: string }).message);
      assert.equal(messages.join(''), 'a\nb\n');
    } finally {
      server.kill();
    }
  });
});

describe('run_python tasks over HTTP', () => {
  let engine: Engine | undefined;
  let server: HttpMcpServer | undefined;
  const closing: (() => Promise<void>)[] = [];

  async function connect(server: HttpMcpServer) {
    const connection = await connectHttp(server.url, server.token);
    closing.push(() => connection.client.close());
    return connection;
  }

  before(async () => {
    engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python' } });
  });
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((close) => close().catch(() => undefined)));
    await server?.close();
  });
  after(async () => {
    await engine?.dispose();
  });

  test('a task belongs to the MCP session that made it: another client can neither see nor fetch nor cancel it', async () => {
    server = await startHttpMcpServer(engine!, { shareSessions: true });
    const a = await connect(server);
    const b = await connect(server);
    const task = await startTask(a.client, { code: 'print("for a")' });
    assert.equal((await pollUntilDone(a.client, task.taskId)).at(-1), 'completed');
    assert.deepEqual(
      (await a.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId),
      [task.taskId],
    );
    assert.deepEqual((await b.client.experimental.tasks.listTasks()).tasks, []);
    for (const attempt of [
      () => b.client.experimental.tasks.getTask(task.taskId),
      () => b.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema),
      () => b.client.experimental.tasks.cancelTask(task.taskId),
    ]) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(
        error instanceof McpError && error.code === ErrorCode.InvalidParams && /not found/i.test(error.message),
        String(error),
      );
    }
    assert.equal((await taskResult(a.client, task.taskId)).structuredContent.stdout, 'for a\n');
  });

  test('an MCP session that ends takes its tasks along: a run still under way is cancelled', async () => {
    // Shared Python sessions outlive the MCP session, so nothing but its tasks ending stops the run.
    server = await startHttpMcpServer(engine!, { shareSessions: true });
    const finished: RunResult[] = [];
    const listener = engine!.onRunEvent((event: RunEvent) => event.type === 'finished' && finished.push(event.result));
    try {
      const a = await connect(server);
      await startTask(a.client, { code: 'import time\ntime.sleep(300)', timeout_s: 600 });
      await until(() => engine!.describeSessions().some((s) => s.runningRunId !== undefined), 'the run is under way');
      await a.transport.terminateSession();
      await until(() => finished.length > 0, 'the run of the ended session stops');
      assert.equal(finished[0]!.diagnostics?.error_type, 'CANCELLED');
    } finally {
      listener.dispose();
    }
  });
});
