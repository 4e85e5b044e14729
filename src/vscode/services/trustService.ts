import * as vscode from 'vscode';
import type { Engine } from '../../engine/engine';
import type { EngineService } from './engineService';

export const UNTRUSTED_REASON =
  'Workspace Python is off because this workspace is not trusted (Restricted Mode). Trust the workspace to use it; Pyodide stays available.';

/** Workspace trust: in Restricted Mode the workspace interpreter is off (Pyodide stays), until trust is granted. */
export class TrustService {
  constructor(private readonly engine: EngineService) {}

  /** For a new engine, before its first run. */
  async apply(engine: Engine): Promise<void> {
    if (!vscode.workspace.isTrusted) await engine.setBackendEnabled('python', false, UNTRUSTED_REASON);
  }

  async granted(): Promise<void> {
    await (await this.engine.ifCreated())?.setBackendEnabled('python', true, UNTRUSTED_REASON);
  }
}
