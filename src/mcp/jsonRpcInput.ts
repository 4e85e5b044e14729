import { ProtocolErrorCode as ErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/server';
import { z } from 'zod';

// JSON-RPC 2.0's message shapes, strict as the spec has them (the SDK checks the params of each method later).
const RequestIdSchema = z.union([z.string(), z.number().int()]);
const paramsSchema = z.looseObject({ _meta: z.looseObject({}).optional() }).optional();
const JSONRPCRequestSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: RequestIdSchema,
  method: z.string(),
  params: paramsSchema,
});
const JSONRPCNotificationSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  method: z.string(),
  params: paramsSchema,
});
const JSONRPCMessageSchema = z.union([
  JSONRPCRequestSchema,
  JSONRPCNotificationSchema,
  z.strictObject({ jsonrpc: z.literal('2.0'), id: RequestIdSchema, result: z.looseObject({}) }),
  z.strictObject({
    jsonrpc: z.literal('2.0'),
    id: RequestIdSchema.optional(),
    error: z.looseObject({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
  }),
]);

/**
 * The params of the methods whose params the SDK checks with a message no person reads (the whole zod dump, or
 * -32603 for logging/setLevel's level): checked here first, so the answer is -32602 with a short message.
 */
const PARAMS_OF: Record<string, z.ZodType> = {
  'tools/call': z.looseObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() }),
  'logging/setLevel': z.looseObject({
    level: z.enum(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']),
  }),
};

/** The largest JSON-RPC message either transport accepts (a stdio line, an HTTP body), in bytes. */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/** JSON-RPC 2.0 wants `id: null` when the id could not be read, which the SDK's own error type does not allow. */
export interface JsonRpcErrorReply {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: { code: number; message: string };
}

/** What to do with one incoming message: hand it to the server, answer it with an error, or drop it (nobody to answer). */
export type Incoming =
  | { kind: 'message'; message: JSONRPCMessage }
  | { kind: 'answer'; reply: JsonRpcErrorReply }
  | { kind: 'drop'; problem: string };

export function errorReply(code: number, message: string, id: RequestId | null = null): JsonRpcErrorReply {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/**
 * Judges one message's text by the SDK's own JSONRPCMessageSchema. A broken request is answered (with its id
 * when one can be read); a broken notification or response is dropped, since JSON-RPC never answers those.
 */
export function classifyIncoming(text: string): Incoming {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'answer', reply: errorReply(ErrorCode.ParseError, 'Parse error: the message is not valid JSON') };
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return paramsChecked(parsed.data as JSONRPCMessage);
  if (Array.isArray(value)) {
    return {
      kind: 'answer',
      reply: errorReply(
        ErrorCode.InvalidRequest,
        'Invalid request: batches (JSON arrays) are not supported; send one message per line',
      ),
    };
  }
  if (typeof value !== 'object' || value === null) {
    return {
      kind: 'answer',
      reply: errorReply(ErrorCode.InvalidRequest, 'Invalid request: a message must be a JSON object'),
    };
  }
  const fields = value as Record<string, unknown>;
  if (!('id' in fields)) {
    if (typeof fields.method === 'string')
      return {
        kind: 'drop',
        problem: `a malformed notification (${fields.method}): ${problemsWith(JSONRPCNotificationSchema, fields)}`,
      };
    return {
      kind: 'answer',
      reply: errorReply(
        ErrorCode.InvalidRequest,
        'Invalid request: not a JSON-RPC 2.0 request (it needs "jsonrpc": "2.0", "id" and "method")',
      ),
    };
  }
  if (!('method' in fields) && ('result' in fields || 'error' in fields))
    return { kind: 'drop', problem: `a malformed response (id ${JSON.stringify(fields.id)})` };
  const id = RequestIdSchema.safeParse(fields.id);
  if (!id.success)
    return {
      kind: 'answer',
      reply: errorReply(ErrorCode.InvalidRequest, 'Invalid request: "id" must be a string or an integer'),
    };
  // A request whose envelope is right but whose params are not an object: the request itself was understood.
  const { params: _params, ...envelope } = fields;
  if (JSONRPCRequestSchema.safeParse(envelope).success) {
    return {
      kind: 'answer',
      reply: errorReply(
        ErrorCode.InvalidParams,
        `Invalid params: ${problemsWith(JSONRPCRequestSchema, fields)}`,
        id.data,
      ),
    };
  }
  return {
    kind: 'answer',
    reply: errorReply(
      ErrorCode.InvalidRequest,
      'Invalid request: not a JSON-RPC 2.0 request (it needs "jsonrpc": "2.0", "id" and "method", and nothing else but "params")',
      id.data,
    ),
  };
}

/** A request of a method in PARAMS_OF whose params do not fit is answered; anything else goes on to the server. */
function paramsChecked(message: JSONRPCMessage): Incoming {
  if (!('method' in message) || !('id' in message)) return { kind: 'message', message };
  const schema = PARAMS_OF[message.method];
  if (!schema) return { kind: 'message', message };
  const problems = problemsWith(schema, message.params ?? {});
  if (!problems) return { kind: 'message', message };
  return {
    kind: 'answer',
    reply: errorReply(ErrorCode.InvalidParams, `Invalid params for ${message.method}: ${problems}`, message.id),
  };
}

/** The answer to a message too big to read: its id is looked for in the bytes kept from its start and its end. */
export function tooLongReply(bytes: number, limit: number, head: Buffer, tail: Buffer): JsonRpcErrorReply {
  return errorReply(
    ErrorCode.InvalidRequest,
    `Invalid request: the message is ${bytes} bytes, over the limit of ${limit} bytes`,
    idFromEdges(head, tail),
  );
}

const STRING = String.raw`"(?:[^"\\]|\\.)*"`;
const ID_VALUE = String.raw`-?\d+|${STRING}`;
const SCALAR = String.raw`${STRING}|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null`;
/** `{"jsonrpc":"2.0","id":7,...`: the id after nothing but scalar members, so it is a top-level one. */
const LEADING_ID = new RegExp(
  String.raw`^\s*\{\s*(?:${STRING}\s*:\s*(?:${SCALAR})\s*,\s*)*"id"\s*:\s*(${ID_VALUE})\s*[,}]`,
);
/** `...,"id":7}` closing the line: the last member of the top-level object (the SDK's client writes it last). */
const TRAILING_ID = new RegExp(String.raw`[{,]\s*"id"\s*:\s*(${ID_VALUE})\s*\}\s*$`);

export function idFromEdges(head: Buffer, tail: Buffer): RequestId | null {
  for (const [bytes, pattern] of [
    [head, LEADING_ID],
    [tail, TRAILING_ID],
  ] as const) {
    const match = pattern.exec(bytes.toString('utf8'));
    if (!match) continue;
    const id = RequestIdSchema.safeParse(JSON.parse(match[1]));
    if (id.success) return id.data;
  }
  return null;
}

/** The schema's first complaints, e.g. `params: Invalid input: expected object, received array`. */
function problemsWith(schema: z.ZodType, value: unknown): string {
  return issueLines((schema.safeParse(value).error?.issues ?? []).slice(0, 3)).join('; ');
}

/** Each of zod's complaints as a person reads it: where (a dotted path), then what. */
export function issueLines(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) =>
    issue.path.length ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message,
  );
}
