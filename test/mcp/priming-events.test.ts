// VS Code's endpoint sends the SDK's priming event as an id alone: VS Code (1.139) parses the data of every event
// of a POST's stream as JSON, and an empty data line made it log "Failed to parse message" at every start.
import { after, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { startHttpMcpServer, type HttpMcpServer } from '../../src/mcp/http';
import { post } from '../support/http';
import { testStorageDir } from '../support/mcp';

/** The events of an SSE body, each as its field lines. */
function events(body: string): string[][] {
  return body
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => block.split('\n'));
}

describe('priming events', () => {
  const engines: Engine[] = [];
  const servers: HttpMcpServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await Promise.all(engines.map((e) => e.dispose()));
  });

  // VS Code asks for the latest protocol, which is when the SDK primes a stream.
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'Visual Studio Code', version: '1.139' },
    },
  });

  async function initializeOn(idOnlyPrimingEvents: boolean): Promise<string[][]> {
    const engine = createEngine({ storageDir: testStorageDir });
    engines.push(engine);
    const server = await startHttpMcpServer(engine, { idOnlyPrimingEvents });
    servers.push(server);
    const reply = await post(server.url, { authorization: `Bearer ${server.token}` }, initialize);
    assert.equal(reply.status, 200);
    assert.match(String(reply.headers['content-type']), /text\/event-stream/);
    return events(reply.body);
  }

  test("VS Code's endpoint primes the stream with an id and no empty data line", async () => {
    const sent = await initializeOn(true);
    assert.ok(!sent.some((lines) => lines.includes('data: ')), `no event with empty data: ${JSON.stringify(sent)}`);
    assert.ok(
      sent[0]!.every((line) => !line.startsWith('data:')) && sent[0]!.some((line) => line.startsWith('id: ')),
      'the first event is an id alone',
    );
    const answer = sent.find((lines) => lines.some((line) => line.startsWith('data: {')));
    assert.ok(answer, 'the initialize result follows');
  });

  test('other endpoints keep the SDK priming event (SDK clients take ids only from events with data)', async () => {
    const sent = await initializeOn(false);
    assert.ok(
      sent.some((lines) => lines.includes('data: ') && lines.some((line) => line.startsWith('id: '))),
      JSON.stringify(sent),
    );
  });
});
