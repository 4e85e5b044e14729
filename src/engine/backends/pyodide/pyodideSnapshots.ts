// Pyodide makes and restores memory snapshots only through private API: loadPyodide's `_makeSnapshot` and
// `_loadSnapshot` options (declared `@ignore`) and `makeMemorySnapshot` (declared `@private`). This file is the one
// place that names them, so a release that moves them breaks here; test/integration/pyodide-snapshot-api.test.ts
// checks, with the installed Pyodide, that a snapshot made here restores the memory it was made from.
import type { PyodideInterface } from 'pyodide';

type LoadPyodide = (typeof import('pyodide'))['loadPyodide'];
/** loadPyodide's options but the snapshot ones, which only this file sets. */
type StartOptions = Omit<NonNullable<Parameters<LoadPyodide>[0]>, '_makeSnapshot' | '_loadSnapshot'>;

/**
 * Starts an instance a snapshot can be made from, lets `prepare` put in it what every instance restored from the
 * snapshot is to hold, and returns its memory.
 */
export async function makeMemorySnapshot(
  loadPyodide: LoadPyodide,
  options: StartOptions,
  prepare: (maker: PyodideInterface) => void,
): Promise<Uint8Array> {
  const maker = await loadPyodide({ ...options, _makeSnapshot: true });
  prepare(maker);
  return maker.makeMemorySnapshot();
}

/** An instance started from `snapshot`'s memory rather than from Pyodide's own start. */
export function restoreMemorySnapshot(
  loadPyodide: LoadPyodide,
  options: StartOptions,
  snapshot: Uint8Array,
): Promise<PyodideInterface> {
  return loadPyodide({ ...options, _loadSnapshot: snapshot });
}
