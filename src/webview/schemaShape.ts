// What a JSON-valued tool argument looks like, from its JSON schema: a one-line shape (fields and types)
// and an example value, so a person filling a tool form sees what to type instead of a bare JSON box.
// Pure: the Chromium page bundles it and unit tests run it in Node. Schemas come from MCP servers, so they
// are read defensively and nesting is bounded.

type Schema = Record<string, unknown>;
const MAX_DEPTH = 4;

function asSchema(value: unknown): Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Schema) : {};
}

function typeOf(schema: Schema): string | undefined {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.find((t): t is string => typeof t === 'string' && t !== 'null');
  if (schema.properties) return 'object';
  if (schema.items) return 'array';
  return undefined;
}

function properties(schema: Schema): [string, Schema][] {
  return Object.entries(asSchema(schema.properties)).map(([name, value]) => [name, asSchema(value)]);
}

function isRequired(schema: Schema, name: string): boolean {
  return Array.isArray(schema.required) && schema.required.includes(name);
}

/** e.g. `[{name: string, entityType: string, observations?: string[]}]`. */
export function shapeOf(schema: unknown, depth = 0): string {
  const s = asSchema(schema);
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const type = typeOf(s);
  if (depth >= MAX_DEPTH) return type ?? 'any';
  if (type === 'array') {
    const item = shapeOf(s.items, depth + 1);
    return /^[\w]+$/.test(item) ? `${item}[]` : `[${item}]`;
  }
  if (type === 'object') {
    const fields = properties(s).map(
      ([name, field]) => `${name}${isRequired(s, name) ? '' : '?'}: ${shapeOf(field, depth + 1)}`,
    );
    return fields.length ? `{${fields.join(', ')}}` : 'object';
  }
  return type ?? 'any';
}

/** A value of the schema's shape: its default or first example where it gives one, else a placeholder per type. */
export function exampleOf(schema: unknown, depth = 0): unknown {
  const s = asSchema(schema);
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const type = typeOf(s);
  if (depth >= MAX_DEPTH) return null;
  switch (type) {
    case 'array':
      return [exampleOf(s.items, depth + 1)];
    case 'object':
      return Object.fromEntries(properties(s).map(([name, field]) => [name, exampleOf(field, depth + 1)]));
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}
