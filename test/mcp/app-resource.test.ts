// run_python's MCP App (ext-apps): the tool names its ui:// resource, and the resource is listed and read as one
// self-contained HTML document, over stdio (the built CLI) and over HTTP. Run after `node esbuild.mjs`.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { connectHttp, httpServerForSuite } from '../support/http';
import { connectStdio, type StdioConnection } from '../support/mcp';

const URI = 'ui://code-mode-python/run-card.html';
const MIME = 'text/html;profile=mcp-app';

async function checkApp(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.find((tool) => tool.name === 'run_python')?._meta, { ui: { resourceUri: URI } });
  assert.ok(
    tools.every((tool) => tool.name === 'run_python' || tool._meta === undefined),
    'only run_python has an App',
  );

  const { resources } = await client.listResources();
  assert.deepEqual(
    resources.map(({ uri, mimeType, _meta }) => ({ uri, mimeType, _meta })),
    [{ uri: URI, mimeType: MIME, _meta: { ui: { csp: {} } } }],
  );

  const { contents } = await client.readResource({ uri: URI });
  assert.equal(contents.length, 1);
  const [content] = contents;
  assert.equal(content.uri, URI);
  assert.equal(content.mimeType, MIME);
  assert.ok('text' in content);
  const html = content.text;
  assert.match(html, /^<!DOCTYPE html>/);
  // One document: its script and style inline, nothing it would fetch.
  assert.doesNotMatch(html, /<script[^>]*\ssrc=|<link[\s>]/i);
  const style = html.match(/<style>([\s\S]*?)<\/style>/)?.[1] ?? '';
  assert.ok(style.includes('.run-card'), 'the Results view stylesheet is inlined');
  assert.doesNotMatch(style, /@import|url\((?!data:)/i);
  const csp = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/)?.[1];
  assert.ok(csp?.includes("default-src 'none'") && /script-src 'sha256-[A-Za-z0-9+/=]+'/.test(csp), csp);

  await assert.rejects(client.readResource({ uri: 'ui://code-mode-python/other.html' }), (error: unknown) => {
    assert.ok(error instanceof McpError);
    // Invalid params, the spec's code for an unknown resource since 2025-11-25 (-32002 before).
    assert.equal(error.code, -32602);
    return true;
  });
}

describe('the run card App over stdio', () => {
  let conn: StdioConnection;
  before(async () => {
    conn = await connectStdio(['--backend', 'python']);
  });
  after(async () => {
    await conn?.close();
  });

  test('run_python points at the ui:// resource, which is listed and read as text/html;profile=mcp-app', async () => {
    await checkApp(conn.client);
  });
});

describe('the run card App over HTTP', () => {
  const suite = httpServerForSuite();

  test('run_python points at the ui:// resource, which is listed and read as text/html;profile=mcp-app', async () => {
    const { client } = await connectHttp(suite.server().url, suite.server().token);
    try {
      await checkApp(client);
    } finally {
      await client.close();
    }
  });
});
