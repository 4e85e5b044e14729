// The close hooks of the servers createMcpHandler builds per 2026 request: the SDK never runs those of the server it
// builds for subscriptions/listen (unconnectedServers.ts says why), and the wrapped handler runs them, once.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { createMcpHandler, Server, type McpHttpHandler } from '@modelcontextprotocol/server';
import { whenClosed } from '../../src/mcp/shared';
import { createMcpHandlerClosingUnconnected } from '../../src/mcp/unconnectedServers';
import { modernRequest, sendModern } from '../support/modernRequest';

const CAPABILITIES = { elicitation: { form: {} } };

/** A factory whose servers count how often their close hooks ran, all together. */
function countingFactory() {
  const counts = { built: 0, closed: 0 };
  const factory = () => {
    const server = new Server(
      { name: 'close-hooks-test', version: '1' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler('tools/list', () => ({ tools: [] }));
    counts.built++;
    whenClosed(server, () => counts.closed++);
    return server;
  };
  return { factory, counts };
}

/** Opens a listen stream, reads up to the SDK's acknowledgement, then drops the stream. */
async function listenOnce(handler: McpHttpHandler): Promise<void> {
  const response = await handler.fetch(
    modernRequest(
      1,
      'subscriptions/listen',
      { notifications: { toolsListChanged: true } },
      { capabilities: CAPABILITIES, clientName: 'close-hooks-test' },
    ),
  );
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  let text = '';
  while (!text.includes('notifications/subscriptions/acknowledged')) {
    const { value, done } = await reader.read();
    assert.equal(done, false, `the stream ended before its acknowledgement: ${text}`);
    text += new TextDecoder().decode(value);
  }
  await reader.cancel();
}

test('the SDK never runs the close hooks of the server it built for subscriptions/listen: when this fails, delete unconnectedServers.ts', async () => {
  const { factory, counts } = countingFactory();
  const handler = createMcpHandler(factory, { legacy: 'reject' });
  await listenOnce(handler);
  await handler.close();
  assert.equal(counts.built, 1);
  assert.equal(counts.closed, 0);
});

test('the wrapped handler runs them once the listen request is answered, and a served request still closes once', async () => {
  const { factory, counts } = countingFactory();
  const handler = createMcpHandlerClosingUnconnected(factory, { legacy: 'reject' });
  await listenOnce(handler);
  assert.deepEqual(counts, { built: 1, closed: 1 });
  const listed = await sendModern<{ result?: { tools: unknown[] } }>(
    handler,
    2,
    'tools/list',
    {},
    {
      capabilities: CAPABILITIES,
    },
  );
  assert.deepEqual(listed.result?.tools, []);
  await handler.close();
  assert.deepEqual(counts, { built: 2, closed: 2 });
});
