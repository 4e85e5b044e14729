import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ShapeOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Engine } from '../engine/engine';
import type { RunOrigin, ToolApprovals } from '../engine/types';
import { PRODUCT_VERSION } from '../version';
import type { ToolBridge } from '../engine/codemode/bridge';
import type { SettingsPort } from '../engine/userSettings';
import type { Stores } from '../engine/stores/index';
import { ClientLog } from './clientLog';
import { approvalViaElicitation } from './elicitApproval';
import { inputViaElicitation } from './elicitInput';
import { registerEnvironmentTools } from './environmentTools';
import { packagesAnnotations, registerPackageTools } from './packageTools';
import { RunTaskStore } from './runTaskStore';
import { codeReachesOutside, guarded, refused, runForTool, runPythonInput, runResultOutput, type OfferedTools, type RunChannel } from './shared';
import { codeFileToRun, registerStoreTools } from './storeTools';
import type { ToolName } from './toolNames';
import { answerExactErrors, answerPlainCallsDirectly, compactToolList, dispatchRequestsDirectly, explainCancelledTaskResults, refuseCallsNotOffered } from './sdkHandlers';
import { runsAsTask } from './toolTasks';

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
}

/** The MCP surface of the engine. Built per connection; the engine is shared. */
export function createMcpServer(engine: Engine, options: McpServerOptions = {}): McpServer {
  const taskStore = new RunTaskStore();
  const server = new McpServer(
    { name: 'code-mode-python', version: PRODUCT_VERSION },
    {
      instructions: 'Run Python with run_python. Prefer one run that does several steps over many small calls.',
      // run_python may run as a task (toolTasks.ts); tasks/get, tasks/result, tasks/list and tasks/cancel are the SDK's.
      taskStore,
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    },
  );
  const log = new ClientLog(server.server);
  const { bridge, stores } = options;
  const reach = () => codeReachesOutside(engine, options);
  const sessionAllowed = new Set<string>();
  // Asked per call: the client's capabilities are known only once it has initialized.
  const toolApprovals = (channel: RunChannel): ToolApprovals => options.toolApprovals ?? { ask: approvalViaElicitation(server.server, channel), sessionAllowed };
  const runAnnotations = (): ToolAnnotations => ({ title: 'Run Python', readOnlyHint: false, destructiveHint: reach(), idempotentHint: false, openWorldHint: reach() });

  const runPython = (args: ShapeOutput<typeof runPythonInput>, channel: RunChannel): Promise<CallToolResult> =>
    guarded(async () => {
      const code = await codeToRun(args, stores);
      if (typeof code !== 'string') return code;
      const result = await runForTool(
        engine,
        {
          code,
          backend: args.backend,
          timeoutS: args.timeout_s,
          session: args.session,
          scope: options.sessionScope,
          reset: args.reset,
          origin: options.origin ?? 'mcp',
          tool: 'run_python',
          // Asked per call: the client's capabilities are known only once it has initialized.
          onInput: inputViaElicitation(server.server, channel),
          toolApprovals: toolApprovals(channel),
        },
        channel,
        log,
      );
      // Code calls other servers through the bridge: one may have failed during the run.
      if (bridge) await log.serversChecked(bridge, channel);
      return result;
    });

  const tools: OfferedTools = {
    run_python: server.experimental.tasks.registerToolTask(
      'run_python',
      {
        description:
          'Run Python; globals, imports and installs persist per session (default "default"). display(obj), open matplotlib figures ' +
          'and printed image/text paths come back as content. backend: pyodide (sandboxed, default) or python (workspace interpreter)' +
          (engine.backendKinds.includes('jupyter') ? ' or jupyter (a Jupyter Server kernel). ' : '. ') +
          'file: run a code_file .py instead of code. reset: fresh interpreter. timeout_s: default 30. input() asks the user. Do many steps per run' +
          (bridge
            ? '; MCP tools are Python functions: `from code_mode import tools`, print(tools.search("words")) lists them, ' +
              'help(tools.x.y) documents one.'
            : '.'),
        inputSchema: runPythonInput,
        outputSchema: runResultOutput,
        annotations: runAnnotations(),
        execution: { taskSupport: 'optional' },
      },
      runsAsTask(runPython, { server: server.server, store: taskStore, runLimitS: (args) => args.timeout_s ?? engine.config.timeoutS }),
    ),
  };

  if (options.settings) {
    Object.assign(tools, registerEnvironmentTools(server, { engine, settings: options.settings, bridge, learningsCount: options.learningsCount, sessionScope: options.sessionScope }));
  }

  if (stores) Object.assign(tools, registerStoreTools(server, { stores }));
  Object.assign(tools, registerPackageTools(server, { engine, log, sessionScope: options.sessionScope }));

  refuseCallsNotOffered(server, (name) => {
    const tool = tools[name as ToolName];
    return tool?.enabled ? tool : undefined;
  });
  answerPlainCallsDirectly(server);
  compactToolList(server);
  dispatchRequestsDirectly(server);
  explainCancelledTaskResults(server, taskStore);
  answerExactErrors(server);
  // The backends' settings, and the external servers code can reach, decide whether a run reaches outside.
  const changes: ChangeSource[] = [(listener) => engine.onStateChange(listener)];
  if (bridge) changes.push((listener) => bridge.onDidChange(listener));
  followSettings(server, changes, [
    [tools.run_python, runAnnotations],
    [tools.packages, () => packagesAnnotations(engine)],
  ]);
  if (bridge) followServers(server, bridge, log);
  // Over HTTP the connection is one MCP session: when it ends, so do its tasks and their runs.
  whenClosed(server, () => taskStore.close());
  return server;
}

/** The code of a run_python call (given, or a code file's), or why there is none. */
async function codeToRun(args: { code?: string; file?: string }, stores: Stores | undefined): Promise<string | CallToolResult> {
  const { code, file } = args;
  if (file === undefined) return code ?? refused('give code, or the file to run');
  if (code !== undefined) return refused('give either code or file, not both');
  if (!stores) return refused('this server keeps no code files');
  return codeFileToRun(stores, file);
}

/**
 * Annotations stay true to the settings: when the workspace interpreter is turned on or off, or the sandbox's
 * network changes, the hints that depend on it are updated (the client gets tools/list_changed). The engine's
 * state changes at every run's start and end, so the check is a field-by-field compare, not a serialization.
 */
function followSettings(server: McpServer, changes: ChangeSource[], hints: [RegisteredTool | undefined, () => ToolAnnotations][]): void {
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

/** External servers that fail are told to the client's log when the bridge notices. */
function followServers(server: McpServer, bridge: ToolBridge, log: ClientLog): void {
  const listener = bridge.onDidChange(() => void log.serversChecked(bridge));
  whenClosed(server, () => listener.dispose());
}

function whenClosed(server: McpServer, dispose: () => void): void {
  const previous = server.server.onclose;
  server.server.onclose = () => {
    dispose();
    previous?.();
  };
}
