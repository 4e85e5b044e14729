import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Engine, RunOrigin, ToolApprovals, ToolBridge, SettingsPort, Stores } from '../engine/index';
import { PRODUCT_VERSION } from '../version';
import { ClientLog } from './clientLog';
import { RunTaskStore, type SharedResultBudget } from './runTaskStore';
import { whenClosed } from './shared';
import type { ToolName } from './toolNames';
import {
  answerExactErrors,
  answerPlainCallsDirectly,
  compactToolList,
  dispatchRequestsDirectly,
  explainCancelledTaskResults,
  refuseCallsNotOffered,
} from './sdkHandlers';
import { registerTools } from './tools/index';

export interface McpServerOptions {
  /** Tagged on runs this server starts, so front doors can tell agents' runs apart. */
  origin?: RunOrigin;
  /** The code-mode bridge: with it code in run_python calls other MCP servers' tools. */
  bridge?: ToolBridge;
  /** Where changed defaults persist; with it the server offers `environment`. */
  settings?: SettingsPort;
  /** How many learnings are stored, for `environment`. */
  learningsCount?: () => number;
  /** Code files and learnings; with them the server offers code_file, learnings and run_python's `file`. */
  stores?: Stores;
  /**
   * Runs and packages go to this client's own sessions (the engine scope), so two clients of one engine never
   * share globals; its session names stay the client's own. Undefined: the engine's shared sessions.
   */
  sessionScope?: string;
  /**
   * Who approves tool calls from runs this server starts (VS Code's question, with the window's memory). Default:
   * the client, by elicitation, with "Allow this tool for this session" kept for this MCP session.
   */
  toolApprovals?: ToolApprovals;
  /** Shared with the other connections of one HTTP server: their task results' bytes, together. */
  taskResultBudget?: SharedResultBudget;
}

/** Each server's task store, for runningTasks. */
const taskStores = new WeakMap<McpServer, RunTaskStore>();

/** How many runs `server` has under way as tasks: they go on with no request in flight. */
export function runningTasks(server: McpServer): number {
  return taskStores.get(server)?.runningCount ?? 0;
}

/** The MCP surface of the engine: its tools (tools/) on the SDK's McpServer as adjusted (sdkHandlers.ts). Built per connection; the engine is shared. */
export function createMcpServer(engine: Engine, options: McpServerOptions = {}): McpServer {
  const taskStore = new RunTaskStore(undefined, options.taskResultBudget);
  const server = new McpServer(
    { name: 'code-mode-python', version: PRODUCT_VERSION },
    {
      instructions: 'Run Python with run_python. Prefer one run that does several steps over many small calls.',
      // run_python may run as a task (toolTasks.ts); tasks/get, tasks/result, tasks/list and tasks/cancel are the SDK's.
      taskStore,
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    },
  );
  taskStores.set(server, taskStore);
  const log = new ClientLog(server.server);
  const tools = registerTools(server, { engine, log, taskStore, options });

  refuseCallsNotOffered(server, (name) => {
    const tool = tools[name as ToolName];
    return tool?.enabled ? tool : undefined;
  });
  answerPlainCallsDirectly(server);
  compactToolList(server);
  dispatchRequestsDirectly(server);
  explainCancelledTaskResults(server, taskStore);
  answerExactErrors(server);
  if (options.bridge) followServers(server, options.bridge, log);
  // Over HTTP the connection is one MCP session: when it ends, so do its tasks and their runs.
  whenClosed(server, () => taskStore.close());
  return server;
}

/** External servers that fail are told to the client's log when the bridge notices. */
function followServers(server: McpServer, bridge: ToolBridge, log: ClientLog): void {
  const listener = bridge.onDidChange(() => void log.serversChecked(bridge));
  whenClosed(server, () => listener.dispose());
}
