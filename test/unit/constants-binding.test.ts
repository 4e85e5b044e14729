// The one answer to Node's private `process.binding('constants')` (src/engine/backends/pyodide/constantsBinding.ts),
// checked against the installed Pyodide: its NODEFS must still ask for the fs flags that way (otherwise the shim is
// dead, or Pyodide now asks somewhere the shim does not answer), and every flag it reads must be in the answer even
// where Node refuses the binding, as its permission model does.
import { after, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { shimConstantsBinding } from '../../src/engine/backends/pyodide/constantsBinding';

const nodeBinding = Object.getOwnPropertyDescriptor(process, 'binding');
after(() => {
  if (nodeBinding) Object.defineProperty(process, 'binding', nodeBinding);
});

type Binding = (name: string) => unknown;
const processWithBinding = process as unknown as { binding: Binding };

/** The fs flags Pyodide's NODEFS reads from `process.binding("constants")["fs"]`, from the installed script. */
function flagsPyodideReads(): string[] {
  const script = fs.readFileSync(require.resolve('pyodide/pyodide.asm.js'), 'utf8');
  const read = /var (\w+)=process\.binding\("constants"\)\["fs"\];NODEFS\.flagsForNodeMap=\{([^}]*)\}/.exec(script);
  assert.ok(read, 'NODEFS no longer reads its flags from process.binding("constants"): the shim must follow or go');
  const flags = [...read[2].matchAll(new RegExp(`${read[1]}\\["(\\w+)"\\]`, 'g'))].map((m) => m[1]);
  assert.ok(flags.length > 0, 'NODEFS reads no flag from the binding it asks for');
  return flags;
}

test("NODEFS gets every flag it reads, with fs.constants' values, where Node refuses the binding", () => {
  const flags = flagsPyodideReads();
  assert.ok(flags.includes('O_CREAT') && flags.includes('O_RDONLY'), flags.join());
  processWithBinding.binding = (name: string) => {
    throw new Error(`refused: process.binding("${name}")`);
  };
  shimConstantsBinding();
  const answer = processWithBinding.binding('constants') as { fs: Record<string, number> };
  for (const flag of flags) assert.equal(answer.fs[flag], fs.constants[flag as keyof typeof fs.constants], flag);
  assert.throws(() => processWithBinding.binding('fs'), /refused: process\.binding\("fs"\)/, 'other names go to Node');
});

test('without a process.binding at all, the constants are answered and other names say they are not available', () => {
  Reflect.deleteProperty(process, 'binding');
  shimConstantsBinding();
  assert.equal((processWithBinding.binding('constants') as { fs: typeof fs.constants }).fs, fs.constants);
  assert.throws(() => processWithBinding.binding('fs'), /process\.binding\("fs"\) is not available/);
});
