// A run's HTML display made to keep its styling under the page's CSP, which the sandboxed srcdoc frame inherits and
// which admits only nonced styles: `<style>` elements get the page's nonce, and `style` attributes (which no nonce
// can admit) become rules of one nonced stylesheet, keyed by a data attribute and made specific enough to win over
// the theme's rules, as inline styles do. What the CSP would refuse and log (scripts, event handler attributes,
// remote stylesheets, nested frames) is left out; the frame runs no script either way. This reads the markup as
// text, never as a document of the page (a parsed document would be checked against the CSP, and log, already).

/** Elements left out with their content (raw text, or markup that would load or run something). */
const DROPPED_WITH_CONTENT = new Set(['script', 'noscript', 'iframe', 'frame', 'object', 'template']);
/** Elements left out, having no content. */
const DROPPED_VOID = new Set(['link', 'meta', 'base', 'embed']);
/** Elements whose content is text up to their end tag. */
const RAW_TEXT = new Set(['style', 'script', 'textarea', 'title', 'xmp', 'noscript']);
/** A declaration list that could end its rule or open another: not carried over. */
const UNSAFE_DECLARATIONS = /[{}<>\\@]/;

interface Attribute {
  name: string;
  /** The value as written between its quotes (entities not decoded), or undefined for a bare name. */
  value: string | undefined;
}

export function frameMarkup(html: string, nonce: string): string {
  const rules: string[] = [];
  let out = '';
  let i = 0;
  while (i < html.length) {
    const open = html.indexOf('<', i);
    if (open < 0) {
      out += html.slice(i);
      break;
    }
    out += html.slice(i, open);
    if (html.startsWith('<!--', open)) {
      const end = html.indexOf('-->', open + 4);
      const stop = end < 0 ? html.length : end + 3;
      out += html.slice(open, stop);
      i = stop;
      continue;
    }
    const tag = readTag(html, open);
    if (!tag) {
      out += '&lt;';
      i = open + 1;
      continue;
    }
    i = tag.end;
    if (tag.closing) {
      if (!DROPPED_WITH_CONTENT.has(tag.name) && !DROPPED_VOID.has(tag.name)) out += `</${tag.name}>`;
      continue;
    }
    if (DROPPED_VOID.has(tag.name)) continue;
    if (DROPPED_WITH_CONTENT.has(tag.name)) {
      i = endOfElement(html, i, tag.name);
      continue;
    }
    out += startTag(tag.name, tag.attributes, nonce, rules);
    if (RAW_TEXT.has(tag.name)) {
      const end = endTagAt(html, i, tag.name);
      out += html.slice(i, end);
      i = end;
    }
  }
  const inline = rules.length ? `<style nonce="${nonce}">${rules.join('\n')}</style>` : '';
  return inline + out;
}

function startTag(name: string, attributes: Attribute[], nonce: string, rules: string[]): string {
  const kept: string[] = [];
  for (const attribute of attributes) {
    if (attribute.name.startsWith('on') || attribute.name === 'nonce') continue;
    if (attribute.name === 'style') {
      const declarations = decodeQuotes(attribute.value ?? '');
      if (!declarations.trim() || UNSAFE_DECLARATIONS.test(declarations)) continue;
      const key = String(rules.length);
      const selector = `[data-cm-style="${key}"]`;
      rules.push(`${selector}${selector}${selector}{${declarations}}`);
      kept.push(`data-cm-style="${key}"`);
      continue;
    }
    kept.push(attribute.value === undefined ? attribute.name : `${attribute.name}="${attribute.value}"`);
  }
  if (name === 'style') kept.push(`nonce="${nonce}"`);
  return `<${name}${kept.map((attribute) => ` ${attribute}`).join('')}>`;
}

/** The text of an attribute value, for the few entities a style is written with. */
function decodeQuotes(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

interface Tag {
  name: string;
  closing: boolean;
  attributes: Attribute[];
  /** Just past the tag's `>`. */
  end: number;
}

/** The tag at `at` (a `<`), or undefined when what follows is not a tag. */
function readTag(html: string, at: number): Tag | undefined {
  let i = at + 1;
  const closing = html[i] === '/';
  if (closing) i++;
  const nameMatch = /^[A-Za-z][A-Za-z0-9-]*/.exec(html.slice(i, i + 64));
  if (!nameMatch) return undefined;
  const name = nameMatch[0].toLowerCase();
  i += nameMatch[0].length;
  const attributes: Attribute[] = [];
  for (;;) {
    while (i < html.length && /[\s/]/.test(html[i]!)) i++;
    if (i >= html.length) return { name, closing, attributes, end: html.length };
    if (html[i] === '>') return { name, closing, attributes, end: i + 1 };
    const attributeName = /^[^\s/>=]+/.exec(html.slice(i, i + 256));
    if (!attributeName) {
      i++;
      continue;
    }
    i += attributeName[0].length;
    while (i < html.length && /\s/.test(html[i]!)) i++;
    if (html[i] !== '=') {
      attributes.push({ name: attributeName[0].toLowerCase(), value: undefined });
      continue;
    }
    i++;
    while (i < html.length && /\s/.test(html[i]!)) i++;
    let value: string;
    const quote = html[i];
    if (quote === '"' || quote === "'") {
      const close = html.indexOf(quote, i + 1);
      const stop = close < 0 ? html.length : close;
      value = html.slice(i + 1, stop);
      i = stop + 1;
    } else {
      const bare = /^[^\s>]*/.exec(html.slice(i))![0];
      value = bare;
      i += bare.length;
    }
    attributes.push({ name: attributeName[0].toLowerCase(), value: value.replace(/"/g, '&quot;') });
  }
}

/** The index where the end tag of `name` starts at or after `from`, or the end of the text. */
function endTagAt(html: string, from: number, name: string): number {
  const match = new RegExp(`</${name}[\\s>/]`, 'i').exec(html.slice(from));
  return match ? from + match.index : html.length;
}

/** Just past the end tag of `name` at or after `from` (the element's content skipped), or the end of the text. */
function endOfElement(html: string, from: number, name: string): number {
  const start = endTagAt(html, from, name);
  const close = html.indexOf('>', start);
  return close < 0 ? html.length : close + 1;
}
