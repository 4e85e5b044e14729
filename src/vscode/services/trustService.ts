import * as vscode from 'vscode';
import type { Engine } from '../../engine/engine';
import type { EngineService } from './engineService';

export const UNTRUSTED_REASON =
  'Workspace Python is off because this workspace is not trusted (Restricted Mode). Trust the workspace to use it; Pyodide stays available.';

export const UNTRUSTED_JUPYTER_REASON =
  'The Jupyter backend is off because this workspace is not trusted (Restricted Mode): its kernels are not sandboxed. Trust the workspace to use it; Pyodide stays available.';

/** Workspace trust: in Restricted Mode the unsandboxed backends (workspace Python, Jupyter) are off, until trust is granted. */
export class TrustService {
  constructor(private readonly engine: EngineService) {}

  /** For a new engine, before its first run. */
  async apply(engine: Engine): Promise<void> {
    if (vscode.workspace.isTrusted) return;
    await engine.setBackendEnabled('python', false, UNTRUSTED_REASON);
    await engine.setBackendEnabled('jupyter', false, UNTRUSTED_JUPYTER_REASON);
  }

  async granted(): Promise<void> {
    const engine = await this.engine.ifCreated();
    await engine?.setBackendEnabled('python', true, UNTRUSTED_REASON);
    await engine?.setBackendEnabled('jupyter', true, UNTRUSTED_JUPYTER_REASON);
  }
}
