// The backend of a contract target (test/support/contractTargets.ts) below the engine: its factory, built as the
// engine builds it, sessions opened on it, and the pid of a session's interpreter for tests that kill it.
import * as fs from 'node:fs';
import { jupyterBackendFor, pyodideBackendFor } from '../../src/engine/index';
import { createPythonBackend } from '../../src/engine/backends/python/backend';
import type { BackendFactory, BackendSession } from '../../src/engine/backends/contract';
import type { HostCallHandler, Logger } from '../../src/engine/types';
import type { ContractTarget } from './contractTargets';
import { run } from './backendRuns';
import { testStorageDir } from './mcp';
import { sandboxUnderTest } from './sandboxUnderTest';

const quietLog: Logger = { info() {}, warn() {}, error() {} };

const noHostMethods: HostCallHandler = async (method) => Promise.reject(new Error(`no host method ${method}`));

export interface BackendUnderTest {
  /** A new session of the target's backend; disposed with the backend. */
  open(name: string, hostCall?: HostCallHandler): BackendSession;
  /** The session's interpreter as the operating system knows it (the process the OOM killer would pick). */
  interpreterPid(session: BackendSession): Promise<number>;
  /** Disposes every session opened, then the factory and what the target started. */
  dispose(): Promise<void>;
}

/** The deepest process under `pid` (first child each level): the interpreter itself, as the OOM killer would pick it. */
export function interpreterUnder(pid: number): number {
  for (;;) {
    const children = fs
      .readdirSync(`/proc/${pid}/task`)
      .flatMap((task) => fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/))
      .filter(Boolean)
      .map(Number);
    if (children.length === 0) return pid;
    pid = children[0]!;
  }
}

export async function backendUnderTest(target: ContractTarget): Promise<BackendUnderTest> {
  const jupyter = await target.setUp();
  const factories: Record<ContractTarget['backend'], () => BackendFactory> = {
    pyodide: () => pyodideBackendFor(testStorageDir, { sandbox: sandboxUnderTest }, undefined),
    python: () => createPythonBackend({}),
    jupyter: () => jupyterBackendFor(jupyter, undefined, undefined, undefined),
  };
  const factory = factories[target.backend]();
  const sessions: BackendSession[] = [];
  return {
    open(name, hostCall = noHostMethods) {
      const session = factory.create({ session: name, hostCall, log: quietLog });
      sessions.push(session);
      return session;
    },
    async interpreterPid(session) {
      // A kernel of another user is not reported by pid: it says its own.
      if (target.remoteKernel) return Number((await run(session, 'import os\nprint(os.getpid())')).out);
      await session.start();
      const pid = session.info().pid;
      if (!pid) throw new Error(`the ${target.label} reported no pid`);
      return interpreterUnder(pid);
    },
    async dispose() {
      await Promise.all(sessions.map((session) => session.dispose()));
      await factory.dispose?.();
      await target.tearDown();
    },
  };
}
