// The tools this server offers, one module each, registered for one connection; and their annotations kept true
// to the settings while it lasts.
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Engine } from '../../engine/index';
import type { ClientLog } from '../clientLog';
import type { RunTaskStore } from '../runTaskStore';
import type { McpServerOptions } from '../server';
import { whenClosed } from '../shared';
import type { ToolName } from '../toolNames';
import { registerCodeFileTool } from './codeFile';
import { registerEnvironmentTool } from './environment';
import { registerLearningsTool } from './learnings';
import { packagesAnnotations, registerPackagesTool } from './packages';
import { registerRunTool, runAnnotations } from './run';

/** The tools one server offers, by name. */
export type OfferedTools = Partial<Record<ToolName, RegisteredTool>>;

/** What the tools of one connection share: the engine, the connection's log and task store, the server's options. */
export interface ToolsContext {
  engine: Engine;
  log: ClientLog;
  taskStore: RunTaskStore;
  options: McpServerOptions;
}

/** Registers every tool the options allow: environment with settings, code_file and learnings with stores. */
export function registerTools(server: McpServer, ctx: ToolsContext): OfferedTools {
  const { engine, log, taskStore, options } = ctx;
  const { bridge, stores, sessionScope } = options;
  const tools: OfferedTools = {
    run_python: registerRunTool(server, {
      engine,
      log,
      taskStore,
      origin: options.origin,
      bridge,
      stores,
      sessionScope,
      toolApprovals: options.toolApprovals,
    }),
  };
  if (options.settings) {
    tools.environment = registerEnvironmentTool(server, {
      engine,
      settings: options.settings,
      bridge,
      learningsCount: options.learningsCount,
      sessionScope,
    });
  }
  if (stores) {
    tools.code_file = registerCodeFileTool(server, stores);
    tools.learnings = registerLearningsTool(server, stores);
  }
  tools.packages = registerPackagesTool(server, { engine, log, sessionScope });
  // The backends' settings, and the external servers code can reach, decide whether a run reaches outside.
  const changes: ChangeSource[] = [(listener) => engine.onStateChange(listener)];
  if (bridge) changes.push((listener) => bridge.onDidChange(listener));
  followSettings(server, changes, [
    [tools.run_python, () => runAnnotations(engine, bridge)],
    [tools.packages, () => packagesAnnotations(engine)],
  ]);
  return tools;
}

/**
 * Annotations stay true to the settings: when the workspace interpreter is turned on or off, or the sandbox's
 * network changes, the hints that depend on it are updated (the client gets tools/list_changed). The engine's
 * state changes at every run's start and end, so the check is a field-by-field compare, not a serialization.
 */
function followSettings(
  server: McpServer,
  changes: ChangeSource[],
  hints: [RegisteredTool | undefined, () => ToolAnnotations][],
): void {
  const shown = hints.map(([, annotations]) => annotations());
  const listeners = changes.map((onChange) =>
    onChange(() => {
      hints.forEach(([tool, annotations], i) => {
        const now = annotations();
        if (sameAnnotations(now, shown[i]!)) return;
        shown[i] = now;
        tool?.update({ annotations: now });
      });
    }),
  );
  whenClosed(server, () => listeners.forEach((listener) => listener.dispose()));
}

type ChangeSource = (listener: () => void) => { dispose(): void };

/** Annotations are flat: a title and hints. */
function sameAnnotations(a: ToolAnnotations, b: ToolAnnotations): boolean {
  const keys = Object.keys(a) as (keyof ToolAnnotations)[];
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
