// Node's (req, res) meet the SDK's web-standard handlers (Request in, Response out) here. Ours rather than a
// framework adapter's: the server reads and judges every body itself (http.ts) before any handler sees it, so a
// Request never carries one, and a Response is streamed through as it comes, since an SSE stream may stay open
// for as long as a run takes.
import type * as http from 'node:http';

/** Headers that describe the body on the wire; the Request built here has none (handlers get it parsed). */
const BODY_HEADERS = new Set(['content-length', 'transfer-encoding']);

/**
 * The web-standard face of `req`, without its body. Its signal aborts when the client goes away before the
 * answer is complete: the SDK cancels a 2026-07-28 exchange, or ends a `subscriptions/listen` stream, on it.
 */
export function webRequest(req: http.IncomingMessage, res: http.ServerResponse): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    if (!BODY_HEADERS.has(name.toLowerCase())) headers.append(name, req.rawHeaders[i + 1]!);
  }
  const aborted = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) aborted.abort(new Error('the client closed the connection'));
  });
  return new Request(new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`), {
    method: req.method ?? 'GET',
    headers,
    signal: aborted.signal,
  });
}

/**
 * Writes `response` to `res`: an SSE stream chunk by chunk as the SDK enqueues each event (so priming events stay
 * whole chunks, primingEvents.ts), anything else at once with its length. Resolves when the answer is complete
 * or the client went away; then the stream is cancelled, which tells the SDK the stream is gone.
 */
export async function sendWebResponse(response: Response, res: http.ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  if (!response.body || !isEventStream(response)) {
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, { ...headers, 'content-length': String(body.length) });
    res.end(body);
    return;
  }
  res.writeHead(response.status, headers);
  res.flushHeaders();
  const reader = response.body.getReader();
  // The client may have left while the SDK prepared the answer: 'close' came already, and will not come again.
  const gone = new Promise<void>((resolve) => (res.destroyed ? resolve() : res.once('close', resolve)));
  void gone.then(() => reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), gone]);
    }
    res.end();
  } catch {
    // The SDK errored the stream: the answer cannot be completed, and a cut connection says so to the client.
    res.destroy();
  }
}

function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}
