// The cap on a Pyodide instance's WebAssembly heap, installed in the worker before Pyodide loads.
import type { PyodideInterface } from 'pyodide';

/** Emscripten internals used to cap the heap exactly; not part of Pyodide's public API. */
interface EmscriptenModule {
  HEAPU8: Uint8Array;
  growMemory?: (bytes: number) => number | undefined;
}

/** The most a 32-bit Emscripten heap can reach (4 GiB less one 64 KiB page). */
const WASM_MAX_HEAP_BYTES = 4294901760;

/**
 * Worker resourceLimits do not bound WebAssembly memory, and a runaway allocation would grow the heap towards
 * 4 GiB. Emscripten grows it through the `emscripten_resize_heap` import; refusing growth past the limit
 * makes malloc fail, which Python reports as MemoryError. Emscripten over-allocates by up to 20% per step,
 * so near the limit the heap is grown to exactly the limit instead. Returns what to call with the loaded
 * instance, whose module does that exact growth.
 */
export function capHeapGrowth(heapLimitMb: number): (py: PyodideInterface) => void {
  const heapLimitBytes = Math.min(heapLimitMb * 1024 * 1024, WASM_MAX_HEAP_BYTES);
  let heapModule: EmscriptenModule | undefined;
  const instantiate = WebAssembly.instantiate.bind(WebAssembly) as (
    source: BufferSource | WebAssembly.Module,
    imports?: WebAssembly.Imports,
  ) => Promise<unknown>;
  const capped = (source: BufferSource | WebAssembly.Module, imports?: WebAssembly.Imports): Promise<unknown> => {
    const env = imports?.env as Record<string, WebAssembly.ImportValue> | undefined;
    const resize = env?.emscripten_resize_heap;
    if (env && typeof resize === 'function') {
      env.emscripten_resize_heap = (requested: number): number => {
        const bytes = requested >>> 0;
        if (bytes > heapLimitBytes) return 0;
        const grow = heapModule?.growMemory;
        if (!grow || heapModule!.HEAPU8.length * 1.2 <= heapLimitBytes) return Number(resize(requested));
        return grow(heapLimitBytes) ? 1 : 0;
      };
    }
    return instantiate(source, imports);
  };
  WebAssembly.instantiate = capped as typeof WebAssembly.instantiate;
  return (py) => {
    heapModule = (py as unknown as { _module: EmscriptenModule })._module;
  };
}
