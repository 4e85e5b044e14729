import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { StoreError, type Learning, type Stores } from '../engine/stores/index';
import type { LearningInput } from '../engine/stores/learnings';
import { guarded, outputSchema, refused, structuredResult, type OfferedTools } from './shared';

export interface StoreToolsContext {
  stores: Stores;
}

const learningOutput = z.object({ id: z.string() }).passthrough();

/** The code of a code file run_python is asked to run: a .py file of the store. */
export async function codeFileToRun(stores: Stores, filename: string): Promise<string> {
  // The name's own problems (traversal, separators) are the clearer message, so they are checked first.
  stores.codeFiles.path(filename);
  if (!filename.toLowerCase().endsWith('.py')) throw new StoreError(`only .py files run; "${filename}" is data (read it with code_file)`);
  return (await stores.codeFiles.read(filename)).content;
}

/** The tools over the persistent stores: code files built over several calls, and learnings. */
export function registerStoreTools(server: McpServer, ctx: StoreToolsContext): OfferedTools {
  const { stores } = ctx;

  const codeFile = server.registerTool(
    'code_file',
    {
      description:
        'Build a long program over several calls: create (replaces), append, read a file (plain name: .py .txt .json .csv .md; ' +
        'max 1 MB). Run it: run_python(file=...).',
      inputSchema: { action: z.enum(['create', 'append', 'read']), filename: z.string(), content: z.string().optional() },
      outputSchema: outputSchema({ filename: z.string(), size: z.number().int(), mtime: z.string(), bytes_written: z.number().int().optional(), content: z.string().optional() }),
      // create replaces a file; append is not idempotent.
      annotations: { title: 'Code file', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        if (args.action === 'read') {
          const file = await stores.codeFiles.read(args.filename);
          return structuredResult(file.content, { filename: file.name, size: file.size, mtime: file.mtime, content: file.content });
        }
        if (args.content === undefined) return refused(`${args.action} needs content`);
        const file = await stores.codeFiles.write(args.filename, args.content, args.action);
        const line = `${args.action === 'create' ? 'wrote' : 'appended'} ${file.bytes_written} bytes to ${file.name} (now ${file.size} bytes)`;
        return structuredResult(line, { filename: file.name, size: file.size, mtime: file.mtime, bytes_written: file.bytes_written });
      }),
  );

  const learnings = server.registerTool(
    'learnings',
    {
      description:
        'What worked. add kind error: error_pattern (e.g. "No module named \'cv2\'") + successful_approach; later failures matching ' +
        'it get it in diagnostics.hints. add kind semantic: objective + successful_approach. Optional: failed_approach, context, ' +
        'tags. search: query words (else newest).',
      inputSchema: {
        action: z.enum(['add', 'search']),
        kind: z.enum(['error', 'semantic']).optional(),
        error_pattern: z.string().optional(),
        objective: z.string().optional(),
        failed_approach: z.string().optional(),
        successful_approach: z.string().optional(),
        context: z.string().optional(),
        tags: z.array(z.string()).optional(),
        query: z.string().max(1000).optional(),
        limit: z.number().int().min(1).max(50).optional(),
      },
      outputSchema: outputSchema({ learnings: z.array(learningOutput), total: z.number().int(), updated: z.boolean().optional() }),
      // The store is bounded (the oldest go first) and adding the same fix again refreshes the entry in place.
      annotations: { title: 'Learnings', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        if (args.action === 'search') {
          const found = stores.learnings.search(args.query ?? '', args.limit ?? 10);
          const total = stores.learnings.count();
          return structuredResult(found.length === 0 ? `no learnings found (${total} stored)` : found.map(renderLearning).join('\n'), { learnings: found, total });
        }
        const { kind, error_pattern, objective, failed_approach, successful_approach, context, tags } = args;
        // The store checks which fields each kind needs and says what is missing.
        const { learning, updated } = stores.learnings.add({ kind, error_pattern, objective, failed_approach, successful_approach, context, tags } as LearningInput);
        return structuredResult(`${updated ? 'updated' : 'saved'} learning ${learning.id}`, { learnings: [learning], total: stores.learnings.count(), updated });
      }),
  );

  return { code_file: codeFile, learnings };
}

function renderLearning(l: Learning): string {
  const what = l.kind === 'error' ? `error "${l.error_pattern}"` : `goal "${l.objective}"`;
  const tags = l.tags.length > 0 ? ` [${l.tags.join(', ')}]` : '';
  return `${l.id} ${what} → ${l.successful_approach.replace(/\s+/g, ' ')}${tags}`;
}
