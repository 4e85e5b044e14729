import * as vscode from 'vscode';
import type { Engine, BackendKind } from '../../engine/index';
import type { EngineService } from './engineService';

/** Why each backend that is not sandboxed is off in Restricted Mode (Pyodide stays on). */
export const UNTRUSTED_REASONS: Readonly<Partial<Record<BackendKind, string>>> = {
  python:
    'Workspace Python is off because this workspace is not trusted (Restricted Mode). Trust the workspace to use it; Pyodide stays available.',
  jupyter:
    'The Jupyter backend is off because this workspace is not trusted (Restricted Mode): its kernels are not sandboxed. Trust the workspace to use it; Pyodide stays available.',
};

const untrustedBackends = Object.entries(UNTRUSTED_REASONS) as [BackendKind, string][];

/** Workspace trust: in Restricted Mode the unsandboxed backends (workspace Python, Jupyter) are off, until trust is granted. */
export class TrustService {
  constructor(private readonly engine: EngineService) {}

  /** For a new engine, before its first run. */
  async apply(engine: Engine): Promise<void> {
    if (vscode.workspace.isTrusted) return;
    for (const [kind, reason] of untrustedBackends) await engine.setBackendEnabled(kind, false, reason);
  }

  async granted(): Promise<void> {
    const engine = await this.engine.ifCreated();
    for (const [kind, reason] of untrustedBackends) await engine?.setBackendEnabled(kind, true, reason);
  }
}
