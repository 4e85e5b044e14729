// Why this exists: the SDK's createMcpHandler (2.4.0) builds a server for every 2026 request, and for
// `subscriptions/listen` it never connects it: it asks it only for its capabilities and server info, serves the
// stream itself, and calls the server's close(). Protocol.close() only closes the transport, which that server
// never had, so its onclose never runs, and with it none of our whenClosed disposers (the engine's and the bridge's
// listeners, its task store): every listen request would leave a server following the engine forever. The SDK has
// no public hook for it (the factory context, the handler's options and its bus say nothing of the end of a
// request), so the handler is wrapped: once it has answered a request, a server it built for it and never
// connected gets its close hooks run here. test/unit/unconnectedServers.test.ts fails once the SDK runs them
// itself: then this module goes and http.ts calls createMcpHandler directly.
import {
  createMcpHandler,
  type CreateMcpHandlerOptions,
  type McpHttpHandler,
  type McpRequestContext,
  type Server,
} from '@modelcontextprotocol/server';
import { whenClosed } from './shared';

/** createMcpHandler, with the close hooks of the servers it never connected run once it has answered. */
export function createMcpHandlerClosingUnconnected(
  factory: (context: McpRequestContext) => Server,
  options: CreateMcpHandlerOptions,
): McpHttpHandler {
  // The server built for each request until its exchange is over; a server the SDK closed has left already.
  const built = new Map<Request, Server>();
  const handler = createMcpHandler((context) => {
    const server = factory(context);
    const request = context.requestInfo;
    if (request) {
      built.set(request, server);
      whenClosed(server, () => built.delete(request));
    }
    return server;
  }, options);
  const closeUnconnected = (request: Request) => {
    const server = built.get(request);
    built.delete(request);
    // A server with a transport still streams its exchange, and the SDK closes it at the end.
    if (server && server.transport === undefined) server.onclose?.();
  };
  return {
    ...handler,
    fetch: async (request, requestOptions) => {
      try {
        return await handler.fetch(request, requestOptions);
      } finally {
        closeUnconnected(request);
      }
    },
  };
}
