// The JSON Schema keywords each model provider documents for a tool's parameters, as a checker: what a schema
// uses that a provider refuses or drops. Kept to the documented lists (OpenAI's structured outputs in strict mode,
// Gemini's function declarations, Anthropic's tool input_schema); a keyword not listed for a provider is a finding.

type Schema = Record<string, unknown>;

/** OpenAI strict mode: these keywords only; objects closed (a converter may add additionalProperties: false). */
const OPENAI_STRICT = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'description',
  'title',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  '$defs',
  '$ref',
]);

/** Gemini function declarations: the OpenAPI 3.0 subset of its Schema object; `type` is one name, never a list. */
const GEMINI = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
  'additionalProperties',
]);

/** Where a keyword's value holds schemas (walked) rather than data. */
const SUBSCHEMA_LISTS = new Set(['anyOf']);

export interface Finding {
  provider: 'openai' | 'gemini' | 'anthropic';
  path: string;
  problem: string;
}

/** What each provider would refuse in `schema`, a tool's inputSchema; empty when all three take it. */
export function providerFindings(schema: Schema): Finding[] {
  const findings: Finding[] = [];
  if (schema.type !== 'object')
    findings.push({ provider: 'anthropic', path: '', problem: 'input_schema must have type "object" at its root' });
  for (const combinator of ['anyOf', 'oneOf', 'allOf'])
    if (combinator in schema)
      findings.push({ provider: 'anthropic', path: '', problem: `${combinator} is not allowed at the root` });
  walk(schema, '', findings);
  return findings;
}

function walk(schema: Schema, at: string, findings: Finding[]): void {
  for (const [key, value] of Object.entries(schema)) {
    const path = `${at}/${key}`;
    if (!OPENAI_STRICT.has(key))
      findings.push({ provider: 'openai', path, problem: `${key} is not supported in strict mode` });
    if (!GEMINI.has(key)) findings.push({ provider: 'gemini', path, problem: `${key} is not in its Schema object` });
    if (key === 'type' && typeof value !== 'string')
      findings.push({ provider: 'gemini', path, problem: 'type must be one name, not a list' });
    if (key === 'additionalProperties' && value !== false)
      findings.push({ provider: 'openai', path, problem: 'strict mode takes only additionalProperties: false' });
    if (key === 'properties')
      for (const [name, sub] of Object.entries(value as Record<string, Schema>)) walk(sub, `${path}/${name}`, findings);
    else if (key === 'items') walk(value as Schema, path, findings);
    else if (SUBSCHEMA_LISTS.has(key)) (value as Schema[]).forEach((sub, i) => walk(sub, `${path}/${i}`, findings));
  }
}
