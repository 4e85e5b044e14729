import { Server } from '@modelcontextprotocol/server';
import type { Engine, RunOrigin, ToolApprovals, ToolBridge, SettingsPort, Stores } from '../engine/index';
import { PRODUCT_VERSION } from '../version';
import { ClientLog } from './clientLog';
import { PausedCalls } from './pausedCalls';
import type { SharedResultBudget } from './keptResults';
import { RunTaskStore } from './runTaskStore';
import type { SessionHandles } from './sessionHandles';
import { whenClosed } from './shared';
import type { TaskExtension } from './taskExtension';
import { serveTaskMethods } from './taskMethods';
import { ToolRegistry } from './toolRegistry';
import { serveAppResource } from './appResource';
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
   * For clients without MCP sessions (2026-07-28 over HTTP): each call's scope comes from the `handle` it passes,
   * and a call without one gets a new handle. Takes the place of `sessionScope`.
   */
  sessionHandles?: SessionHandles;
  /**
   * Who approves tool calls from runs this server starts (VS Code's question, with the window's memory). Default:
   * the client, by elicitation, with "Allow this tool for this session" kept for this MCP session.
   */
  toolApprovals?: ToolApprovals;
  /**
   * Runs waiting for a 2026-07-28 client's answer between rounds. Given when one table must outlive the server
   * (over HTTP each 2026 request gets a server of its own); else each server keeps its own.
   */
  pausedCalls?: PausedCalls;
  /**
   * The 2026 tasks extension's tasks, which outlive the server of one request: one per HTTP server or stdio
   * connection. Without it no 2026 client gets a task.
   */
  taskExtension?: TaskExtension;
  /** Shared with the other connections of one HTTP server: their task results' bytes, together. */
  taskResultBudget?: SharedResultBudget;
}

/** Each server's task store, for runningTasks. */
const taskStores = new WeakMap<Server, RunTaskStore>();

/** How many runs `server` has under way as tasks: they go on with no request in flight. */
export function runningTasks(server: Server): number {
  return taskStores.get(server)?.runningCount ?? 0;
}

/** The MCP surface of the engine: its tools (tools/) on the SDK's protocol layer. Built per connection; the engine is shared. */
export function createMcpServer(engine: Engine, options: McpServerOptions = {}): Server {
  const taskStore = new RunTaskStore(undefined, options.taskResultBudget);
  const paused = options.pausedCalls ?? new PausedCalls();
  const server = new Server(
    { name: 'code-mode-python', version: PRODUCT_VERSION },
    {
      instructions: 'Run Python with run_python. Prefer one run that does several steps over many small calls.',
      requestState: { verify: paused.verify },
    },
  );
  taskStores.set(server, taskStore);
  const log = new ClientLog(server);
  serveTaskMethods(server, taskStore, options.taskExtension);
  serveAppResource(server);
  registerTools(new ToolRegistry(server, paused, options.taskExtension), {
    server,
    paused,
    engine,
    log,
    taskStore,
    options,
  });
  if (options.bridge) followServers(server, options.bridge, log);
  // Over HTTP the connection is one MCP session: when it ends, so do its tasks and their runs.
  whenClosed(server, () => {
    taskStore.close();
    if (!options.pausedCalls) paused.close();
  });
  return server;
}

/** External servers that fail are told to the client's log when the bridge notices. */
function followServers(server: Server, bridge: ToolBridge, log: ClientLog): void {
  const listener = bridge.onDidChange(() => void log.serversChecked(bridge));
  whenClosed(server, () => listener.dispose());
}
