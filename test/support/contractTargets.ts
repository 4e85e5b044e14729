// What the contract suite (test/contract/*.test.ts) runs over: every backend, and the jupyter backend a second
// time on a kernel of a real JupyterHub's user server (test/support/jupyterhub.ts), reached by URL and token;
// Pyodide in the sandbox under test (test/support/sandboxUnderTest.ts).
import type { JupyterSettings } from '../../src/engine/index';
import type { BackendKind } from '../../src/engine/types';
import { localJupyter } from './jupyter';
import { startTestHub, type TestHub } from './jupyterhub';
import { contractBackends, underDeno } from './sandboxUnderTest';

export interface ContractTarget {
  /** The suite's name says it: "the pyodide backend", "the jupyter backend on a JupyterHub". */
  readonly label: string;
  readonly backend: BackendKind;
  /** The kernel runs as another user than these tests: its pid is not reported (a remote server's would mean nothing here). */
  readonly remoteKernel: boolean;
  /** Starts what the target needs (a hub) and says which Jupyter server the engine uses. */
  setUp(): Promise<JupyterSettings>;
  tearDown(): Promise<void>;
}

function hubTarget(): ContractTarget {
  let hub: TestHub | undefined;
  return {
    label: 'jupyter backend on a JupyterHub',
    backend: 'jupyter',
    remoteKernel: true,
    async setUp() {
      hub = await startTestHub();
      await hub.startServer();
      return { url: hub.userUrl, token: hub.token };
    },
    tearDown: async () => hub?.stop(),
  };
}

/** Under Deno (CODE_MODE_TEST_SANDBOX=deno) only Pyodide, the backend it confines: the others ran already. */
export function contractTargets(): ContractTarget[] {
  const local = contractBackends.map((backend): ContractTarget => ({
    label: `${backend} backend`,
    backend,
    remoteKernel: false,
    setUp: async () => localJupyter,
    tearDown: async () => undefined,
  }));
  return underDeno ? local : [...local, hubTarget()];
}
