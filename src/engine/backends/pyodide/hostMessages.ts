// The backend's check of every message from a host process. The host runs the code it is given and is
// within that code's reach, so a message may be forged or malformed: anything that does not match the
// protocol ends that host (the session is reset and says so), and never reaches the rest of the server.
import { z } from 'zod';
import type { FromHost } from './protocol';

const stream = z.enum(['stdout', 'stderr']);
const outputChunk = z.union([
  z.object({ stream, text: z.string() }).strict(),
  z.object({ stream, dropped: z.number().nonnegative() }).strict(),
]);
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
const id = z.number().int().nonnegative();
const runId = z.string().max(100);

const fromHost = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('ready'),
      pyodideVersion: z.string().max(50),
      pythonVersion: z.string().max(50),
      fromSnapshot: z.boolean(),
      snapshotRejected: z.string().max(2000).optional(),
      codeCache: z.enum(['used', 'unused', 'unsupported']),
      codeCacheRejected: z.string().max(2000).optional(),
      loadMs: z.number(),
    })
    .strict(),
  z.object({ type: z.literal('lost'), reason: z.string().max(10_000) }).strict(),
  z
    .object({
      type: z.literal('output'),
      runId,
      stream,
      text: z.string().optional(),
      dropped: z.number().nonnegative().optional(),
    })
    .strict(),
  z.object({ type: z.literal('display'), runId, display }).strict(),
  z.object({ type: z.literal('result'), runId, outcome, output: z.array(outputChunk) }).strict(),
  z.object({ type: z.literal('hostCall'), id, runId, method: z.string().max(200), params: z.unknown() }).strict(),
  z
    .object({
      type: z.literal('packagesDone'),
      id,
      errors: z.array(z.string().optional().nullable()),
      versions: z.record(z.string(), z.string().nullable()),
      failed: z.string().optional(),
    })
    .strict(),
  z.object({ type: z.literal('log'), level: z.enum(['info', 'warn', 'error']), message: z.string() }).strict(),
  z.object({ type: z.literal('fatal'), message: z.string() }).strict(),
]);

/** The message, if it is one the protocol allows; else throws saying what is wrong with it. */
export function parseFromHost(value: unknown): FromHost {
  const parsed = fromHost.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(issue ? `${issue.path.join('.') || 'message'}: ${issue.message}` : 'not a protocol message');
  }
  const message = parsed.data;
  // An output message carries either text or a dropped count, exactly one of them.
  if (message.type === 'output' && (message.text === undefined) === (message.dropped === undefined)) {
    throw new Error('output needs either text or dropped');
  }
  return message as FromHost;
}
