// Least authority for the worker thread that runs Pyodide. Python reaches this thread's JS globals through
// `import js`, so whatever `process` offers, Python has. The host process also runs under Node's permission
// model (sandbox/nodePermission.ts) inside an OS sandbox (sandbox/bubblewrap.ts); these two steps make Pyodide
// work under the model and take away, in this realm, what it does not cover.
import * as fs from 'node:fs';

type MutableProcess = Record<string, unknown>;

/**
 * Emscripten's NODEFS reads the fs flag constants through `process.binding('constants')`, which the
 * permission model refuses; answer that one request from the public API.
 */
export function shimConstantsBinding(): void {
  const target = process as unknown as MutableProcess;
  const original = target.binding as ((name: string) => unknown) | undefined;
  target.binding = (name: string) => {
    if (name === 'constants') return { fs: fs.constants };
    if (!original) throw new Error(`process.binding("${name}") is not available`);
    return original.call(process, name);
  };
}

/** Process powers Python has no business with: killing other processes (the parent), loading native code, reaching Node's internals. */
const WITHHELD = ['kill', '_kill', 'dlopen', 'binding', '_linkedBinding', 'getBuiltinModule', 'setuid', 'setgid', 'setgroups', 'initgroups', 'chdir', 'umask', '_debugProcess', '_startProfilerIdleNotifier'];

/** Run once Pyodide is set up, before any user code: the withheld functions throw from then on. */
export function withholdProcessPowers(): string[] {
  const target = process as unknown as MutableProcess;
  const withheld: string[] = [];
  for (const name of WITHHELD) {
    if (typeof target[name] !== 'function') continue;
    const refuse = () => {
      throw new Error(`process.${name} is not available to code running in Pyodide`);
    };
    Object.defineProperty(target, name, { value: refuse, writable: false, configurable: false });
    withheld.push(name);
  }
  return withheld;
}
