// A 2026-07-28 client of the built CLI over stdio hears that the tool list changed on its subscriptions/listen
// stream, the only way that revision has: the SDK's stdio entry routes the connection's server's tools/list_changed
// onto the stream the client opened. What changes it here is the servers file, which the CLI watches: with the
// Pyodide sandbox alone and no external server code reaches nothing outside, and once the file names a server
// run_python says it does.
import { after, before, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, type Tool } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { cliPath, testStorageDir } from '../support/mcp';

const MODERN = '2026-07-28';

let dir: string;
let serversFile: string;

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'list-changed-2026-'));
  serversFile = path.join(dir, 'servers.json');
  fs.writeFileSync(serversFile, JSON.stringify({ servers: {} }));
});
after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const runPythonHints = (tools: Tool[]) => {
  const { destructiveHint, openWorldHint } = tools.find((tool) => tool.name === 'run_python')?.annotations ?? {};
  return [destructiveHint, openWorldHint];
};

test('a 2026 client that listens for tools/list_changed hears it over stdio when run_python comes to reach outside', async () => {
  let heard!: (tools: Tool[]) => void;
  const refreshed = new Promise<Tool[]>((resolve) => (heard = resolve));
  const client = new Client(
    { name: 'list-changed-2026', version: '1' },
    {
      versionNegotiation: { mode: { pin: MODERN } },
      listChanged: {
        tools: { debounceMs: 0, onChanged: (error, tools) => (error ? assert.fail(error) : heard(tools ?? [])) },
      },
    },
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath, '--storage', testStorageDir, '--pyodide-only', '--no-pyodide-spare', '--servers', serversFile],
    env: { ...(process.env as Record<string, string>) },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    await client.connect(transport);
    assert.equal(client.getProtocolEra(), 'modern');
    // connect() resolves once the server acknowledged the stream the listChanged option opened.
    assert.equal(client.autoOpenedSubscription?.honoredFilter.toolsListChanged, true);
    assert.deepEqual(runPythonHints((await client.listTools()).tools), [false, false]);

    fs.writeFileSync(
      serversFile,
      JSON.stringify({
        servers: {
          memory: {
            command: process.execPath,
            args: [require.resolve('@modelcontextprotocol/server-memory/dist/index.js')],
          },
        },
      }),
    );
    assert.deepEqual(runPythonHints(await refreshed), [true, true], stderr);
  } finally {
    await client.close();
  }
});
