// The MCP surface as a client sees it, through the SDK's real Client: the tool list's size, names and
// annotations; unknown tools as JSON-RPC errors; the client log; heartbeats of a silent run.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { Engine } from '../../src/engine/engine';
import { createMcpServer } from '../../src/mcp/server';
import { TOOL_NAMES } from '../../src/mcp/toolNames';
import { connectStdio, runPython, type StdioConnection } from '../support/mcp';
import { fakeBackend } from '../support/fakeBackend';
import { buildWheel } from '../support/wheel';
import { providerFindings } from '../support/providerSchemaRules';

// Every tool, argument and annotation, read into a model's context on every turn: no output schemas (a model reads
// none; docs/tools.md names the results' fields).
const TOOL_LIST_BUDGET_BYTES = 4096;

describe('the MCP surface of the CLI', () => {
  let conn: StdioConnection;
  const logged: LoggingMessageNotification['params'][] = [];
  const events = (event: string) => logged.filter((m) => (m.data as { event?: string }).event === event);
  /** Log messages may trail the result they are about by a tick. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

  before(async () => {
    conn = await connectStdio(['--backend', 'python']);
    conn.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logged.push(n.params);
    });
  });
  after(async () => {
    await conn?.close();
  });

  test(`tools/list is at most ${TOOL_LIST_BUDGET_BYTES} bytes of JSON and offers exactly the registry's tools`, async (t) => {
    const list = await conn.client.listTools();
    const bytes = Buffer.byteLength(JSON.stringify(list));
    t.diagnostic(`tools/list: ${bytes} bytes of JSON, ${list.tools.length} tools`);
    assert.ok(bytes <= TOOL_LIST_BUDGET_BYTES, `${bytes} bytes`);
    assert.deepEqual(list.tools.map((tool) => tool.name).sort(), [...TOOL_NAMES].sort());
    assert.ok(!JSON.stringify(list).includes('$schema'), 'no dialect keyword repeated per schema');
  });

  test("every tool's input schema is taken by OpenAI (strict mode), Gemini and Anthropic; bounds no schema can carry are checked", async () => {
    const { tools } = await conn.client.listTools();
    for (const tool of tools)
      assert.deepEqual(providerFindings(tool.inputSchema as Record<string, unknown>), [], `${tool.name}'s inputSchema`);
    // The checker finds what the providers refuse: the shapes these schemas had.
    assert.deepEqual(
      providerFindings({
        type: 'object',
        properties: {
          timeout_s: { type: 'number', exclusiveMinimum: 0 },
          value: { type: ['string', 'number'] },
          query: { type: 'string', maxLength: 1000 },
        },
      }).map((finding) => `${finding.provider} ${finding.path}`),
      [
        'gemini /properties/timeout_s/exclusiveMinimum',
        'gemini /properties/value/type',
        'openai /properties/query/maxLength',
      ],
    );
    // The bounds are still kept, with an error a model can act on.
    const refused = async (name: string, args: Record<string, unknown>, message: RegExp) => {
      const result = (await conn.client.callTool({ name, arguments: args })) as { isError?: boolean; content: unknown };
      assert.equal(result.isError, true, `${name} ${JSON.stringify(args)}`);
      assert.match(JSON.stringify(result.content), message);
    };
    await refused('run_python', { code: 'print(1)', timeout_s: 0 }, /timeout_s must be more than 0 seconds/);
    await refused('learnings', { action: 'search', query: 'x'.repeat(1001) }, /query is at most 1000 characters/);
    await refused(
      'packages',
      { action: 'check', packages: ['x'.repeat(2049)] },
      /a package spec is at most 2048 characters/,
    );
  });

  test('every tool declares all five annotations, true for these settings, and no output schema', async () => {
    const { tools } = await conn.client.listTools();
    for (const tool of tools) {
      assert.equal(tool.outputSchema, undefined, `${tool.name}'s results are described in docs/tools.md`);
      const { title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = tool.annotations ?? {};
      assert.equal(typeof title, 'string', `${tool.name} title`);
      for (const hint of [readOnlyHint, destructiveHint, idempotentHint, openWorldHint])
        assert.equal(typeof hint, 'boolean', `${tool.name} hints`);
    }
    const hints = Object.fromEntries(
      tools.map((tool) => [
        tool.name,
        [tool.annotations?.readOnlyHint, tool.annotations?.destructiveHint, tool.annotations?.openWorldHint],
      ]),
    );
    // The workspace interpreter is on and code mode is attached: code reaches outside and may destroy.
    assert.deepEqual(hints.run_python, [false, true, true]);
    // pip changes the environment and reaches the network.
    assert.deepEqual(hints.packages, [false, true, true]);
    assert.deepEqual(hints.code_file, [false, true, false]);
    assert.deepEqual(hints.environment, [false, false, false]);
  });

  test('a tool the server does not offer is a JSON-RPC error -32602, and a bad argument stays a tool result', async () => {
    const error = await conn.client.callTool({ name: 'write_code_file', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof McpError, String(error));
    assert.equal(error.code, ErrorCode.InvalidParams);
    assert.match(error.message, /Unknown tool: write_code_file$/);
    const bad = await conn.client.callTool({ name: 'code_file', arguments: { action: 'delete', filename: 'x.py' } });
    assert.equal(bad.isError, true);
  });

  test('a client log at level warning hears a session reset it did not ask for and a policy refusal, not an asked-for reset', async () => {
    await conn.client.setLoggingLevel('warning');
    await runPython(conn.client, { code: 'x = 1', reset: true, session: 'log' });
    // The interpreter ignores the interrupt, so it is killed and replaced after the grace period.
    const stuck = await runPython(conn.client, {
      code: 'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass',
      timeout_s: 1,
      session: 'log',
    });
    assert.equal(stuck.result.session_reset, true);
    const refused = await runPython(conn.client, { code: `# ${'x'.repeat(300 * 1024)}`, session: 'log' });
    assert.equal(refused.result.diagnostics?.error_type, 'POLICY_VIOLATION');
    await settle();
    const [reset, ...more] = events('session_reset');
    assert.equal(more.length, 0, 'the asked-for reset is below warning');
    assert.deepEqual([reset.level, (reset.data as { run_id: string }).run_id], ['warning', stuck.result.run_id]);
    assert.equal(reset.logger, 'code-mode-python');
    const [policy] = events('policy_refusal');
    assert.deepEqual([policy.level, (policy.data as { rule: string }).rule], ['warning', 'max_code_bytes']);
  });

  test('at level info an install is told, with what went in', async () => {
    await conn.client.setLoggingLevel('info');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-surface-'));
    try {
      const wheel = buildWheel(dir, { name: 'cmlogpkg', version: '0.1.0', init: 'X = 1\n' });
      const raw = await conn.client.callTool(
        { name: 'packages', arguments: { action: 'install', packages: [wheel], backend: 'pyodide', session: 'log' } },
        undefined,
        { timeout: 300_000 },
      );
      assert.equal(raw.isError, false, JSON.stringify(raw.content));
      await settle();
      const [install] = events('install');
      assert.equal(install.level, 'info');
      assert.deepEqual((install.data as { installed: string[] }).installed, ['cmlogpkg==0.1.0']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a silent run sends a heartbeat with the seconds elapsed every 5 s', async () => {
    const messages: string[] = [];
    const { result } = await runPython(
      conn.client,
      { code: 'import time\ntime.sleep(12)', timeout_s: 30, session: 'quiet' },
      { onprogress: (p) => messages.push(p.message ?? '') },
    );
    assert.equal(result.success, true);
    assert.ok(messages.length >= 2, JSON.stringify(messages));
    assert.match(messages[0], /^\[still running: 5 s elapsed\]/);
    assert.match(messages[1], /^\[still running: 10 s elapsed\]/);
  });
});

describe('annotations follow the settings', () => {
  test('run_python is closed-world while only the sandbox runs code, and says otherwise once the workspace interpreter is on', async () => {
    const engine = new Engine({ backends: [fakeBackend(), { ...fakeBackend(), kind: 'python' }] });
    await engine.setBackendEnabled('python', false, 'off for the test');
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createMcpServer(engine).connect(serverSide);
    const client = new Client({ name: 'annotations-test', version: '1' });
    await client.connect(clientSide);
    try {
      const hints = async () => (await client.listTools()).tools.find((t) => t.name === 'run_python')?.annotations;
      assert.deepEqual([(await hints())?.destructiveHint, (await hints())?.openWorldHint], [false, false]);
      const changed = new Promise<void>((resolve) =>
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
      );
      await engine.setBackendEnabled('python', true);
      await changed;
      assert.deepEqual([(await hints())?.destructiveHint, (await hints())?.openWorldHint], [true, true]);
    } finally {
      await client.close();
      await engine.dispose();
    }
  });

  test('on the CLI: --pyodide-only with no external servers is closed-world; a servers file makes it open-world', async () => {
    const servers = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'annotations-')), 'servers.json');
    fs.writeFileSync(
      servers,
      JSON.stringify({
        servers: {
          memory: {
            command: process.execPath,
            args: [require.resolve('@modelcontextprotocol/server-memory/dist/index.js')],
          },
        },
      }),
    );
    for (const [args, expected] of [
      [['--pyodide-only'], [false, false]],
      [
        ['--pyodide-only', '--servers', servers],
        [true, true],
      ],
    ] as const) {
      const conn = await connectStdio([...args]);
      try {
        const { annotations } = (await conn.client.listTools()).tools.find((t) => t.name === 'run_python') ?? {};
        assert.deepEqual([annotations?.destructiveHint, annotations?.openWorldHint], expected, args.join(' '));
      } finally {
        await conn.close();
      }
    }
  });
});
