// run_python's result as an MCP App (the ext-apps extension): run_python's `_meta.ui.resourceUri` names this
// resource, the run card of the Results view bundled into one HTML document (src/app/, built to
// dist/run-card.html), which hosts that render Apps show the result in. Hosts without Apps never read it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ResourceNotFoundError, type Resource, type Server } from '@modelcontextprotocol/server';
import { assetsDir } from '../engine/index';

export const RUN_CARD_URI = 'ui://code-mode-python/run-card.html';
/** ext-apps' RESOURCE_MIME_TYPE; that package is ESM only, which this CommonJS module cannot import. */
const APP_MIME = 'text/html;profile=mcp-app';
/** No domains at all: the card loads nothing from outside (its document's own CSP says so too). */
const APP_META = { ui: { csp: {} } };

const RUN_CARD: Resource = {
  uri: RUN_CARD_URI,
  name: 'run-card',
  title: 'Python run',
  description: "A run_python result: output in order, figures, tables, the error and the tool calls, with 'Run again'.",
  mimeType: APP_MIME,
  _meta: APP_META,
};

let html: string | undefined;

export function serveAppResource(server: Server): void {
  server.registerCapabilities({ resources: {} });
  server.setRequestHandler('resources/list', () => ({ resources: [RUN_CARD] }));
  server.setRequestHandler('resources/read', ({ params }) => {
    if (params.uri !== RUN_CARD_URI) throw new ResourceNotFoundError(params.uri);
    // Read on first use rather than at start: most clients never ask for it.
    html ??= fs.readFileSync(path.join(assetsDir(), 'run-card.html'), 'utf8');
    return { contents: [{ uri: RUN_CARD_URI, mimeType: APP_MIME, text: html, _meta: APP_META }] };
  });
}
