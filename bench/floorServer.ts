// The MCP floor for `npm run bench`: an MCP server made with the same SDK as ours (McpServer over stdio) whose
// one tool runs nothing. A tools/call to it costs what any SDK stdio server costs (JSON-RPC framing, schema
// validation, two process hops); whatever a run_python call takes beyond it is ours.
//   node --import tsx bench/floorServer.ts
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

export const FLOOR_TOOL = 'noop';

const answer = () => ({ content: [{ type: 'text' as const, text: '2\n' }] });

/**
 * Serves the floor's tool over stdio; `before` runs first on each call with its code (hopFloorServer.ts: a round
 * trip to another process), so any floor differs from this one by that alone.
 */
export async function serveFloor(name: string, before?: (code: string) => Promise<void>): Promise<void> {
  const server = new McpServer({ name, version: '1.0.0' });
  server.registerTool(
    FLOOR_TOOL,
    {
      description: 'Returns a constant text; takes the same argument as run_python so it is validated the same way.',
      inputSchema: { code: z.string() },
    },
    // Without `before`, nothing is awaited: the floor itself stays the bare handler.
    before
      ? async ({ code }) => {
          await before(code);
          return answer();
        }
      : async () => answer(),
  );
  await server.connect(new StdioServerTransport());
}

if (require.main === module) {
  serveFloor('code-mode-bench-floor').catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
