import type { Engine } from '../engine';
import type { Logger } from '../types';
import { ToolBridge } from './bridge';
import { ExternalServers, type ServerSources } from './externalServers';

export interface CodeMode {
  bridge: ToolBridge;
  external: ExternalServers;
  dispose(): Promise<void>;
}

/** Connects Python's `code_mode.tools` to the configured MCP servers (and whatever else joins the bridge). */
export async function attachCodeMode(engine: Engine, sources: ServerSources, log: Logger): Promise<CodeMode> {
  const bridge = new ToolBridge(log);
  engine.setHostCallHandler(bridge.hostCallHandler());
  const external = new ExternalServers(bridge, log, sources);
  await external.start();
  return {
    bridge,
    external,
    dispose: async () => {
      external.dispose();
      await bridge.dispose();
    },
  };
}
