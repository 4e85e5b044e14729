// Tool and parameter names become Python identifiers; the original is kept for the actual call.

const PYTHON_KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case type'.split(
    ' ',
  ),
);

/** `read-file` → `read_file`, `2fa` → `_2fa`, `class` → `class_`. */
export function toIdentifier(name: string): string {
  let ident = name.replace(/[^A-Za-z0-9_]/g, '_');
  if (!ident) ident = '_';
  if (/^[0-9]/.test(ident)) ident = `_${ident}`;
  if (PYTHON_KEYWORDS.has(ident)) ident = `${ident}_`;
  return ident;
}

/** Identifiers for a list of names, made unique (`a-b` and `a_b` become `a_b` and `a_b_2`). */
export function uniqueIdentifiers(names: readonly string[], reserved: ReadonlySet<string> = new Set()): string[] {
  const taken = new Set(reserved);
  return names.map((name) => {
    const base = toIdentifier(name);
    let ident = base;
    for (let n = 2; taken.has(ident); n++) ident = `${base}_${n}`;
    taken.add(ident);
    return ident;
  });
}
