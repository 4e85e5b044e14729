// Pyodide's Emscripten script (pyodide.asm.js) loaded on the worker thread with V8's code cache: the
// bytecode of the functions a start runs, compiled by an earlier start with this runtime and cached by the backend
// (snapshotCache.ts). Compiling the script and those functions is a large part of every start from the memory
// snapshot; with the cache V8 reads them instead. Only where a script read from a code cache keeps its dynamic
// import() working, for its own code and for code it evaluates (Node 20 loses the handler), and not
// under Deno, whose node:vm takes no code cache: there the script is required as before.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { readChecked } from './checkedRead';
import type { SnapshotRef } from './protocol';

export interface LoadedScript {
  /** Present when the script was compiled here with a code cache in mind: what `codeCacheOf` serializes. */
  script?: vm.Script;
  /** The cache given was used. */
  usedCache: boolean;
  /** Why the cache given was not used. */
  cacheRejected?: string;
  /** This runtime cannot use a code cache (Deno, or one that loses import() with it). */
  unsupported?: boolean;
}

/**
 * Runs pyodide.asm.js in `indexURL` as CommonJS would (it sets the global that Pyodide's loader looks for), with
 * `cache` if its bytes hash to what the backend recorded and V8 accepts it. `makeCache`: without a cache, compile
 * it so that one can be made, if this runtime can use one (checked only then: a cache given was made by a start of
 * this same runtime that checked).
 */
export async function loadEmscriptenScript(
  indexURL: string,
  cache: SnapshotRef | undefined,
  makeCache: boolean,
): Promise<LoadedScript> {
  const file = path.join(indexURL, 'pyodide.asm.js');
  const requireHere = createRequire(file);
  const loader = mainContextLoader();
  const unsupported =
    'Deno' in globalThis || loader === undefined || (!cache && makeCache && !(await codeCacheKeepsImports(loader)));
  if (unsupported || (!cache && !makeCache)) {
    requireHere(file);
    return { usedCache: false, unsupported };
  }
  const { cachedData, rejected } = readCache(cache);
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${fs.readFileSync(file, 'utf8')}\n})`,
    { filename: file, cachedData, importModuleDynamically: loader },
  );
  const cacheRejected =
    rejected ?? (cachedData && script.cachedDataRejected ? 'V8 refused it (another runtime or its flags)' : undefined);
  const module = { exports: {} };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, requireHere, module, file, indexURL);
  return { script, usedCache: cachedData !== undefined && cacheRejected === undefined, cacheRejected };
}

/**
 * Whether a script this runtime reads from a code cache can still import(): checked on a script of two lines,
 * compiled, cached and read back under another name (so V8 cannot take its in-memory copy instead).
 */
export async function codeCacheKeepsImports(loader: Loader | undefined = mainContextLoader()): Promise<boolean> {
  if (loader === undefined) return false;
  const source = "(() => import('node:path'))";
  const made = new vm.Script(source, { filename: 'code-cache-check', importModuleDynamically: loader });
  const read = new vm.Script(source, {
    filename: 'code-cache-check-read',
    cachedData: made.createCachedData(),
    importModuleDynamically: loader,
  });
  if (read.cachedDataRejected) return false;
  try {
    await (read.runInThisContext() as () => Promise<unknown>)();
    return true;
  } catch {
    return false;
  }
}

type Loader = typeof vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;

/** import() in a compiled script as in any module of the main context; undefined in runtimes without it (Node < 20.12). */
function mainContextLoader(): Loader | undefined {
  return (vm.constants as Partial<typeof vm.constants> | undefined)?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
}

/** Compiled code is trusted as it is: only the bytes the backend cached are given to V8. */
function readCache(cache: SnapshotRef | undefined): { cachedData?: Buffer; rejected?: string } {
  if (!cache) return {};
  const checked = readChecked(cache, (file) => fs.readFileSync(file));
  return 'bytes' in checked ? { cachedData: checked.bytes } : { rejected: checked.rejected };
}
