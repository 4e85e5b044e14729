// What the MCP server keeps of results after answering (events a client may replay, task results it may fetch
// later) is bounded in bytes. A result too large to keep whole is kept without its large parts, the images and
// texts of its displays, with a note saying so; its text rendering and its JSON stay.
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/server';

/** Content items at most this large are kept when a result is shrunk: the text rendering, the JSON, short notes. */
const SMALL_ITEM_BYTES = 64 * 1024;

/**
 * Bytes `value` takes as JSON, near enough for a budget (escapes are not counted), without serializing it: a run's
 * result can be a hundred megabytes.
 */
export function approximateBytes(value: unknown): number {
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') bytes += item.length + 2;
    else if (typeof item === 'number' || typeof item === 'boolean') bytes += 8;
    else if (item === null || item === undefined) bytes += 4;
    else if (Array.isArray(item)) {
      bytes += 2 + item.length;
      for (const element of item) stack.push(element);
    } else if (typeof item === 'object') {
      bytes += 2;
      for (const [key, element] of Object.entries(item)) {
        bytes += key.length + 4;
        stack.push(element);
      }
    }
  }
  return bytes;
}

/**
 * A copy of `result` within about `budget` bytes: content items larger than a short text go, largest first (the
 * first text item, where the text rendering starts, always stays), displays in the structured content lose their data, and a text
 * item says what went and why.
 */
export function shrinkToolResult(result: CallToolResult, budget: number, why: string): CallToolResult {
  const content = [...(result.content ?? [])];
  const sizes = content.map((item) => approximateBytes(item));
  let total = approximateBytes(result);
  let dropped = 0;
  let droppedBytes = 0;
  // The first text item is the start of the run's text rendering (a display may come before it).
  const firstText = content.findIndex((item) => item.type === 'text');
  const order = content
    .map((_, index) => index)
    .filter((index) => index !== firstText && sizes[index] > SMALL_ITEM_BYTES);
  order.sort((a, b) => sizes[b] - sizes[a]);
  const gone = new Set<number>();
  for (const index of order) {
    if (total <= budget) break;
    gone.add(index);
    total -= sizes[index];
    dropped++;
    droppedBytes += sizes[index];
  }
  const kept = content.filter((_, index) => !gone.has(index));
  let structuredContent = result.structuredContent as Record<string, unknown> | undefined;
  const displays = structuredContent?.displays;
  if (Array.isArray(displays) && displays.some((d) => typeof d === 'object' && d !== null && 'data' in d)) {
    // The JSON text item already leaves the data out; the structured content now matches it.
    structuredContent = {
      ...structuredContent,
      displays: displays.map((d) =>
        typeof d === 'object' && d !== null ? withoutData(d as Record<string, unknown>) : d,
      ),
    };
  }
  if (dropped > 0 || structuredContent !== result.structuredContent) {
    const what =
      dropped > 0
        ? `${dropped} content item(s) (${(droppedBytes / 1e6).toFixed(1)} MB) and the data of its displays`
        : 'the data of its displays';
    kept.push({ type: 'text', text: `[${what} are no longer kept: ${why}; run the code again to see them]` });
  }
  return { ...result, content: kept, ...(structuredContent === undefined ? {} : { structuredContent }) };
}

/** `message` as kept: a response whose tool result is larger than `budget` is shrunk (a copy; the original is being sent). */
export function shrinkMessage(message: JSONRPCMessage, budget: number, why: string): JSONRPCMessage {
  const result = (message as { result?: unknown }).result;
  if (typeof result !== 'object' || result === null || !Array.isArray((result as CallToolResult).content))
    return message;
  return { ...message, result: shrinkToolResult(result as CallToolResult, budget, why) } as JSONRPCMessage;
}

function withoutData(display: Record<string, unknown>): Record<string, unknown> {
  const { data: _data, ...rest } = display;
  return rest;
}
