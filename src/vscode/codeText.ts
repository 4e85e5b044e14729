// Pure text helpers for the run commands (no vscode import, so unit tests run them in plain node).

/** Removes the indentation every non-blank line shares, so a block selected from inside a function runs. */
export function dedent(code: string): string {
  const lines = code.replace(/\r\n/g, '\n').split('\n');
  let common: string | undefined;
  for (const line of lines) {
    if (line.trim() === '') continue;
    const indent = /^[ \t]*/.exec(line)?.[0] ?? '';
    if (common === undefined || !indent.startsWith(common)) {
      let shared = 0;
      const base = common ?? indent;
      while (shared < base.length && shared < indent.length && base[shared] === indent[shared]) shared++;
      common = base.slice(0, shared);
    }
  }
  if (!common) return lines.join('\n');
  const width = common.length;
  return lines.map((line) => (line.trim() === '' ? '' : line.slice(width))).join('\n');
}

export interface LineRange {
  startLine: number;
  startCharacter: number;
  endLine: number;
  endCharacter: number;
}

/**
 * What "run selection" runs: the current line when nothing is selected; the exact text of a selection
 * within one line (an expression); the full lines of a selection spanning several lines (so a block whose
 * first line was selected from its middle still parses). Always dedented.
 */
export function codeToRun(lines: readonly string[], range: LineRange): string {
  const empty = range.startLine === range.endLine && range.startCharacter === range.endCharacter;
  if (empty) return dedent(lines[range.startLine] ?? '');
  if (range.startLine === range.endLine)
    return dedent((lines[range.startLine] ?? '').slice(range.startCharacter, range.endCharacter));
  // A selection ending at column 0 of a line does not include that line.
  const lastLine = range.endCharacter === 0 ? range.endLine - 1 : range.endLine;
  return dedent(lines.slice(range.startLine, lastLine + 1).join('\n'));
}
