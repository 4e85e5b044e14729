// What the stdio server does with input no MCP client should send: every broken request gets a JSON-RPC
// error (with its id when it can be read), and the server goes on serving. Raw bytes in, raw lines out.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { MAX_MESSAGE_BYTES } from '../../src/mcp/jsonRpcInput';
import { RawStdioServer, type RawMessage } from '../support/rawStdio';

const MIB = 1024 * 1024;
let nextId = 1000;

/** The server still works: a fresh request is answered. */
async function assertStillServing(server: RawStdioServer): Promise<void> {
  const id = nextId++;
  const answer = await server.request(id, 'tools/list');
  assert.ok('result' in answer, `tools/list after the bad input: ${JSON.stringify(answer)}`);
}

function assertError(answer: RawMessage, code: number, id: unknown): void {
  assert.equal(answer.jsonrpc, '2.0');
  assert.equal(answer.id, id);
  assert.equal(answer.error?.code, code, JSON.stringify(answer));
  assert.equal(typeof answer.error?.message, 'string');
}

/** A request line of about `bytes` bytes: run_python with that much code, its id first or last in the object. */
function hugeRequest(id: number, bytes: number, idPlace: 'first' | 'last'): string {
  const code = `#${'x'.repeat(bytes)}\nprint(1)`;
  const body = { method: 'tools/call', params: { name: 'run_python', arguments: { code } } };
  return JSON.stringify(idPlace === 'first' ? { jsonrpc: '2.0', id, ...body } : { ...body, jsonrpc: '2.0', id });
}

describe('stdio: malformed input is answered and the server keeps serving', () => {
  let server: RawStdioServer;

  before(async () => {
    server = await RawStdioServer.start(['--backend', 'python']);
  });
  after(() => server?.kill());

  const cases: { name: string; line: string; code: number; id: unknown }[] = [
    { name: 'invalid JSON', line: '{"jsonrpc": "2.0", "id": 1, "method": ', code: -32700, id: null },
    { name: 'a batch array', line: '[{"jsonrpc":"2.0","id":2,"method":"tools/list"}]', code: -32600, id: null },
    { name: 'an empty batch', line: '[]', code: -32600, id: null },
    { name: 'a bare number', line: '42', code: -32600, id: null },
    { name: 'a request missing "jsonrpc"', line: '{"id":3,"method":"tools/list"}', code: -32600, id: 3 },
    { name: 'an object that is no message', line: '{"foo":1}', code: -32600, id: null },
    {
      name: 'an id that is neither a string nor an integer',
      line: '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}',
      code: -32600,
      id: null,
    },
    {
      name: 'params as an array',
      line: '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[1,2]}',
      code: -32602,
      id: 4,
    },
    {
      name: 'params as a string',
      line: '{"jsonrpc":"2.0","id":"five","method":"tools/call","params":"run_python"}',
      code: -32602,
      id: 'five',
    },
  ];
  for (const { name, line, code, id } of cases) {
    test(`${name} → ${code}, id ${JSON.stringify(id)}`, async () => {
      server.write(`${line}\n`);
      assertError(await server.answerTo(id), code, id);
      await assertStillServing(server);
    });
  }

  test('a malformed notification is not answered (there is nobody to answer) but is logged', async () => {
    server.write('{"jsonrpc":"2.0","method":"notifications/cancelled","params":"oops"}\n');
    await assertStillServing(server);
    assert.deepEqual(server.untakenAnswers(), []);
    await server.stderrMatching(/ignored a malformed notification \(notifications\/cancelled\)/);
  });

  test('lines ending in \\r\\n, and a request split across writes, are read', async () => {
    server.write('{"jsonrpc":"2.0","id":6,"method":"tools/list"}\r\n');
    assert.ok('result' in (await server.answerTo(6)));
    const line = Buffer.from('{"jsonrpc":"2.0","id":"é7","method":"tools/list"}\n');
    const split = line.indexOf(0xa9); // inside the two bytes of "é"
    server.write(line.subarray(0, split));
    await new Promise((resolve) => setTimeout(resolve, 100));
    server.write(line.subarray(split));
    assert.ok('result' in (await server.answerTo('é7')));
  });

  test('a 12 MiB line with its id first → -32600 naming the size and the limit, with that id', async () => {
    server.write(`${hugeRequest(8, 12 * MIB, 'first')}\n`);
    const answer = await server.answerTo(8);
    assertError(answer, -32600, 8);
    assert.match(
      answer.error?.message ?? '',
      new RegExp(`\\b\\d{8} bytes, over the limit of ${MAX_MESSAGE_BYTES} bytes`),
    );
    await assertStillServing(server);
  });

  test('a 12 MiB line with its id last (as the SDK client writes it) → -32600 with that id', async () => {
    server.write(`${hugeRequest(9, 12 * MIB, 'last')}\r\n`);
    assertError(await server.answerTo(9), -32600, 9);
    await assertStillServing(server);
  });

  test('a 12 MiB line with no readable id → -32600 with id null', async () => {
    server.write(`[${'1,'.repeat(6 * MIB)}1]\n`);
    assertError(await server.answerTo(null), -32600, null);
    await assertStillServing(server);
  });

  test('a line just under the limit is read (and judged) whole', async () => {
    const line = hugeRequest(10, MAX_MESSAGE_BYTES - 200, 'first');
    assert.ok(Buffer.byteLength(line) <= MAX_MESSAGE_BYTES);
    server.write(`${line}\n`);
    const answer = await server.answerTo(10);
    // It reached run_python, whose guardrails refuse that much code.
    assert.ok('result' in answer, JSON.stringify(answer).slice(0, 500));
    await assertStillServing(server);
  });
});

for (const backend of ['pyodide', 'python']) {
  describe(`stdio: an 11 MB run_python call — ${backend}`, () => {
    let server: RawStdioServer;

    before(async () => {
      server = await RawStdioServer.start(['--backend', backend]);
    });
    after(() => server?.kill());

    test('is answered with an error carrying its id, and the next run works', async () => {
      server.write(`${hugeRequest(11, 11_000_000, 'last')}\n`);
      assertError(await server.answerTo(11), -32600, 11);
      const run = await server.request(12, 'tools/call', {
        name: 'run_python',
        arguments: { code: 'print(1)', backend },
      });
      const result = (run.result as { structuredContent?: { success: boolean; stdout: string; backend: string } })
        .structuredContent;
      assert.ok(result, JSON.stringify(run));
      assert.equal(result.success, true);
      assert.equal(result.stdout, '1\n');
      assert.equal(result.backend, backend);
    });
  });
}

describe('stdio: end of input shuts the server down', () => {
  const generousMs = 60_000;
  const exitWithin = (server: RawStdioServer) =>
    Promise.race([
      server.exited,
      new Promise<string>((resolve) => setTimeout(() => resolve('still running'), generousMs).unref()),
    ]);

  test('with a live Pyodide session, the CLI exits 0', async () => {
    const server = await RawStdioServer.start(['--backend', 'pyodide']);
    try {
      const run = await server.request(1, 'tools/call', { name: 'run_python', arguments: { code: 'x = 1\nprint(x)' } });
      assert.ok('result' in run, JSON.stringify(run));
      server.endInput();
      assert.equal(await exitWithin(server), 0);
    } finally {
      server.kill();
    }
  });

  test('with a Pyodide run still going, the CLI exits 0', async () => {
    const server = await RawStdioServer.start(['--backend', 'pyodide']);
    try {
      const warm = await server.request(1, 'tools/call', { name: 'run_python', arguments: { code: 'print(1)' } });
      assert.ok('result' in warm, JSON.stringify(warm));
      server.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run_python', arguments: { code: 'import time\ntime.sleep(600)', timeout_s: 900 } } })}\n`,
      );
      server.endInput();
      assert.equal(await exitWithin(server), 0);
    } finally {
      server.kill();
    }
  });
});
