// The worker's own Python (bootstrap, cell runner, displays, input, package helpers), compiled once when the
// memory snapshot is made and kept in it, so that an instance restored from the snapshot compiles none of it.
// CPython's compiler is slow in WebAssembly: compiling these was a large part of every start.
import type { PyodideInterface } from 'pyodide';
import type { PyProxy } from 'pyodide/ffi';
import cellSource from '../runtime/cell.py';
import displaysSource from '../runtime/displays.py';
import userInputSource from '../runtime/user_input.py';
import bootstrapSource from './bootstrap.py';
import packagesSource from './packages.py';

/** Each part's source and the file name its tracebacks show. */
const HARNESS = {
  bootstrap: [bootstrapSource, '<code-mode bootstrap>'],
  cell: [cellSource, '<code-mode cell runner>'],
  displays: [displaysSource, '<code-mode displays>'],
  userInput: [userInputSource, '<code-mode input>'],
  packages: [packagesSource, '<code-mode packages>'],
} as const;

export type HarnessPart = keyof typeof HARNESS;

/** Where the snapshot keeps the code until an instance takes it, before any user code runs: {filename: (source, code)}. */
const STASH = '_code_mode_harness_code';

/**
 * In the instance a snapshot is made from: compiles every part and runs its top level in a throwaway namespace, so the
 * standard modules it imports are in the snapshot too (dataclasses, pprint, getpass: importing them was a large part of
 * every start), then keeps the code. The top levels only import and define; every instance runs them before any user
 * code either way, so what a session sees does not change. Nothing here holds a JavaScript object, which a snapshot
 * cannot contain.
 */
export function compileHarnessIntoSnapshot(maker: PyodideInterface): void {
  const keep = maker.runPython(`
def keep(parts):
    import sys
    stash = {}
    for source, filename in parts:
        code = compile(source, filename, "exec")
        exec(code, {})
        stash[filename] = (source, code)
    setattr(sys, ${JSON.stringify(STASH)}, stash)
keep`) as PyProxy & ((parts: unknown) => void);
  const parts = maker.toPy(Object.values(HARNESS).map(([source, filename]) => [source, filename]));
  try {
    keep(parts);
  } finally {
    parts.destroy();
    keep.destroy();
  }
}

/**
 * The harness's code for this instance: the snapshot's, taken out of sys at once, where its source is this
 * build's; compiled now otherwise (an instance that did not start from a snapshot). Each part is asked for
 * once; `dispose` releases what was not.
 */
export class HarnessCode {
  private readonly kept = new Map<string, PyProxy>();

  constructor(private readonly py: PyodideInterface) {
    const sys = py.pyimport('sys');
    const builtins = py.pyimport('builtins');
    try {
      if (!builtins.hasattr(sys, STASH)) return;
      const stash = builtins.getattr(sys, STASH) as PyProxy;
      builtins.delattr(sys, STASH);
      try {
        const entries = stash.toJs({ depth: 1, dict_converter: Object.fromEntries }) as Record<string, PyProxy>;
        for (const [filename, entry] of Object.entries(entries)) this.kept.set(filename, entry);
      } finally {
        stash.destroy();
      }
    } finally {
      builtins.destroy();
      sys.destroy();
    }
  }

  /** The part's code object; the caller destroys it. */
  take(part: HarnessPart): PyProxy {
    const [source, filename] = HARNESS[part];
    const entry = this.kept.get(filename) as (PyProxy & { get(index: number): unknown }) | undefined;
    this.kept.delete(filename);
    if (entry) {
      try {
        if (entry.get(0) === source) return entry.get(1) as PyProxy;
      } finally {
        entry.destroy();
      }
    }
    const builtins = this.py.pyimport('builtins');
    try {
      return builtins.compile(source, filename, 'exec') as PyProxy;
    } finally {
      builtins.destroy();
    }
  }

  /** Runs the part's top level in `scope`. */
  exec(part: HarnessPart, scope: PyProxy): void {
    const code = this.take(part);
    const builtins = this.py.pyimport('builtins');
    try {
      builtins.exec(code, scope);
    } finally {
      builtins.destroy();
      code.destroy();
    }
  }

  dispose(): void {
    for (const entry of this.kept.values()) entry.destroy();
    this.kept.clear();
  }
}
