// Emscripten's NODEFS, inside Pyodide's pyodide.asm.js, reads the fs flag constants through Node's deprecated
// internal `process.binding('constants')`, which Node's permission model refuses. This file is the one place that
// answers it, from the public API; test/unit/constants-binding.test.ts reads the installed Pyodide and fails when
// it stops asking that way or asks for a flag the answer lacks.
import * as fs from 'node:fs';

type MutableProcess = Record<string, unknown>;

/** Answers `process.binding('constants')` from `fs.constants`; any other name goes to Node's own, where there is one. */
export function shimConstantsBinding(): void {
  const target = process as unknown as MutableProcess;
  const original = target.binding as ((name: string) => unknown) | undefined;
  target.binding = (name: string) => {
    if (name === 'constants') return { fs: fs.constants };
    if (!original) throw new Error(`process.binding("${name}") is not available`);
    return original.call(process, name);
  };
}
