// Which Pyodide sandbox the suites in test/sandbox and test/contract run against. `npm run test:sandbox`
// leaves it to auto (bubblewrap on Linux); `npm run test:sandbox:deno` and `test:contract:deno` set
// CODE_MODE_TEST_SANDBOX=deno (test/deno.env), so the same cases, with the same expectations, run with
// Deno's permission model holding the boundary and bubblewrap not used.
import { isSandboxChoice, type SandboxChoice } from '../../src/engine/sandbox/index';
import { BACKEND_KINDS, type BackendKind } from '../../src/engine/types';

const requested = process.env.CODE_MODE_TEST_SANDBOX ?? 'auto';
if (!isSandboxChoice(requested))
  throw new Error(`CODE_MODE_TEST_SANDBOX must be auto, bubblewrap or deno, not ${requested}`);

export const sandboxUnderTest: SandboxChoice = requested;
export const underDeno = sandboxUnderTest === 'deno';

/** The mechanism the environment tool must report for this run on this platform. */
export const expectedMechanism = underDeno ? 'deno' : process.platform === 'linux' ? 'bubblewrap' : undefined;

/**
 * For a case that only bubblewrap can hold: the skip reason shown in the test output when the run is under
 * Deno, naming what is not held and why (SECURITY.md and docs/sandbox.md list the same cases).
 */
export function onlyBubblewrap(why: string): string | false {
  return underDeno && `only bubblewrap holds this, not Deno: ${why}`;
}

/** For a case only Deno's permission broker holds: the skip reason under bubblewrap (SECURITY.md lists it as a gap). */
export function onlyDeno(why: string): string | false {
  return !underDeno && `only Deno holds this, not bubblewrap: ${why}`;
}

/** The CLI flag that selects the sandbox under test. */
export const sandboxFlags: string[] = ['--pyodide-sandbox', sandboxUnderTest];

/** The backends the contract suite runs on: all of them, or under Deno only Pyodide, the one it confines. */
export const contractBackends: readonly BackendKind[] = underDeno ? ['pyodide'] : BACKEND_KINDS;
