// A tool's schemas as tools/list shows them: in the JSON Schema every model provider takes (a list of types as
// anyOf), and without the bytes that carry no meaning, since the list is read into a model's context: `$schema`
// (the schemas use only keywords that mean the same in draft-07 and in 2020-12, MCP's default dialect), and
// keywords set to what JSON Schema assumes anyway (`additionalProperties: true` or `{}`, `items: {}`, `properties:
// {}`, `propertyNames: {type: string}`: JSON's names are strings), and the bounds zod gives every integer (±2^53-1), which no argument or result of ours comes near.
import { z } from 'zod';

/** Keywords whose values are data (names, values), not schemas: left as they are. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'required', 'type', 'pattern']);

/**
 * An input schema as JSON Schema for tools/list, without `additionalProperties: false`: arguments a tool does not
 * declare are dropped, not refused, as MCP servers commonly do.
 */
export function listedSchema(schema: z.ZodType): Record<string, unknown> {
  let listed = listedInputs.get(schema);
  if (!listed) {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    delete json.additionalProperties;
    listed = withoutDefaults(json);
    listedInputs.set(schema, listed);
  }
  return listed;
}

// The schemas are made once per module, the servers that list them once per connection (per request for 2026
// over HTTP): each is converted once. Lists are serialized, never changed, so one object serves them all.
const listedInputs = new WeakMap<z.ZodType, Record<string, unknown>>();

function withoutDefaults<T extends object>(schema: T): T {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (
      value === undefined ||
      key === '$schema' ||
      (key === 'additionalProperties' && (value === true || isEmptyObject(value))) ||
      ((key === 'items' || key === 'properties') && isEmptyObject(value)) ||
      (key === 'propertyNames' && isStringType(value)) ||
      (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) ||
      (key === 'maximum' && value === Number.MAX_SAFE_INTEGER)
    )
      continue;
    // Gemini's function declarations refuse a list of types (test/support/providerSchemaRules.ts).
    if (key === 'type' && Array.isArray(value)) kept.anyOf = value.map((type: unknown) => ({ type }));
    else if (DATA_KEYWORDS.has(key) || typeof value !== 'object' || value === null) kept[key] = value;
    // Under `properties` the keys are names, which may be anything: only the schemas under them are compacted.
    else if (key === 'properties')
      kept[key] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, withoutDefaults(sub as object)]),
      );
    else kept[key] = Array.isArray(value) ? value.map((sub: object) => withoutDefaults(sub)) : withoutDefaults(value);
  }
  return kept as T;
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

function isStringType(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.keys(value).length === 1 &&
    (value as { type?: unknown }).type === 'string'
  );
}
