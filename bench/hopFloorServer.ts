// The MCP floor plus one process hop, for `npm run bench`: the floor's SDK server (floorServer.ts) whose tool
// sends the code to a Python process over a pipe and answers once that process has echoed it back. What a
// backend that runs code in a process of its own cannot go below, before it runs anything.
//   node --import tsx bench/hopFloorServer.ts <python>
import { spawn } from 'node:child_process';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { FLOOR_TOOL } from './floorServer';

const ECHO =
  'import os\nwhile True:\n    data = os.read(0, 65536)\n    if not data:\n        break\n    os.write(1, data)\n';

async function main(): Promise<void> {
  const echo = spawn(process.argv[2] ?? 'python3', ['-c', ECHO], { stdio: ['pipe', 'pipe', 'inherit'] });
  let answered: (() => void) | undefined;
  echo.stdout.on('data', () => {
    const answer = answered;
    answered = undefined;
    answer?.();
  });
  const server = new McpServer({ name: 'code-mode-bench-hop-floor', version: '1.0.0' });
  server.registerTool(
    FLOOR_TOOL,
    {
      description: 'Echoes the code through a Python process, then returns a constant text.',
      inputSchema: { code: z.string() },
    },
    async ({ code }) => {
      await new Promise<void>((resolve) => {
        answered = resolve;
        echo.stdin.write(`${JSON.stringify(code)}\n`);
      });
      return { content: [{ type: 'text', text: '2\n' }] };
    },
  );
  await server.connect(new StdioServerTransport());
  // The echo process ends with this one: its stdin closes.
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
