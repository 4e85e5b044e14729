// The tools this server offers, one module each, registered for one connection; and their annotations kept true
// to the settings while it lasts.
import type { Server } from '@modelcontextprotocol/server';
import type { Engine } from '../../engine/index';
import { scopeForCall } from '../callScope';
import type { ClientLog } from '../clientLog';
import type { RunTaskStore } from '../runTaskStore';
import type { PausedCalls } from '../pausedCalls';
import type { McpServerOptions } from '../server';
import { whenClosed } from '../shared';
import { watchToolList, type WatchedTool } from '../toolListWatch';
import type { ToolName } from '../toolNames';
import type { RegisteredTool, ToolRegistry } from '../toolRegistry';
import { registerCodeFileTool } from './codeFile';
import { registerEnvironmentTool } from './environment';
import { registerLearningsTool } from './learnings';
import { registerPackagesTool } from './packages';
import { registerRunTool } from './run';

/** The tools one server offers, by name. */
export type OfferedTools = Partial<Record<ToolName, RegisteredTool>>;

/** What the tools of one connection share: the engine, the connection's log and task store, the server's options. */
export interface ToolsContext {
  server: Server;
  paused: PausedCalls;
  engine: Engine;
  log: ClientLog;
  taskStore: RunTaskStore;
  options: McpServerOptions;
}

/** Registers every tool the options allow: environment with settings, code_file and learnings with stores. */
export function registerTools(registry: ToolRegistry, ctx: ToolsContext): OfferedTools {
  const { server, engine, log, taskStore, options } = ctx;
  const { bridge, stores } = options;
  const scopes = scopeForCall(options);
  const tools: OfferedTools = {
    run_python: registerRunTool(registry, {
      server,
      engine,
      log,
      taskStore,
      origin: options.origin,
      bridge,
      stores,
      scopes,
      toolApprovals: options.toolApprovals,
      paused: ctx.paused,
    }),
  };
  if (options.settings) {
    tools.environment = registerEnvironmentTool(registry, {
      engine,
      settings: options.settings,
      bridge,
      learningsCount: options.learningsCount,
      scopes,
      byHandle: options.sessionHandles !== undefined,
    });
  }
  if (stores) {
    tools.code_file = registerCodeFileTool(registry, stores);
    tools.learnings = registerLearningsTool(registry, stores);
  }
  tools.packages = registerPackagesTool(registry, { engine, log, scopes });
  // Annotations stay true to the settings: when the workspace interpreter is turned on or off, the sandbox's network
  // changes or external servers come or go, the hints that depend on it are updated (the client gets
  // tools/list_changed).
  const watch = watchToolList(engine, bridge, (changed) => {
    for (const [tool, annotations] of Object.entries(changed)) tools[tool as WatchedTool]?.update({ annotations });
  });
  whenClosed(server, () => watch.dispose());
  return tools;
}
