// Code mode through a real MCP client: Python calls the tools of real MCP servers from npm
// (memory, filesystem, everything) and of a fixture server that crashes on demand, on both backends.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import type { BackendKind } from '../../src/engine/types';
import { freeLoopbackPort } from '../../src/engine/localAddresses';
import { connectStdio, repoRoot, runPython, type StdioConnection } from '../support/mcp';

const serverScript = (pkg: string) =>
  path.join(repoRoot, 'node_modules', '@modelcontextprotocol', pkg, 'dist', 'index.js');

function writeServersConfig(dir: string, filesDir: string): string {
  const file = path.join(dir, 'mcp_servers.json');
  const config = {
    servers: {
      memory: {
        command: process.execPath,
        args: [serverScript('server-memory')],
        env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') },
        description: 'A knowledge graph',
      },
      filesystem: { command: process.execPath, args: [serverScript('server-filesystem'), filesDir] },
      everything: { command: process.execPath, args: [serverScript('server-everything'), 'stdio'] },
      'crash-test': { command: process.execPath, args: [path.join(repoRoot, 'test', 'fixtures', 'crash-server.mjs')] },
      'no-such-binary': { command: path.join(dir, 'missing-server-binary') },
      broken: { args: 'not a list' },
    },
  };
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

for (const backend of ['python', 'pyodide'] as BackendKind[]) {
  describe(`code mode — ${backend}`, () => {
    let conn: StdioConnection;
    let dir: string;
    let filesDir: string;
    const run = (code: string) => runPython(conn.client, { code, backend, timeout_s: 60 });

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-bridge-'));
      filesDir = fs.realpathSync(fs.mkdtempSync(path.join(dir, 'files-')));
      // These cases are about calling tools, so calls need no approval here (tool-approval.test.ts tests asking).
      conn = await connectStdio([
        '--backend',
        backend,
        '--servers',
        writeServersConfig(dir, filesDir),
        '--tool-approval',
        'allow',
      ]);
      // The client then checks every result against run_python's output schema.
      await conn.client.listTools();
    });
    after(async () => {
      await conn?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('tools.search() lists callable tools as Python signatures and names what is broken; a failed server reaches the client log', async () => {
      const logged: LoggingMessageNotification['params'][] = [];
      conn.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        logged.push(n.params);
      });
      const listed = await run('from code_mode import tools\nprint(tools.search())');
      const text = listed.result.stdout;
      assert.match(text, /^from code_mode import tools/);
      assert.match(text, /tools\.memory\.create_entities\(\*, entities: list\[dict\]\)/);
      assert.match(text, /tools\.filesystem\.write_file\(\*, path: str, content: str\)/);
      assert.match(text, /tools\.crash_test\.ping\(\)/, 'hyphenated server names become identifiers');
      assert.match(text, /# no-such-binary: unavailable — command ".*missing-server-binary": .*ENOENT/);
      assert.match(text, /# config mcp_servers\.json \/ broken: "command" must be a non-empty string/);
      const filtered = await run(
        'from code_mode import tools\nprint(tools.search("directory tree", server="filesystem"))',
      );
      assert.match(filtered.result.stdout, /directory_tree/);
      assert.doesNotMatch(filtered.result.stdout, /memory/);
      // The log message may trail the result by a tick.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const failure = logged.find((m) => (m.data as { event?: string; server?: string }).server === 'no-such-binary');
      assert.ok(failure, JSON.stringify(logged));
      assert.equal(failure.level, 'error');
      assert.match((failure.data as { error: string }).error, /ENOENT/);
      assert.equal(
        logged.filter((m) => (m.data as { server?: string }).server === 'no-such-binary').length,
        1,
        'told once',
      );
    });

    test('a task touching five tools runs as one run_python call', async () => {
      const notes = path.join(filesDir, 'notes.txt');
      const { result } = await run(`
from code_mode import tools
import json
tools.memory.create_entities(entities=[
    {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]},
    {"name": "Engine", "entityType": "machine", "observations": ["analytical"]},
])
tools.memory.create_relations(relations=[{"from": "Ada", "to": "Engine", "relationType": "programmed"}])
graph = tools.memory.read_graph()
summary = {e["name"]: e["observations"] for e in graph["entities"]}
tools.filesystem.write_file(path=${JSON.stringify(notes)}, content=json.dumps(summary, indent=1))
listing = tools.filesystem.list_directory(path=${JSON.stringify(filesDir)})
echoed = tools.everything.echo(message="five tools, one run")
print(json.dumps({"entities": sorted(summary), "relations": len(graph["relations"]), "listing": listing, "echo": echoed}))
`);
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      const out = JSON.parse(result.stdout);
      assert.deepEqual(out.entities, ['Ada', 'Engine']);
      assert.equal(out.relations, 1);
      assert.match(JSON.stringify(out.listing), /\[FILE\] notes\.txt/);
      assert.match(out.echo, /five tools, one run/);
      assert.ok(result.stdout.length < 4096, 'the answer stays small');
      assert.deepEqual(JSON.parse(fs.readFileSync(notes, 'utf8')), {
        Ada: ['wrote the first program'],
        Engine: ['analytical'],
      });
    });

    test('help() shows the generated signature and docs', async () => {
      const { result } = await run('from code_mode import tools\nhelp(tools.filesystem.write_file)');
      assert.match(result.stdout, /write_file\(\*, path, content\)/);
      assert.match(result.stdout, /Create a new file or completely overwrite/);
      assert.match(result.stdout, /content \(str\)/);
    });

    test('a tool error raises ToolError with the server message, and the session goes on', async () => {
      const { result } = await run(`
from code_mode import tools, ToolError
try:
    tools.filesystem.read_text_file(path="/etc/passwd")
except ToolError as e:
    print("ToolError:", e)
x = tools.everything.echo(message="still fine")
print(x)
`);
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.match(result.stdout, /ToolError: filesystem\.read_text_file: .*Access denied/);
      assert.match(result.stdout, /still fine/);
      const uncaught = await run('from code_mode import tools\ntools.filesystem.read_text_file(path="/etc/passwd")');
      assert.equal(uncaught.result.diagnostics?.error_type, 'RuntimeError');
      assert.match(uncaught.result.diagnostics?.message ?? '', /^ToolError: .*Access denied/);
    });

    test('an unknown server or tool gives a clear Python error', async () => {
      const { result } = await run(`
from code_mode import tools
for expr in ("tools.nope", "tools.memory.nope"):
    try:
        eval(expr)
    except AttributeError as e:
        print(e)
`);
      assert.match(result.stdout, /no MCP server 'nope'; callable servers: .*memory/);
      assert.match(result.stdout, /MCP server 'memory' has no tool 'nope'/);
    });

    test('structured content comes back as a dict', async () => {
      const { result } = await run(
        'from code_mode import tools\nr = tools.everything.get_structured_content(location="New York")\nprint(type(r).__name__, sorted(r))',
      );
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.match(result.stdout, /^dict \[.*'temperature'.*\]/);
    });

    test('a tool call still waiting when the time limit fires is abandoned and the session goes on', async () => {
      await run('kept = 41');
      const slow = await runPython(conn.client, {
        code: 'from code_mode import tools\ntools.everything.trigger_long_running_operation(duration=20, steps=2)',
        backend,
        timeout_s: 1,
      });
      assert.equal(slow.result.diagnostics?.error_type, 'TIMEOUT');
      const next = await run(
        'from code_mode import tools\nkept += 1\nprint(kept, tools.everything.echo(message="after"))',
      );
      assert.match(next.result.stdout, /after/);
      if (!slow.result.diagnostics?.session_reset) assert.match(next.result.stdout, /^42 /);
    });

    test('tools.search from Python lists signatures', async () => {
      const { result } = await run('from code_mode import tools\nprint(tools.search("echo"))');
      assert.match(result.stdout, /tools\.everything\.echo\(\*, message: str\)/);
    });

    test('a server added to the watched config file becomes callable without a restart', async () => {
      const file = path.join(dir, 'mcp_servers.json');
      const config = JSON.parse(fs.readFileSync(file, 'utf8'));
      config.servers['late-addition'] = {
        command: process.execPath,
        args: [path.join(repoRoot, 'test', 'fixtures', 'crash-server.mjs')],
      };
      fs.writeFileSync(file, JSON.stringify(config));
      let listed = '';
      for (let i = 0; i < 100 && !listed.includes('late_addition'); i++) {
        await new Promise((r) => setTimeout(r, 200));
        listed = (await run('from code_mode import tools\nprint(tools.search(server="late-addition"))')).result.stdout;
      }
      assert.match(listed, /tools\.late_addition\.ping\(\)/);
      const { result } = await run('from code_mode import tools\nprint(tools.late_addition.ping()["pong"])');
      assert.equal(result.stdout, 'True\n', JSON.stringify(result.diagnostics));
    });

    test('a server that crashes mid-session is reported and the next run still works', async () => {
      const first = await run('from code_mode import tools\nprint(tools.crash_test.ping()["pong"])');
      assert.equal(first.result.stdout, 'True\n');
      const crash = await run(
        'from code_mode import tools, ToolError\ntry:\n    tools.crash_test.crash()\nexcept ToolError as e:\n    print("crashed:", e)',
      );
      assert.equal(crash.result.success, true, JSON.stringify(crash.result.diagnostics));
      assert.match(crash.result.stdout, /^crashed: crash-test\.crash: .*closed.*exiting on purpose/s);
      const again = await run('from code_mode import tools\nprint(tools.crash_test.ping()["pong"])');
      assert.equal(again.result.stdout, 'True\n', JSON.stringify(again.result.diagnostics));
    });
  });
}

describe('code mode — an external server over Streamable HTTP', () => {
  let conn: StdioConnection;
  let dir: string;
  let server: ChildProcess;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-http-server-'));
    const port = await freeLoopbackPort();
    server = spawn(process.execPath, [serverScript('server-everything'), 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      server.stderr?.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('listening')) resolve();
      });
      server.once('exit', () => reject(new Error(`server-everything exited: ${seen}`)));
    });
    const config = path.join(dir, 'servers.json');
    fs.writeFileSync(
      config,
      JSON.stringify({ servers: { web: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } } }),
    );
    conn = await connectStdio(['--backend', 'python', '--servers', config, '--auto-approve', 'web.echo']);
  });
  after(async () => {
    await conn?.close();
    server?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('Python calls its tools like a stdio server', async () => {
    const { result } = await runPython(conn.client, {
      code: 'from code_mode import tools\nprint(tools.web.echo(message="over http"))',
    });
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(result.stdout, 'Echo: over http\n');
  });
});
