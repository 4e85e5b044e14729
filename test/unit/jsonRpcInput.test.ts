import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { classifyIncoming, idFromEdges, tooLongReply, type Incoming } from '../../src/mcp/jsonRpcInput';

function answer(incoming: Incoming): { code: number; id: unknown } {
  assert.equal(incoming.kind, 'answer', JSON.stringify(incoming));
  if (incoming.kind !== 'answer') throw new Error('unreachable');
  return { code: incoming.reply.error.code, id: incoming.reply.id };
}

test('valid requests, notifications and responses pass through as the SDK parsed them', () => {
  for (const text of [
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"run_python","arguments":{}}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":3,"result":{}}',
    '{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}',
  ]) {
    const incoming = classifyIncoming(text);
    assert.equal(incoming.kind, 'message', text);
    assert.deepEqual(incoming.kind === 'message' && incoming.message, JSON.parse(text));
  }
});

test('broken requests get the JSON-RPC code, and their id when it can be read', () => {
  const cases: [string, number, unknown][] = [
    ['{"jsonrpc":"2.0","id":1,', -32700, null],
    ['', -32700, null],
    ['[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', -32600, null],
    ['[]', -32600, null],
    ['"text"', -32600, null],
    ['null', -32600, null],
    ['{"foo":1}', -32600, null],
    ['{"id":2,"method":"tools/list"}', -32600, 2],
    ['{"jsonrpc":"1.0","id":"x","method":"tools/list"}', -32600, 'x'],
    ['{"jsonrpc":"2.0","id":3}', -32600, 3],
    ['{"jsonrpc":"2.0","id":4,"method":7}', -32600, 4],
    ['{"jsonrpc":"2.0","id":5,"method":"tools/list","extra":true}', -32600, 5],
    ['{"jsonrpc":"2.0","id":null,"method":"tools/list"}', -32600, null],
    ['{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', -32600, null],
    ['{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[1]}', -32602, 6],
    ['{"jsonrpc":"2.0","id":"7","method":"tools/list","params":"x"}', -32602, '7'],
    ['{"jsonrpc":"2.0","id":8,"method":"tools/list","params":null}', -32602, 8],
    ['{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":5}}', -32602, 9],
  ];
  for (const [text, code, id] of cases) assert.deepEqual(answer(classifyIncoming(text)), { code, id }, text);
});

test('the -32602 message says what is wrong with params', () => {
  const incoming = classifyIncoming('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}');
  assert.match(
    incoming.kind === 'answer' ? incoming.reply.error.message : '',
    /params.*expected object, received array/,
  );
});

test('broken notifications and responses are dropped with a reason: JSON-RPC never answers them', () => {
  for (const text of [
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}',
    '{"method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":1,"result":5}',
    '{"id":2,"error":"no"}',
  ]) {
    const incoming = classifyIncoming(text);
    assert.equal(incoming.kind, 'drop', text);
    assert.ok(incoming.kind === 'drop' && incoming.problem.length > 0);
  }
});

test('the id of an over-long message is read from its start or its end, only at the top level', () => {
  const none = Buffer.from('');
  const cases: [string, string, unknown][] = [
    ['{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"code":"xxx', '', 7],
    ['{ "jsonrpc" : "2.0" , "id" : "abc\\"d", "method"', '', 'abc"d'],
    ['{"id":-3,"jsonrpc":"2.0"', '', -3],
    ['{"method":"tools/call","params":{"id":5,"code":"xxx', 'xxx"}},"jsonrpc":"2.0","id":42}', 42],
    ['{"method":"tools/call","params":{"id":5,"code":"xxx', 'xxx"}},"jsonrpc":"2.0","id":"r-1"} ', 'r-1'],
    ['{"method":"tools/call","params":{"id":5,"code":"xxx', 'xxx","id":5}}', null],
    ['{"method":"tools/call","params":{"id":5,"code":"xxx', 'xxx"}},"jsonrpc":"2.0","id":1.5}', null],
    ['[1,2,3', '3,4]', null],
  ];
  for (const [head, tail, id] of cases)
    assert.equal(idFromEdges(Buffer.from(head), tail ? Buffer.from(tail) : none), id, `${head} … ${tail}`);
});

test('the answer to an over-long message names its size and the limit', () => {
  const reply = tooLongReply(12_000_000, 8_388_608, Buffer.from('{"jsonrpc":"2.0","id":9,'), Buffer.from(''));
  assert.deepEqual(reply, {
    jsonrpc: '2.0',
    id: 9,
    error: { code: -32600, message: 'Invalid request: the message is 12000000 bytes, over the limit of 8388608 bytes' },
  });
});
