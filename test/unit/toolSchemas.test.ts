import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { z } from 'zod';
import { listedSchema } from '../../src/mcp/toolSchemas';

test('a listed schema keeps what constrains and drops what JSON Schema assumes anyway', () => {
  const schema = z.looseObject({
    count: z.number().int(),
    limit: z.number().int().min(1).max(50),
    kind: z.union([z.string(), z.null()]),
    extra: z.record(z.string(), z.unknown()),
    any: z.looseObject({}),
  });
  assert.deepEqual(listedSchema(schema), {
    type: 'object',
    properties: {
      count: { type: 'integer' },
      limit: { type: 'integer', minimum: 1, maximum: 50 },
      kind: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      extra: { type: 'object' },
      any: { type: 'object' },
    },
    required: ['count', 'limit', 'kind', 'extra', 'any'],
  });
});

test('an input schema does not close the object, and a property named like a keyword stays', () => {
  const listed = listedSchema(z.object({ items: z.string(), properties: z.boolean().optional() }));
  assert.deepEqual(listed, {
    type: 'object',
    properties: { items: { type: 'string' }, properties: { type: 'boolean' } },
    required: ['items'],
  });
});
