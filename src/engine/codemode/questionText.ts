// The text of a tool-call question, one rendering for VS Code's modal and MCP elicitation. Everything in it but our
// own words comes from code nobody has read (argument names and values) or from another server (its name, the
// tool's name), so nothing reaches the person raw: a newline, an escape sequence or a bidi override in a name or a
// value could draw a fake argument line, a fake "Allow?" or push the real target out of sight. Names and strings are
// quoted, every invisible or layout-changing character is written as an escape, and long values keep both ends.

/** Characters a person cannot see as themselves: controls, formats (bidi, zero-width), separators, private use, lone surrogates, unassigned. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\p{Cn}]/gu;
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` with every hidden character as an escape (`\n`, `\u202E`, `\u{E0041}`) and backslashes doubled. */
export function visible(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(HIDDEN, (char) => SHORT_ESCAPES[char] ?? escapeCodePoint(char));
}

function escapeCodePoint(char: string): string {
  const code = char.codePointAt(0)!;
  return code > 0xffff
    ? `\\u{${code.toString(16).toUpperCase()}}`
    : `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** `text` in double quotes, made visible: a value can neither close its quote nor hide what it holds. */
export function quoted(text: string, max = Infinity): string {
  return `"${middleCut(visible(text).replace(/"/g, '\\"'), max)}"`;
}

/** A name from elsewhere (a server's, a tool's): as it is when it is plain, else quoted. */
export function shownName(name: string): string {
  return /^[\w.-]{1,80}$/.test(name) ? name : quoted(name, 80);
}

/** `text` cut in the middle past `max` characters, both ends kept, saying how many were left out; pairs kept whole. */
export function middleCut(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = Math.max(2, max - 24);
  let head = Math.ceil(keep / 2);
  let tail = text.length - Math.floor(keep / 2);
  if (isHigh(text.charCodeAt(head - 1))) head--;
  if (isLow(text.charCodeAt(tail))) tail++;
  return `${text.slice(0, head)}…(${tail - head} characters cut)…${text.slice(tail)}`;
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

const VALUE_CHARS = 160;
const TOTAL_CHARS = 1200;
const DEPTH = 4;
const ITEMS = 12;

/** One argument's value on one line, JSON-shaped, strings quoted and visible, bounded in depth, items and length. */
export function shownValue(value: unknown, max = VALUE_CHARS): string {
  return middleCut(render(value, DEPTH), max);
}

function render(value: unknown, depth: number): string {
  if (typeof value === 'string') return quoted(value, VALUE_CHARS * 4);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value !== 'object') return `<${typeof value}>`;
  if (depth === 0) return Array.isArray(value) ? `[…${value.length} items]` : '{…}';
  const entries = Array.isArray(value)
    ? value.map((item) => render(item, depth - 1))
    : Object.keys(value).map(
        (key) => `${quoted(key, 60)}: ${render((value as Record<string, unknown>)[key], depth - 1)}`,
      );
  const shown = entries.slice(0, ITEMS);
  if (entries.length > ITEMS) shown.push(`…${entries.length - ITEMS} more`);
  return Array.isArray(value) ? `[${shown.join(', ')}]` : `{${shown.join(', ')}}`;
}

/**
 * The arguments, one `"name": value` line each, in the order the tool receives them; arguments the tool's schema does
 * not declare are marked; past the total budget the rest are counted, never silently dropped.
 */
export function shownArgs(args: Record<string, unknown>, undeclared: readonly string[] = []): string {
  const names = Object.keys(args);
  if (names.length === 0) return '(no arguments)';
  const lines: string[] = [];
  let length = 0;
  for (const [i, name] of names.entries()) {
    const mark = undeclared.includes(name) ? '  ⚠ not in the tool’s schema' : '';
    const line = `${quoted(name, 60)}: ${shownValue(args[name])}${mark}`;
    if (length + line.length > TOTAL_CHARS) {
      const left = names.length - i;
      lines.push(`…and ${left} more argument${left === 1 ? '' : 's'} not shown`);
      break;
    }
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join('\n');
}

/**
 * The argument names a tool's JSON schema does not declare under `properties`. A schema that lists no properties
 * declares none only when it also closes the object (`additionalProperties: false`); otherwise it says nothing.
 */
export function undeclaredArgs(
  args: Record<string, unknown>,
  inputSchema: Record<string, unknown> | undefined,
): string[] {
  const properties = inputSchema?.properties;
  if (!properties || typeof properties !== 'object')
    return inputSchema?.additionalProperties === false ? Object.keys(args) : [];
  return Object.keys(args).filter((name) => !Object.prototype.hasOwnProperty.call(properties, name));
}
