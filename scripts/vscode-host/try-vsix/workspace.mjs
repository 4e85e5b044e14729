// The workspace the walkthrough opens: the files a person runs, the external MCP server, quiet user settings.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../common.mjs';

export const PY_FILE = 'scores.py';
export const REPORT_FILE = 'report.py';
export const APPROVAL_FILE = 'remember.py';
/** The memory MCP server the workspace lists when it is installed; step 8 writes to it. */
export const memoryServer = path.join(
  repoRoot,
  'node_modules',
  '@modelcontextprotocol',
  'server-memory',
  'dist',
  'index.js',
);

/** The file slow.py waits for before it finishes. */
export const goFlag = (workspace) => path.join(workspace, 'go.flag');

/** Writes the workspace (dirs.workspace) and the user settings (dirs.userData); `tmp` holds the memory server's file. */
export function writeWorkspace(tmp, dirs) {
  /** A file in the walkthrough's workspace, from its lines. */
  function writeWorkspaceFile(name, lines) {
    fs.writeFileSync(path.join(dirs.workspace, name), lines.join('\n'));
  }

  writeWorkspaceFile(PY_FILE, [
    '# Select some lines and press Ctrl+Alt+Enter (Code Mode: Run Selection or Line).',
    'import statistics',
    '',
    'scores = [88, 92, 79, 93, 85]',
    'print("mean", statistics.mean(scores))',
    'print("stdev", round(statistics.stdev(scores), 2))',
    '',
  ]);
  // A report a person runs with ▶: text, a table, text and a figure (a PNG made in pure Python), and the
  // name of a data file it reads, which must not be attached to their card.
  fs.writeFileSync(path.join(dirs.workspace, 'data.csv'), 'city,temp\nOslo,4\nLima,19\n');
  writeWorkspaceFile(REPORT_FILE, [
    'import struct, zlib',
    'print("read from data.csv")',
    'class Table:',
    '    def _repr_html_(self):',
    '        return "<table><tr><th>city</th><th>temp</th></tr><tr><td>Oslo</td><td>4</td></tr></table>"',
    'display(Table())',
    'print("done")',
    'def chunk(kind, data):',
    '    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)',
    'rows = b"".join(b"\\x00" + bytes(v for x in range(96) for v in (x * 2, y * 4, 160)) for y in range(48))',
    'png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 96, 48, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")',
    'display(png, title="gradient")',
    '',
  ]);
  // Step 7's files: one that waits for a flag file (the walkthrough writes it), one to queue behind it.
  fs.writeFileSync(
    path.join(dirs.workspace, 'slow.py'),
    `import os, time\nprint("slow started", flush=True)\nwhile not os.path.exists(${JSON.stringify(goFlag(dirs.workspace))}):\n    time.sleep(0.1)\nprint("slow done")\n`,
  );
  fs.writeFileSync(path.join(dirs.workspace, 'next.py'), 'print("next ran")\n');
  // Step 8's file: a write to the memory server (not read-only, so it asks first), then a read (read-only).
  writeWorkspaceFile(APPROVAL_FILE, [
    'from code_mode import tools',
    'try:',
    '    tools.memory.create_entities(entities=[{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}])',
    '    print("created Ada")',
    'except PermissionError as refused:',
    '    print("refused:", refused)',
    'print([entity["name"] for entity in tools.memory.read_graph()["entities"]])',
    '',
  ]);
  // One external MCP server for the tree's "External Servers" section (Code Mode's own file, not
  // .vscode/mcp.json, so VS Code itself starts nothing).
  if (fs.existsSync(memoryServer)) {
    fs.writeFileSync(
      path.join(dirs.workspace, 'mcp_servers.json'),
      JSON.stringify(
        {
          servers: {
            memory: {
              command: process.execPath,
              args: [memoryServer],
              env: { MEMORY_FILE_PATH: path.join(tmp, 'memory.jsonl') },
            },
          },
        },
        null,
        2,
      ) + '\n',
    );
  }
  // A quiet first start: no welcome page, no tips. Nothing about Code Mode is configured.
  fs.writeFileSync(
    path.join(dirs.userData, 'User', 'settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'extensions.ignoreRecommendations': true,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
      },
      null,
      2,
    ),
  );
}
