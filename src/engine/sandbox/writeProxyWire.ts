// What the sandbox's file layer and the server's write proxy (writeProxy.ts) agree on, apart from the request
// schema, which stays out of the sandbox's bundle.

/** The host-call method the sandbox's file layer uses; answered by the server, never by a run's handlers. */
export const WRITE_PROXY_METHOD = 'workspace_write';
/** Bytes of one write request, sent ahead of it on the data pipe; the sandbox splits larger writes. */
export const MAX_WRITE_CHUNK_BYTES = 4 * 1024 * 1024;
