import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { PendingRequests, RequestTimeout } from '../../src/engine/requests';

describe('PendingRequests', () => {
  test('a reply settles the request with its id, and only once', async () => {
    const requests = new PendingRequests<number, string>();
    const first = requests.wait(1);
    const second = requests.wait(2);
    assert.equal(requests.size, 2);
    assert.equal(requests.resolve(2, 'two'), true);
    assert.equal(requests.resolve(1, 'one'), true);
    assert.deepEqual(await Promise.all([first, second]), ['one', 'two']);
    assert.equal(requests.resolve(1, 'again'), false, 'an answered request is not waiting any more');
    assert.equal(requests.resolve(3, 'unknown'), false);
    assert.equal(requests.size, 0);
  });

  test('reject fails one request; rejectAll fails every waiting one', async () => {
    const requests = new PendingRequests<string, number>();
    const a = requests.wait('a');
    const b = requests.wait('b');
    const c = requests.wait('c');
    assert.equal(requests.reject('a', new Error('refused')), true);
    await assert.rejects(a, /refused/);
    requests.rejectAll(new Error('channel closed'));
    await assert.rejects(b, /channel closed/);
    await assert.rejects(c, /channel closed/);
    assert.equal(requests.size, 0);
    assert.equal(requests.resolve('b', 1), false);
  });

  test('an id waits once at a time', async () => {
    const requests = new PendingRequests<number, string>();
    const pending = requests.wait(7);
    assert.throws(() => requests.wait(7), /already waiting/);
    requests.resolve(7, 'done');
    assert.equal(await pending, 'done');
    const again = requests.wait(7);
    requests.resolve(7, 'next');
    assert.equal(await again, 'next');
  });

  test('a timeout rejects with RequestTimeout and forgets the request; a reply in time clears the timer', async () => {
    const requests = new PendingRequests<number, string>();
    const started = Date.now();
    const late = requests.wait(1, 50);
    await assert.rejects(
      late,
      (error: unknown) => error instanceof RequestTimeout && /no reply to request 1 within 50 ms/.test(error.message),
    );
    assert.ok(Date.now() - started >= 45);
    assert.equal(requests.resolve(1, 'too late'), false);
    const quick = requests.wait(2, 50);
    requests.resolve(2, 'in time');
    assert.equal(await quick, 'in time');
    // A cleared timer would otherwise reject the settled promise later; there is nothing left to reject.
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.equal(requests.size, 0);
  });
});
