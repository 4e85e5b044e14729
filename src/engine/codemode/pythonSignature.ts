import { uniqueIdentifiers } from './pythonNames';

export type JsonSchema = Record<string, unknown>;

export interface PythonParam {
  /** The JSON property name sent to the tool. */
  name: string;
  /** The keyword argument name in Python. */
  ident: string;
  required: boolean;
  annotation: string;
  description: string;
}

function annotationFor(schema: unknown): string {
  if (typeof schema !== 'object' || schema === null) return 'Any';
  const s = schema as JsonSchema;
  if (Array.isArray(s.enum)) return `Literal[${s.enum.map((v) => JSON.stringify(v)).join(', ')}]`;
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'string':
      return 'str';
    case 'integer':
      return 'int';
    case 'number':
      return 'float';
    case 'boolean':
      return 'bool';
    case 'array':
      return `list[${annotationFor(s.items)}]`;
    case 'object':
      return 'dict';
    default:
      if (Array.isArray(s.anyOf)) return s.anyOf.map(annotationFor).join(' | ');
      return 'Any';
  }
}

/** The keyword-only parameters of a tool, from its input JSON schema. Python keywords and odd names are sanitized. */
export function pythonParams(inputSchema: JsonSchema | undefined): PythonParam[] {
  const properties = (inputSchema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(inputSchema?.required) ? (inputSchema.required as string[]) : []);
  const names = Object.keys(properties);
  // Required parameters first, so the signature reads naturally.
  names.sort((a, b) => Number(required.has(b)) - Number(required.has(a)));
  const idents = uniqueIdentifiers(names);
  return names.map((name, i) => ({
    name,
    ident: idents[i],
    required: required.has(name),
    annotation: annotationFor(properties[name]),
    description: typeof properties[name]?.description === 'string' ? (properties[name].description as string) : '',
  }));
}

/** `read_file(*, path: str, head: int = None) -> Any` */
export function pythonSignature(ident: string, params: PythonParam[]): string {
  const args = params.map((p) => `${p.ident}: ${p.annotation}${p.required ? '' : ' = None'}`);
  return `${ident}(${args.length ? `*, ${args.join(', ')}` : ''})`;
}

/** The docstring Python's help() shows: description, then one line per argument. */
export function pythonDocstring(
  description: string,
  params: PythonParam[],
  originalName: string,
  ident: string,
): string {
  const lines = [description.trim() || '(no description)'];
  if (params.length) {
    lines.push('', 'Args:');
    for (const p of params) {
      const rename = p.ident !== p.name ? ` (sent as "${p.name}")` : '';
      lines.push(
        `    ${p.ident} (${p.annotation}${p.required ? '' : ', optional'})${rename}: ${p.description.replace(/\s+/g, ' ').trim()}`.trimEnd(),
      );
    }
  }
  if (originalName !== ident) lines.push('', `MCP tool name: ${originalName}`);
  lines.push(
    '',
    'Returns the structured content, else parsed JSON text, else text. Raises ToolError on failure, ToolCallRefused (a PermissionError) when the call was not approved.',
  );
  return lines.join('\n');
}

export function firstSentence(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  const end = line.search(/\.\s/);
  return (end > 0 ? line.slice(0, end + 1) : line).slice(0, 200);
}
