import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { exampleOf, shapeOf } from '../../src/webview/schemaShape';

// The input of server-memory's create_entities, as the server declares it.
const entities = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      entityType: { type: 'string' },
      observations: { type: 'array', items: { type: 'string' } },
      weight: { type: 'number', default: 1 },
    },
    required: ['name', 'entityType', 'observations'],
  },
};

test('the shape names every field, its type, and which are optional', () => {
  assert.equal(shapeOf(entities), '[{name: string, entityType: string, observations: string[], weight?: number}]');
  assert.equal(shapeOf({ enum: ['a', 'b'] }), '"a" | "b"');
  assert.equal(shapeOf({ type: 'object' }), 'object');
  assert.equal(shapeOf('not a schema'), 'any');
});

test('the example has the shape, with defaults and enum values where the schema gives them', () => {
  assert.deepEqual(exampleOf(entities), [{ name: '', entityType: '', observations: [''], weight: 1 }]);
  assert.equal(exampleOf({ type: 'string', enum: ['x', 'y'] }), 'x');
  assert.deepEqual(exampleOf({ type: ['object', 'null'], properties: { on: { type: 'boolean' } } }), { on: false });
});

test('a schema that refers to itself forever stops at a bounded depth', () => {
  const loop: Record<string, unknown> = { type: 'object', properties: {} };
  (loop.properties as Record<string, unknown>).next = loop;
  assert.match(shapeOf(loop), /^\{next\?: \{next\?: \{next\?: \{next\?: object\}\}\}\}$/);
  assert.ok(JSON.stringify(exampleOf(loop)).length < 100);
});
