// A client without the token fails at once and says why, OAuth-capable ones included: the 401's challenge points
// at protected-resource metadata that names no authorization server, and every OAuth endpoint a client falls back
// to answers with the sentence saying where the token comes from. Through raw requests, the SDK client with an
// OAuth provider (as VS Code and the Inspector use it) and mcp-remote, the proxy many agent hosts run; with the
// token, mcp-remote passes it on as a header and lists the tools.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { startHttpMcpServer, type HttpMcpServer } from '../../src/mcp/http';
import { post } from '../support/http';
import { testStorageDir } from '../support/mcp';

// Also inside a JSON string, where the quotes are escaped.
const SAYS_WHERE_THE_TOKEN_IS = /does not offer OAuth sign-in: send its token as \\?"Authorization: Bearer <token>\\?"/;
const MCP_REMOTE = path.join(__dirname, '..', '..', 'node_modules', 'mcp-remote', 'dist', 'proxy.js');

function get(url: string): Promise<Response> {
  return fetch(url);
}

/** An OAuth client as an agent host keeps one; it records whether it was ever sent to sign in. */
class RecordingProvider implements OAuthClientProvider {
  redirects: URL[] = [];
  private info: OAuthClientInformationFull | undefined;
  get redirectUrl(): string {
    return 'http://127.0.0.1:1/callback';
  }
  get clientMetadata() {
    return { redirect_uris: [this.redirectUrl], client_name: 'recording client' };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationFull): void {
    this.info = info;
  }
  tokens(): OAuthTokens | undefined {
    return undefined;
  }
  saveTokens(): void {}
  redirectToAuthorization(url: URL): void {
    this.redirects.push(url);
  }
  saveCodeVerifier(): void {}
  codeVerifier(): string {
    return 'verifier';
  }
}

describe('a client without the token, over HTTP', () => {
  let engine: Engine;
  let server: HttpMcpServer;
  let home: string;

  before(async () => {
    engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python' } });
    server = await startHttpMcpServer(engine);
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-auth-home-'));
  });
  after(async () => {
    await server?.close();
    await engine?.dispose();
    fs.rmSync(home, { recursive: true, force: true });
  });

  test('the 401 points at metadata that names no authorization server; OAuth endpoints say where the token is', async () => {
    const origin = new URL(server.url).origin;
    const missing = await post(server.url, {});
    assert.equal(missing.status, 401);
    assert.equal(
      missing.headers['www-authenticate'],
      `Bearer realm="code-mode-python", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    assert.match(missing.body, SAYS_WHERE_THE_TOKEN_IS);
    const wrong = await post(server.url, { authorization: 'Bearer not-the-token' });
    assert.match(String(wrong.headers['www-authenticate']), /error="invalid_token"/);

    for (const metadataPath of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const metadata = await get(`${origin}${metadataPath}`);
      assert.equal(metadata.status, 200);
      const body = (await metadata.json()) as Record<string, unknown>;
      assert.equal(body.resource, server.url);
      assert.deepEqual(body.bearer_methods_supported, ['header']);
      assert.equal(body.authorization_servers, undefined);
    }
    for (const metadataPath of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const metadata = await get(`${origin}${metadataPath}`);
      assert.equal(metadata.status, 404);
    }
    for (const endpoint of ['/register', '/token']) {
      const reply = await post(`${origin}${endpoint}`, {}, '{}');
      assert.equal(reply.status, 400);
      const body = JSON.parse(reply.body) as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_request');
      assert.match(body.error_description, SAYS_WHERE_THE_TOKEN_IS);
    }
    // The Host check still comes first: a rebinding page learns nothing here either.
    const foreign = await post(`${origin}/.well-known/oauth-protected-resource`, { host: 'evil.example' }, '');
    assert.equal(foreign.status, 403);
  });

  test('the SDK client with an OAuth provider fails with the sentence and is never sent to sign in', async () => {
    const provider = new RecordingProvider();
    const client = new Client({ name: 'oauth-capable', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url), { authProvider: provider });
    await assert.rejects(client.connect(transport), SAYS_WHERE_THE_TOKEN_IS);
    assert.deepEqual(provider.redirects, []);
    await client.close();
  });

  test('mcp-remote without the token exits with the sentence instead of waiting for a browser sign-in', async () => {
    const child = spawn(process.execPath, [MCP_REMOTE, server.url, '--transport', 'http-only'], {
      env: { ...process.env, HOME: home, BROWSER: 'true' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } })}\n`,
    );
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.notEqual(code, 0);
    assert.match(stderr, SAYS_WHERE_THE_TOKEN_IS);
    assert.doesNotMatch(stderr, /Waiting for authorization/);
  });

  test('mcp-remote with the token as a header lists the tools', async () => {
    const client = new Client({ name: 'through-mcp-remote', version: '1' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, server.url, '--transport', 'http-only', '--header', `Authorization:Bearer ${server.token}`],
      env: { ...(process.env as Record<string, string>), HOME: home, BROWSER: 'true' },
      stderr: 'pipe',
    });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === 'run_python'));
    } finally {
      await client.close();
    }
  });
});
