// What the MCP server keeps after answering (replayable events, task results) is bounded in bytes.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/server';
import { BoundedEventStore, SharedEventBudget } from '../../src/mcp/eventStore';
import { approximateBytes, shrinkToolResult } from '../../src/mcp/resultBudget';
import { SharedResultBudget } from '../../src/mcp/keptResults';
import { RunTaskStore } from '../../src/mcp/runTaskStore';
import { toolResult } from '../../src/mcp/tools/run';
import { shapeResult } from '../../src/engine/result';

/** The stored result of a task that has ended. */
async function resultOf(store: RunTaskStore, taskId: string): Promise<CallToolResult> {
  return (await store.resultOf(taskId, new AbortController().signal)).result as CallToolResult;
}

const MIB = 1024 * 1024;

/** A run_python result with `count` images of `size` characters of base64 each. */
function bigResult(count: number, size: number, stdout = 'done\n'): CallToolResult {
  const displays = Array.from({ length: count }, (_, i) => ({
    mime: 'image/png',
    data: String(i % 10).repeat(size),
    title: `figure ${i}`,
  }));
  return toolResult({
    ...shapeResult({ runId: 'r', backend: 'pyodide', session: 'default', durationMs: 1, diagnostics: null, displays }),
    stdout,
  });
}

test('approximateBytes is close to the JSON size', () => {
  const result = bigResult(3, 100_000);
  const exact = JSON.stringify(result).length;
  const approx = approximateBytes(result);
  assert.ok(Math.abs(approx - exact) / exact < 0.05, `${approx} vs ${exact}`);
});

test('a shrunk result keeps its text rendering and JSON, drops its displays and says so, and leaves the original alone', () => {
  const result = bigResult(4, MIB);
  const shrunk = shrinkToolResult(result, 64 * 1024, 'testing');
  assert.ok(approximateBytes(shrunk) < 64 * 1024);
  // The displays stood between the text rendering and the JSON.
  assert.deepEqual(shrunk.content.slice(0, 2), [result.content[0], result.content.at(-1)]);
  assert.equal(shrunk.content.length, 3);
  assert.match(
    (shrunk.content[2] as { text: string }).text,
    /4 content item\(s\) \(4\.2 MB\) and the data of its displays are no longer kept: testing/,
  );
  const displays = (shrunk.structuredContent as { displays: Record<string, unknown>[] }).displays;
  assert.deepEqual(displays[0], { mime: 'image/png', title: 'figure 0' });
  assert.equal(result.content.length, 6, 'the original is untouched');
  assert.equal((result.structuredContent as { displays: { data: string }[] }).displays[0].data.length, MIB);
});

test('the event store keeps a large result without its displays, and stays within its budget', async () => {
  const store = new BoundedEventStore(8 * MIB);
  const message = (id: number): JSONRPCMessage => ({
    jsonrpc: '2.0',
    id,
    result: bigResult(20, 5 * MIB) as unknown as Record<string, unknown>,
  });
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push(await store.storeEvent('s', message(i)));
  const replayed: JSONRPCMessage[] = [];
  await store.replayEventsAfter(ids[0], { send: async (_id, m) => void replayed.push(m) });
  assert.equal(replayed.length, 9);
  assert.ok(replayed.every((m) => approximateBytes(m) < 2 * MIB));
  const content = (replayed[0] as unknown as { result: CallToolResult }).result.content;
  assert.match((content.at(-1) as { text: string }).text, /no longer kept/);
});

test("the event stores of one server share a budget: the oldest event of any session goes first, and an ended session's bytes are freed", async () => {
  const budget = new SharedEventBudget(10 * MIB);
  const [a, b, c] = [0, 1, 2].map(() => new BoundedEventStore(undefined, budget));
  const message = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: { text: 'x'.repeat(3 * MIB) } });
  const first = await a!.storeEvent('sa', message(1));
  const second = await b!.storeEvent('sb', message(2));
  const third = await c!.storeEvent('sc', message(3));
  assert.equal(a!.heldBytes + b!.heldBytes + c!.heldBytes > 9 * MIB, true);
  // Over the budget: the oldest of all (a's) goes, not one of the store that is adding.
  const fourth = await b!.storeEvent('sb', message(4));
  assert.equal(a!.streamOf(first), undefined);
  assert.equal(b!.streamOf(second), 'sb');
  assert.equal(b!.streamOf(fourth), 'sb');
  assert.equal(c!.streamOf(third), 'sc');
  assert.ok(a!.heldBytes + b!.heldBytes + c!.heldBytes <= 10 * MIB);
  // c's session ends: what it held no longer counts, so a's next event costs nobody anything.
  budget.release(c!);
  const fifth = await a!.storeEvent('sa', message(5));
  assert.equal(b!.streamOf(second), 'sb');
  assert.equal(a!.streamOf(fifth), 'sa');
});

test('task results are bounded per connection: the oldest lose their displays, a result past the budget is stored without them', async () => {
  const store = new RunTaskStore(16 * MIB);
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const task = store.createTask({ ttl: 60_000, pollInterval: 1000 });
    ids.push(task.taskId);
    store.storeTaskResult(task.taskId, 'completed', bigResult(2, 2 * MIB));
    assert.ok(store.heldResultBytes <= 16 * MIB, `after ${i + 1}: ${store.heldResultBytes}`);
  }
  const newest = (await resultOf(store, ids[5])) as CallToolResult;
  assert.equal(newest.content.filter((c) => c.type === 'image').length, 2, 'the newest result is whole');
  const oldest = (await resultOf(store, ids[0])) as CallToolResult;
  assert.equal(oldest.content.filter((c) => c.type === 'image').length, 0);
  assert.match((oldest.content.at(-1) as { text: string }).text, /no longer kept/);
  assert.equal((oldest.structuredContent as { stdout: string }).stdout, 'done\n');

  const huge = store.createTask({ ttl: 60_000, pollInterval: 1000 });
  store.storeTaskResult(huge.taskId, 'completed', bigResult(20, 5 * MIB));
  assert.ok(store.heldResultBytes <= 16 * MIB);
  assert.equal(
    ((await resultOf(store, huge.taskId)) as CallToolResult).content.filter((c) => c.type === 'image').length,
    0,
  );
  store.close();
});

test("the task stores of one server share a budget: the one holding the most shrinks its oldest results first, and a closed one's bytes are freed", async () => {
  const budget = new SharedResultBudget(5 * MIB);
  const a = new RunTaskStore(undefined, budget);
  const b = new RunTaskStore(undefined, budget);
  const images = async (store: RunTaskStore, taskId: string) =>
    ((await resultOf(store, taskId)) as CallToolResult).content.filter((c) => c.type === 'image').length;
  const store = async (into: RunTaskStore) => {
    const task = into.createTask({ ttl: 60_000, pollInterval: 1000 });
    into.storeTaskResult(task.taskId, 'completed', bigResult(2, MIB / 2));
    return task.taskId;
  };
  const a1 = await store(a);
  const a2 = await store(a);
  const b1 = await store(b);
  // Over the budget: a holds the most, so its oldest gives up its displays; b's only result stays whole.
  assert.equal(await images(a, a1), 0);
  assert.equal(await images(a, a2), 2);
  assert.equal(await images(b, b1), 2);
  assert.ok(a.heldResultBytes + b.heldResultBytes <= 5 * MIB);
  a.close();
  const b2 = await store(b);
  assert.equal(await images(b, b1), 2, "a's bytes no longer count");
  assert.equal(await images(b, b2), 2);
});
