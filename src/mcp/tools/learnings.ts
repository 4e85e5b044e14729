// learnings: fixes that worked, added by the agent and searched (failures that match one get it as a hint).
import { z } from 'zod';
import type { Learning, Stores, LearningInput } from '../../engine/index';
import { guarded, structuredResult } from '../shared';
import type { RegisteredTool, ToolRegistry } from '../toolRegistry';

const learningsInput = z.object({
  action: z.enum(['add', 'search']),
  kind: z.enum(['error', 'semantic']).optional(),
  error_pattern: z.string().optional(),
  objective: z.string().optional(),
  failed_approach: z.string().optional(),
  successful_approach: z.string().optional(),
  context: z.string().optional(),
  tags: z.array(z.string()).optional(),
  query: z
    .string()
    .refine((query) => query.length <= 1000, 'query is at most 1000 characters')
    .optional(),
  limit: z.number().int().min(1).max(50).optional(),
});

/** `learnings`, over the learnings store. */
export function registerLearningsTool(registry: ToolRegistry, stores: Stores): RegisteredTool {
  return registry.register('learnings', {
    description:
      'What worked, for later. add kind error: error_pattern + successful_approach (a matching failure gets it as a ' +
      'hint); add kind semantic: objective + successful_approach. search: query (else newest).',
    input: learningsInput,
    // The store is bounded (the oldest go first) and adding the same fix again refreshes the entry in place.
    annotations: {
      title: 'Learnings',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    call: (args) =>
      guarded(async () => {
        if (args.action === 'search') {
          const found = stores.learnings.search(args.query ?? '', args.limit ?? 10);
          const total = stores.learnings.count();
          return structuredResult(
            found.length === 0 ? `no learnings found (${total} stored)` : found.map(renderLearning).join('\n'),
            { learnings: found, total },
          );
        }
        const { kind, error_pattern, objective, failed_approach, successful_approach, context, tags } = args;
        // The store checks which fields each kind needs and says what is missing.
        const { learning, updated } = stores.learnings.add({
          kind,
          error_pattern,
          objective,
          failed_approach,
          successful_approach,
          context,
          tags,
        } as LearningInput);
        return structuredResult(`${updated ? 'updated' : 'saved'} learning ${learning.id}`, {
          learnings: [learning],
          total: stores.learnings.count(),
          updated,
        });
      }),
  });
}

function renderLearning(l: Learning): string {
  const what = l.kind === 'error' ? `error "${l.error_pattern}"` : `goal "${l.objective}"`;
  const tags = l.tags.length > 0 ? ` [${l.tags.join(', ')}]` : '';
  return `${l.id} ${what} → ${l.successful_approach.replace(/\s+/g, ' ')}${tags}`;
}
