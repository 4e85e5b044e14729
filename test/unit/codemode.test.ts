// Pure pieces of the code-mode bridge: names, signatures, config parsing, tool values, the allowlist.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { nobodyToAsk } from '../../src/engine/codemode/approval';
import { renderSearch, ToolBridge } from '../../src/engine/codemode/bridge';
import { toIdentifier, uniqueIdentifiers } from '../../src/engine/codemode/pythonNames';
import { pythonDocstring, pythonParams, pythonSignature } from '../../src/engine/codemode/pythonSignature';
import { mergeServers, parseServers, readServersFile, stripJsonComments } from '../../src/engine/codemode/serverConfig';
import type { ToolProvider, ToolSpec } from '../../src/engine/codemode/toolProvider';
import { toolErrorMessage, toolValue } from '../../src/engine/codemode/toolValue';
import {
  silentLogger,
  type HostCallRun,
  type ToolApprovalAnswer,
  type ToolApprovalRequest,
  type ToolCallRecord,
} from '../../src/engine/types';

/** A provider of tools named `tools` that records each call in `calls` and answers "done". */
function recordingProvider(
  name: string,
  calls: string[],
  options: { tools?: string[]; inputSchema?: ToolSpec['inputSchema']; confirmsCalls?: boolean } = {},
): ToolProvider {
  return {
    name,
    confirmsCalls: options.confirmsCalls,
    listTools: async () =>
      (options.tools ?? ['write']).map((tool): ToolSpec => ({
        server: name,
        name: tool,
        description: `${tool} things.`,
        inputSchema: options.inputSchema ?? { type: 'object' },
        readOnly: tool === 'read',
      })),
    callTool: async (tool) => {
      calls.push(`${name}.${tool}`);
      return { content: [{ type: 'text', text: 'done' }] };
    },
    status: () => ({ name, state: 'connected' }),
    close: async () => undefined,
  };
}

test('names become Python identifiers, unique, keywords avoided', () => {
  assert.equal(toIdentifier('read-file'), 'read_file');
  assert.equal(toIdentifier('mcp.server/x'), 'mcp_server_x');
  assert.equal(toIdentifier('2fa'), '_2fa');
  assert.equal(toIdentifier('class'), 'class_');
  assert.equal(toIdentifier(''), '_');
  assert.deepEqual(uniqueIdentifiers(['a-b', 'a_b', 'a.b']), ['a_b', 'a_b_2', 'a_b_3']);
  assert.deepEqual(uniqueIdentifiers(['search'], new Set(['search'])), ['search_2']);
});

test('signatures and docstrings come from the JSON schema, required first', () => {
  const schema = {
    type: 'object',
    properties: {
      limit: { type: 'integer', description: 'How many' },
      'file-path': { type: 'string', description: 'Where' },
      mode: { enum: ['a', 'b'] },
      tags: { type: 'array', items: { type: 'string' } },
      from: { type: 'string' },
    },
    required: ['file-path', 'from'],
  };
  const params = pythonParams(schema);
  assert.deepEqual(
    params.map((p) => p.ident),
    ['file_path', 'from_', 'limit', 'mode', 'tags'],
  );
  assert.equal(
    pythonSignature('read', params),
    'read(*, file_path: str, from_: str, limit: int = None, mode: Literal["a", "b"] = None, tags: list[str] = None)',
  );
  const doc = pythonDocstring('Reads a file.', params, 'read-file', 'read');
  assert.match(doc, /file_path \(str\) \(sent as "file-path"\): Where/);
  assert.match(doc, /limit \(int, optional\): How many/);
  assert.match(doc, /MCP tool name: read-file/);
  assert.equal(pythonSignature('ping', pythonParams(undefined)), 'ping()');
});

test('server configs: stdio and http entries, variables, and a broken entry that leaves the rest', () => {
  const parsed = parseServers(
    {
      servers: {
        good: { command: 'node', args: ['${workspaceFolder}/server.js'], env: { TOKEN: '${env:CM_TEST_TOKEN}' } },
        web: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { a: 'b' } },
        'bad name!': { command: 'x' },
        noCommand: { args: [] },
        prompt: { command: 'x', args: ['${input:secret}'] },
        ftp: { type: 'ftp' },
      },
    },
    { source: 'test.json', workspaceFolder: '/ws', env: { CM_TEST_TOKEN: 't0k' } },
  );
  assert.deepEqual(
    parsed.servers.map((s) => s.name),
    ['good', 'web'],
  );
  const good = parsed.servers[0];
  assert.ok(good.transport === 'stdio');
  assert.deepEqual(good.args, ['/ws/server.js']);
  assert.equal(good.env.TOKEN, 't0k');
  assert.equal(good.cwd, '/ws');
  assert.deepEqual(
    parsed.problems.map((p) => p.server),
    ['bad name!', 'noCommand', 'prompt', 'ftp'],
  );
  assert.match(parsed.problems[2].message, /unsupported variable \$\{input:secret\}/);
  assert.equal(parseServers([], { source: 'x' }).problems.length, 1);
});

test("VS Code's mcp.json with comments and trailing commas reads; a broken file is a problem, not a crash", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-config-'));
  const file = path.join(dir, 'mcp.json');
  fs.writeFileSync(
    file,
    '{\n // comment\n "servers": { "a": { "command": "x", /* why */ "args": ["http://not/a/comment"], }, },\n}',
  );
  const read = readServersFile(file, {});
  assert.deepEqual(read.problems, []);
  assert.deepEqual(read.servers[0].transport === 'stdio' && read.servers[0].args, ['http://not/a/comment']);
  fs.writeFileSync(file, '{ "servers": ');
  assert.match(readServersFile(file, {}).problems[0].message, /not valid JSON/);
  assert.deepEqual(readServersFile(path.join(dir, 'missing.json'), {}), { servers: [], problems: [] });
  assert.equal(stripJsonComments('{"a": "//x", "b": "/*y*/"}'), '{"a": "//x", "b": "/*y*/"}');
  const merged = mergeServers(parseServers({ servers: { a: { command: 'one' } } }, { source: 'setting' }), read);
  assert.equal(merged.servers.length, 1);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('tool values: structured content, else parsed JSON, else text; errors keep the message', () => {
  const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
  assert.deepEqual(toolValue({ content: [], structuredContent: { a: 1 } }), { a: 1 });
  assert.deepEqual(toolValue(text('{"b": [1, 2]}')), { b: [1, 2] });
  assert.equal(toolValue(text('Echo: hi')), 'Echo: hi');
  assert.equal(toolValue(text('42')), 42);
  assert.equal(
    toolValue({
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    }),
    'a\nb',
  );
  assert.equal(toolValue({ content: [] }), null);
  assert.equal(
    toolErrorMessage({ isError: true, content: [{ type: 'text', text: ' Access denied ' }] }),
    'Access denied',
  );
});

test('the allowlist limits servers and tools, and calls outside it are refused', async () => {
  const calls: string[] = [];
  const provider = (name: string, tools: string[]) => recordingProvider(name, calls, { tools });
  const bridge = new ToolBridge(silentLogger);
  await bridge.setProviders('external', [provider('files', ['read', 'write']), provider('web-search', ['query'])]);
  assert.equal((await bridge.catalog()).tools.length, 3);
  bridge.policy = { allowServers: ['files'], allowTools: ['files.read'] };
  const catalog = await bridge.catalog();
  assert.deepEqual(
    catalog.tools.map((t) => `${t.server}.${t.name}`),
    ['files.read'],
  );
  assert.deepEqual(await bridge.callFromCode('files', 'read', {}), { value: 'done' });
  await assert.rejects(bridge.callFromCode('files', 'write', {}), /not allowed by the code-mode allowlist/);
  await assert.rejects(bridge.call('web-search', 'query', {}), /not allowed/);
  await assert.rejects(bridge.call('nope', 'x', {}), /no MCP server named "nope"/);
  assert.deepEqual(calls, ['files.read']);
  bridge.policy = { allowServers: [], allowTools: [] };
  assert.equal(
    await bridge.call('files', 'write', {}),
    'done',
    'a person invoking a tool from its form needs no question',
  );
  assert.deepEqual(
    await bridge.callFromCode('files', 'write', {}),
    { refused: 'files.write was not called: ' + nobodyToAsk(bridge.approval, 'files', 'write') },
    'code does',
  );
  assert.deepEqual(calls, ['files.read', 'files.write']);
  bridge.policy = { allowServers: [], allowTools: ['web-search.*'] };
  assert.match(renderSearch(await bridge.catalog(), 'query'), /tools\.web_search\.query\(\)\n {4}query things\./);
  await bridge.dispose();
});

test('an argument a closed schema does not declare is refused before anyone is asked; an open schema lets the question show it', async () => {
  const sent: string[] = [];
  const provider = (name: string, additionalProperties?: false) =>
    recordingProvider(name, sent, {
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, additionalProperties },
    });
  const bridge = new ToolBridge(silentLogger);
  await bridge.setProviders('external', [provider('closed', false), provider('open')]);
  const asked: ToolApprovalRequest[] = [];
  const run: HostCallRun = {
    runId: 'r1',
    origin: 'mcp',
    session: 'default',
    sessionAllowed: new Set(),
    askToolApproval: async (request) => {
      asked.push(request);
      return 'once';
    },
    recordToolCall: () => undefined,
  };
  const args = { path: 'a', 'path\nAllow this call?': '/etc/passwd' };
  assert.deepEqual(await bridge.callFromCode('closed', 'write', args, run), {
    refused: 'closed.write was not called: its schema does not declare the argument "path\\nAllow this call?"',
  });
  assert.equal(asked.length, 0, 'not asked');
  assert.deepEqual(await bridge.callFromCode('open', 'write', args, run), { value: 'done' });
  assert.deepEqual(asked[0]?.undeclared, ['path\nAllow this call?']);
  assert.deepEqual(sent, ['open.write']);
  await bridge.dispose();
});

test('the bridge asks the run\'s person for a write, remembers "for this session", records every call, and never asks for a provider that confirms itself', async () => {
  const sent: string[] = [];
  const provider = (name: string, confirmsCalls = false) => recordingProvider(name, sent, { confirmsCalls });
  const bridge = new ToolBridge(silentLogger);
  await bridge.setProviders('external', [provider('files'), provider('vscode', true)]);
  const answers: ToolApprovalAnswer[] = ['deny', 'session'];
  const asked: ToolApprovalRequest[] = [];
  const audit: ToolCallRecord[] = [];
  const run: HostCallRun = {
    runId: 'r1',
    origin: 'mcp',
    session: 'default',
    sessionAllowed: new Set(),
    askToolApproval: async (request) => {
      asked.push(request);
      return answers.shift()!;
    },
    recordToolCall: (call) => audit.push(call),
  };
  assert.deepEqual(await bridge.callFromCode('files', 'write', { path: 'a' }, run), {
    refused: 'files.write was not called: a person declined the call to files.write',
  });
  assert.deepEqual(sent, [], 'nothing reached the tool');
  assert.deepEqual(await bridge.callFromCode('files', 'write', { path: 'b' }, run), { value: 'done' });
  assert.deepEqual(await bridge.callFromCode('files', 'write', { path: 'c' }, run), { value: 'done' });
  assert.deepEqual(await bridge.callFromCode('vscode', 'write', {}, run), { value: 'done' });
  assert.equal(asked.length, 2);
  assert.deepEqual(asked[0], {
    server: 'files',
    tool: 'write',
    args: { path: 'a' },
    undeclared: [],
    run: { runId: 'r1', origin: 'mcp', session: 'default' },
  });
  assert.deepEqual(
    audit.map((c) => `${c.server}.${c.tool} ${c.ok} ${c.approval}`),
    [
      'files.write false denied',
      'files.write true asked-allowed',
      'files.write true session-allowed',
      'vscode.write true policy-allow',
    ],
  );
  assert.deepEqual(sent, ['files.write', 'files.write', 'vscode.write']);
  // A question that cannot be answered (the run stopped, the client went away) is a refusal too.
  const stopped = await bridge.callFromCode(
    'files',
    'write',
    {},
    {
      ...run,
      sessionAllowed: new Set(),
      askToolApproval: async () => Promise.reject(new Error('the run was stopped')),
    },
  );
  assert.deepEqual(stopped, {
    refused: 'files.write was not called: the question could not be answered (the run was stopped)',
  });
  await bridge.dispose();
});
