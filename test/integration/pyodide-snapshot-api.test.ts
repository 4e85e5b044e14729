// Pyodide's private snapshot API, as src/engine/backends/pyodide/pyodideSnapshots.ts reaches it, with the installed
// Pyodide: a release that renames `_makeSnapshot` or `makeMemorySnapshot` fails the make; one that renames
// `_loadSnapshot` starts an instance without the snapshot's memory, which the restored names below tell apart.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { loadPyodide } from 'pyodide';
import { makeMemorySnapshot, restoreMemorySnapshot } from '../../src/engine/backends/pyodide/pyodideSnapshots';

test('an instance restored from a snapshot made here holds what was prepared before the snapshot', async () => {
  const snapshot = await makeMemorySnapshot(loadPyodide, {}, (maker) => {
    maker.runPython('import colorsys\nprepared = "before the snapshot"');
  });
  const restored = await restoreMemorySnapshot(loadPyodide, {}, snapshot);
  assert.equal(restored.runPython('prepared'), 'before the snapshot');
  assert.equal(restored.runPython('"colorsys" in __import__("sys").modules'), true);
  const fresh = await loadPyodide();
  assert.equal(fresh.runPython('"prepared" in globals()'), false, 'a start without the snapshot has none of it');
});
