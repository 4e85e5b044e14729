// The backend's check of every message from a host process, and the one definition of those messages: their types
// are the schema's (protocol.ts re-exports them). The host runs the code it is given and is within that code's
// reach, so a message may be forged or malformed: anything that does not match the protocol ends that host (the
// session is reset and says so), and never reaches the rest of the server.
import { z } from 'zod';

const stream = z.enum(['stdout', 'stderr']);
const text = z.string();
const dropped = z.number().nonnegative();
const outputChunk = z.union([z.object({ stream, text }).strict(), z.object({ stream, dropped }).strict()]);
const display = z
  .object({
    mime: z.string().max(200),
    data: z.string(),
    title: z.string().max(1000).optional(),
    // The value of the code's last expression (BackendDisplay); its text is bounded by the engine.
    result: z.literal(true).optional(),
    text: z.string().optional(),
  })
  .strict();
const outcome = z.discriminatedUnion('status', [
  z.object({ status: z.literal('ok'), sessionReset: z.boolean().optional() }).strict(),
  z
    .object({
      status: z.literal('error'),
      errorType: z.enum(['SyntaxError', 'RuntimeError']),
      excName: z.string().max(200),
      message: z.string(),
      traceback: z.string(),
      sessionReset: z.boolean().optional(),
    })
    .strict(),
  z.object({ status: z.literal('interrupted') }).strict(),
  z.object({ status: z.literal('crashed'), message: z.string() }).strict(),
]);
const logLevel = z.enum(['info', 'warn', 'error']);
const id = z.number().int().nonnegative();
const runId = z.string().max(100);

const fromHost = z.discriminatedUnion('type', [
  // Pyodide can run code.
  z
    .object({
      type: z.literal('ready'),
      pyodideVersion: z.string().max(50),
      pythonVersion: z.string().max(50),
      fromSnapshot: z.boolean(),
      // Why the snapshot it was given was not used (unreadable, not the bytes that were cached, or not restorable).
      snapshotRejected: z.string().max(2000).optional(),
      // V8's code cache of Pyodide's script: read from the one it was given, not (none given, or refused), or not
      // possible in this runtime (emscriptenScript.ts).
      codeCache: z.enum(['used', 'unused', 'unsupported']),
      // Why the code cache it was given was not used (unreadable, not the bytes that were cached, or refused by V8).
      codeCacheRejected: z.string().max(2000).optional(),
      loadMs: z.number(),
    })
    .strict(),
  // Between runs, the instance was lost (its worker failed, its ring was corrupted): the backend ends this process.
  // A loss during a run is that run's crashed result instead.
  z.object({ type: z.literal('lost'), reason: z.string().max(10_000) }).strict(),
  // Either text or a dropped count, exactly one of them (parseFromHost makes it an OutputChunk).
  z.object({ type: z.literal('output'), runId, stream, text: text.optional(), dropped: dropped.optional() }).strict(),
  z.object({ type: z.literal('display'), runId, display }).strict(),
  // `output` is what the run wrote since the last 'output' message: one message instead of two on the fast path.
  z.object({ type: z.literal('result'), runId, outcome, output: z.array(outputChunk) }).strict(),
  // Made by the code of run `runId`: the backend answers only calls of the run it has under way.
  z.object({ type: z.literal('hostCall'), id, runId, method: z.string().max(200), params: z.unknown() }).strict(),
  z
    .object({
      type: z.literal('packagesDone'),
      id,
      // One per step: absent (null, through JSON) when it worked, else why not.
      errors: z.array(z.string().optional().nullable()),
      versions: z.record(z.string(), z.string().nullable()),
      // The whole request failed (the worker died); nothing above is known.
      failed: z.string().optional(),
    })
    .strict(),
  z.object({ type: z.literal('log'), level: logLevel, message: z.string() }).strict(),
  // Pyodide cannot be loaded at all; the host exits after sending this.
  z.object({ type: z.literal('fatal'), message: z.string() }).strict(),
]);

/** Text a run wrote, or how many bytes of a stream the worker dropped at that point to stay within the cap. */
export type OutputChunk = z.infer<typeof outputChunk>;
export type LogLevel = z.infer<typeof logLevel>;
/** A run's outcome as the host reports it: a BackendOutcome without what only the backend adds (restartFailed). */
export type HostOutcome = z.infer<typeof outcome>;
type SchemaMessage = z.infer<typeof fromHost>;
type OutputMessage = Pick<Extract<SchemaMessage, { type: 'output' }>, 'type' | 'runId'> & OutputChunk;
/** Host -> backend. */
export type FromHost = Exclude<SchemaMessage, { type: 'output' }> | OutputMessage;
/** What the worker reports once Pyodide can run code. */
export type ReadyInfo = Omit<Extract<FromHost, { type: 'ready' }>, 'type'>;
export type PackagesReply = Extract<FromHost, { type: 'packagesDone' }>;

/** The message, if it is one the protocol allows; else throws saying what is wrong with it. */
export function parseFromHost(value: unknown): FromHost {
  const parsed = fromHost.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(issue ? `${issue.path.join('.') || 'message'}: ${issue.message}` : 'not a protocol message');
  }
  const message = parsed.data;
  if (message.type !== 'output') return message;
  const { text, dropped, ...tag } = message;
  if (text !== undefined && dropped === undefined) return { ...tag, text };
  if (dropped !== undefined && text === undefined) return { ...tag, dropped };
  throw new Error('output needs either text or dropped');
}
