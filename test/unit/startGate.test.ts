import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { StartGate } from '../../src/engine/startGate';

test('a run waiting for its interpreter is called off by interrupt(), and only that run', async () => {
  const gate = new StartGate();
  assert.equal(gate.interrupt(), false, 'nothing waits: nothing to call off');
  let ready!: (value: string) => void;
  const passing = gate.pass(() => new Promise<string>((resolve) => (ready = resolve)));
  assert.equal(gate.busy, true);
  assert.equal(gate.interrupt(), true);
  ready('interpreter');
  assert.equal(await passing, undefined, 'the interrupted run does not get its interpreter');
  assert.equal(gate.busy, false);
  assert.equal(await gate.pass(async () => 'interpreter'), 'interpreter', 'the next run is not affected');
});

test('a start that fails leaves the gate open for the next run', async () => {
  const gate = new StartGate();
  await assert.rejects(
    gate.pass(async () => {
      throw new Error('no interpreter');
    }),
    /no interpreter/,
  );
  assert.equal(gate.busy, false);
});
