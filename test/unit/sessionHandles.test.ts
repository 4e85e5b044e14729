import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { Engine } from '../../src/engine/engine';
import { SessionHandles } from '../../src/mcp/sessionHandles';

/** The two things handles ask of the engine: who is present, and ending a scope. */
function engineTap() {
  const ended: string[] = [];
  const presence = new Map<string, () => boolean>();
  const engine = {
    setScopePresence: (scope: string, isPresent: () => boolean) => presence.set(scope, isPresent),
    endScope: async (scope: string) => {
      ended.push(scope);
    },
  } as unknown as Engine;
  return { engine, ended, presence };
}

test('a call without a handle gets a new one; passing it back reaches the same scope; anything else is refused', () => {
  const { engine } = engineTap();
  const handles = new SessionHandles(engine, { idleMs: 60_000, maxHandles: 10 });
  const first = handles.hold(undefined)!;
  assert.match(first.handle, /^h_[A-Za-z0-9_-]{32}$/);
  first.release();
  const again = handles.hold(first.handle)!;
  assert.equal(again.scope, first.scope);
  again.release();
  const other = handles.hold(undefined)!;
  assert.notEqual(other.scope, first.scope, 'each new handle is a scope of its own');
  other.release();
  for (const forged of [`${first.handle.slice(0, -1)}x`, 'h_short', '../etc', first.scope])
    assert.equal(handles.hold(forged), undefined, forged);
});

test('past the cap the least recently used idle handle ends with its scope; a busy one is kept', async () => {
  const { engine, ended, presence } = engineTap();
  const handles = new SessionHandles(engine, { idleMs: 60_000, maxHandles: 2 });
  const busy = handles.hold(undefined)!;
  const idle = handles.hold(undefined)!;
  idle.release();
  assert.equal(presence.get(busy.scope)!(), true, 'a handle held by a call is present');
  assert.equal(presence.get(idle.scope)!(), false);
  const third = handles.hold(undefined)!;
  assert.deepEqual(ended, [idle.scope]);
  assert.equal(handles.hold(idle.handle), undefined, 'its state is gone, and the caller is told');
  assert.ok(handles.hold(busy.handle), 'the busy one lives');
  third.release();
  await handles.close();
  assert.deepEqual(ended.sort(), [idle.scope, busy.scope, third.scope].sort());
  assert.equal(handles.hold(undefined), undefined, 'a closed table mints nothing');
});
