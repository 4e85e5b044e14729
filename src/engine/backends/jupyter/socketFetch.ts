// fetch() over a Unix domain socket, for a Jupyter Server that listens on one (the local server does): what the
// Jupyter client's REST calls need, a Request in and a Response out.
import * as http from 'node:http';

function headersOf(incoming: http.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
  }
  return headers;
}

export function socketFetch(socketPath: string): (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    return new Promise<Response>((resolve, reject) => {
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => (headers[name] = value));
      const options = { socketPath, path: `${url.pathname}${url.search}`, method: request.method, headers };
      const outgoing = http.request(options, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () => {
          const status = incoming.statusCode ?? 500;
          // A Response with a null-body status may not be given a body.
          const content = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          resolve(
            new Response(content, { status, statusText: incoming.statusMessage, headers: headersOf(incoming.headers) }),
          );
        });
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  };
}
