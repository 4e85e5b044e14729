import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { StateLoss } from '../../src/engine/backends/stateLoss';

test('a lost state is told once, and nothing when none was lost', () => {
  const loss = new StateLoss();
  assert.equal(loss.take(), undefined);
  loss.remember('the Python process was killed by SIGKILL between runs');
  assert.equal(loss.take(), 'the Python process was killed by SIGKILL between runs');
  assert.equal(loss.take(), undefined, 'taking it forgets it');
});

test('of two losses before the engine asks, the first is told: it took the state the next run expects', () => {
  const loss = new StateLoss();
  loss.remember('the kernel died and the Jupyter Server restarted it between runs');
  loss.remember('the connection to the Jupyter Server was lost between runs');
  assert.equal(loss.take(), 'the kernel died and the Jupyter Server restarted it between runs');
  loss.remember('the connection to the Jupyter Server was lost between runs');
  assert.equal(
    loss.take(),
    'the connection to the Jupyter Server was lost between runs',
    'a loss after the last question is remembered afresh',
  );
});
