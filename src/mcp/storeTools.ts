import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Engine } from '../engine/engine';
import { StoreError, type Learning, type Stores } from '../engine/stores/index';
import type { BackendKind, RunOrigin } from '../engine/types';
import { runForTool, runPythonInput } from './server';

export interface StoreToolsContext {
  engine: Engine;
  stores: Stores;
  origin: RunOrigin;
  /** Code run from a file can reach beyond the server (see codeReachesOutside). */
  openWorld: boolean;
}

const filename = z.string().max(300).describe('Plain file name in the code-files folder, e.g. "analysis.py" (.py, .txt, .json, .csv or .md; no folders).');

/** The tools over the persistent stores (DESIGN.md section 3): code files built over several calls, and learnings. */
export function registerStoreTools(server: McpServer, ctx: StoreToolsContext): void {
  const { engine, stores, origin, openWorld } = ctx;

  server.registerTool(
    'write_code_file',
    {
      title: 'Write a code file',
      description:
        'Save text to a file in a private code-files folder, to build a long program over several calls ("create" replaces, ' +
        '"append" adds to the end), then run it with run_code_file. At most 1 MB per file.',
      inputSchema: {
        filename,
        content: z.string().describe('Text to write.'),
        mode: z.enum(['create', 'append']).optional().describe('"create" (default) makes or replaces the file; "append" adds to its end.'),
      },
      annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const mode = args.mode ?? 'create';
        const file = await stores.codeFiles.write(args.filename, args.content, mode);
        const text = `${mode === 'create' ? 'wrote' : 'appended'} ${file.bytes_written} bytes to ${file.name} (now ${file.size} bytes)`;
        return ok(text, { filename: file.name, mode, bytes_written: file.bytes_written, size: file.size, mtime: file.mtime });
      }),
  );

  server.registerTool(
    'read_code_file',
    {
      title: 'Read a code file',
      description: 'Return the content of a file written with write_code_file.',
      inputSchema: { filename },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const file = await stores.codeFiles.read(args.filename);
        return ok(file.content, { filename: file.name, content: file.content, size: file.size, mtime: file.mtime });
      }),
  );

  server.registerTool(
    'run_code_file',
    {
      title: 'Run a code file',
      description:
        'Run a .py file written with write_code_file, exactly as run_python would run its content (same session globals, ' +
        'same result: {success, stdout, stderr, duration_ms, diagnostics}).',
      inputSchema: {
        filename,
        backend: runPythonInput.backend,
        timeout_s: runPythonInput.timeout_s,
        session: runPythonInput.session,
      },
      annotations: { openWorldHint: openWorld },
    },
    (args, extra) =>
      guarded(async () => {
        // The name's own problems (traversal, separators) are the clearer message, so they are checked first.
        stores.codeFiles.path(args.filename);
        if (!args.filename.toLowerCase().endsWith('.py')) throw new StoreError(`only .py files run; "${args.filename}" is data (read it with read_code_file)`);
        const file = await stores.codeFiles.read(args.filename);
        return runForTool(
          engine,
          { code: file.content, backend: args.backend as BackendKind | undefined, timeoutS: args.timeout_s, session: args.session, origin },
          extra,
        );
      }),
  );

  server.registerTool(
    'add_learning',
    {
      title: 'Remember what worked',
      description:
        'Store a lesson for later runs. kind "error": error_pattern (text of the error message, e.g. "No module named \'cv2\'") and ' +
        'the successful_approach that fixed it; later failures matching the pattern get it as diagnostics.hints. ' +
        'kind "semantic": objective and the successful_approach that reached it.',
      inputSchema: {
        kind: z.enum(['error', 'semantic']).describe('"error": a fix for a failure; "semantic": how to reach a goal.'),
        error_pattern: z.string().optional().describe('kind "error": text that appears in the error message or traceback.'),
        failed_approach: z.string().optional().describe('kind "error": what did not work.'),
        objective: z.string().optional().describe('kind "semantic": the goal.'),
        successful_approach: z.string().describe('What worked.'),
        context: z.string().optional().describe('When this applies (libraries, backend, data).'),
        tags: z.array(z.string()).optional().describe('Up to 10 short keywords, e.g. ["pandas", "csv"].'),
      },
      annotations: { idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const { learning, updated } = stores.learnings.add(args);
        return ok(`${updated ? 'updated' : 'saved'} learning ${learning.id}`, { id: learning.id, updated, learning });
      }),
  );

  server.registerTool(
    'get_learnings',
    {
      title: 'Find past learnings',
      description: 'Look up stored learnings, best word matches first (tags, error pattern, objective, approaches); without search, the newest.',
      inputSchema: {
        search: z.string().max(1000).optional().describe('Words to look for, e.g. "pandas read_csv encoding".'),
        limit: z.number().int().min(1).max(50).optional().describe('Most learnings to return (default 10).'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const learnings = stores.learnings.search(args.search ?? '', args.limit ?? 10);
        const total = stores.learnings.count();
        const text = learnings.length === 0 ? `no learnings found (${total} stored)` : learnings.map(renderLearning).join('\n');
        return ok(text, { learnings, total });
      }),
  );
}

function renderLearning(l: Learning): string {
  const what = l.kind === 'error' ? `error "${l.error_pattern}"` : `goal "${l.objective}"`;
  const tags = l.tags.length > 0 ? ` [${l.tags.join(', ')}]` : '';
  return `${l.id} ${what} → ${l.successful_approach.replace(/\s+/g, ' ')}${tags}`;
}

function ok(text: string, fields: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: { success: true, ...fields } };
}

/** A caller's mistake comes back as an INVALID_ARGUMENT result shaped like a failed run's diagnostics. */
async function guarded(handler: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await handler();
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    return {
      content: [{ type: 'text', text: `[INVALID_ARGUMENT] ${error.message}` }],
      structuredContent: { success: false, diagnostics: { error_type: 'INVALID_ARGUMENT', message: error.message } },
      isError: true,
    };
  }
}
