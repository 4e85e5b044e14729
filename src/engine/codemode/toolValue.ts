import type { CallToolResult } from '@modelcontextprotocol/client';

/** What a tool call returns to Python: structured content, else parsed JSON text, else text. */
export function toolValue(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
  const blocks = result.content ?? [];
  const texts = blocks.filter((b): b is { type: 'text'; text: string } => b.type === 'text').map((b) => b.text);
  if (texts.length === 0) return blocks.length ? blocks : null;
  const parsed = texts.map(parseJsonOrText);
  if (texts.length === 1) return parsed[0];
  return parsed.every((p) => typeof p === 'string') ? texts.join('\n') : parsed;
}

/** The message of a tool's error result. */
export function toolErrorMessage(result: CallToolResult): string {
  const text = (result.content ?? [])
    .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
    .map((b) => b.text)
    .join('\n')
    .trim();
  return text || 'the tool reported an error without a message';
}

function parseJsonOrText(text: string): unknown {
  const trimmed = text.trim();
  if (!/^[[{"\d-]|^(true|false|null)$/.test(trimmed)) return text;
  try {
    return JSON.parse(trimmed);
  } catch {
    return text;
  }
}
