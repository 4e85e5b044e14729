// Code mode calls servers of either protocol revision from Python: one on the SDK v2 that speaks only 2026-07-28,
// 2025 servers on the v1 SDK (memory, from npm), and a 2025 server that ends on any request before `initialize`.
// Each configured server starts once: the revision is asked on the server's own process, never on a second one;
// only the server that ends on the question is started again, once, having done nothing.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connectStdio, repoRoot, runPython, type StdioConnection } from '../support/mcp';

const fixture = (name: string) => path.join(repoRoot, 'test', 'fixtures', name);

describe('code mode across protocol revisions', () => {
  let conn: StdioConnection;
  let dir: string;
  let starts: string;
  const run = (code: string) => runPython(conn.client, { code, backend: 'python', timeout_s: 60 });
  const startsOf = (kind: string) =>
    fs
      .readFileSync(starts, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith(`${kind} `)).length;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-revisions-'));
    starts = path.join(dir, 'starts.txt');
    fs.writeFileSync(starts, '');
    const servers = path.join(dir, 'mcp_servers.json');
    fs.writeFileSync(
      servers,
      JSON.stringify({
        servers: {
          modern: {
            command: process.execPath,
            args: [fixture('modern-only-server.mjs')],
            env: { STARTS_FILE: starts },
          },
          'ends-on-probe': {
            command: process.execPath,
            args: [fixture('probe-exiting-server.mjs')],
            env: { STARTS_FILE: starts },
          },
          memory: {
            command: process.execPath,
            args: [path.join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js')],
            env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') },
          },
        },
      }),
    );
    conn = await connectStdio(['--backend', 'python', '--servers', servers, '--tool-approval', 'allow']);
  });
  after(async () => {
    await conn?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a 2026-only server is called like any other, and starts once', async () => {
    const { result } = await run(
      'from code_mode import tools\nprint(tools.modern.greet(name="Ada"))\nprint(tools.modern.greet(name="Lin"))',
    );
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.match(result.stdout, /'hello': 'Ada', 'era': 'modern'/);
    assert.match(result.stdout, /'hello': 'Lin'/);
    assert.equal(startsOf('modern'), 1);
  });

  test('2025 servers keep working: one on the v1 SDK, and one that ends on the question (started again once)', async () => {
    const { result } = await run(
      'from code_mode import tools\n' +
        'tools.memory.create_entities(entities=[{"name": "Ada", "entityType": "person", "observations": ["wrote notes"]}])\n' +
        'print(tools.memory.read_graph())\n' +
        'print(tools.ends_on_probe.echo(text="still here"))',
    );
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.match(result.stdout, /Ada/);
    assert.match(result.stdout, /echo: still here/);
    assert.equal(
      startsOf('legacy'),
      2,
      `started for the question, ended at once, started again to be opened: ${conn.stderr()}`,
    );
    const again = await run('from code_mode import tools\nprint(tools.ends_on_probe.echo(text="again"))');
    assert.match(again.result.stdout, /echo: again/);
    assert.equal(startsOf('legacy'), 2, 'the connection is kept');
  });

  test('tools.search() lists the tools of every revision', async () => {
    const { result } = await run('from code_mode import tools\nprint(tools.search())');
    assert.match(result.stdout, /tools\.modern\.greet\(\*, name: str\)/);
    assert.match(result.stdout, /tools\.ends_on_probe\.echo\(/);
    assert.match(result.stdout, /tools\.memory\.create_entities\(/);
  });
});
