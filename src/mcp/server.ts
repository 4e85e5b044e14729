import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MAX_TIMEOUT_S, SESSION_NAME } from '../engine/config';
import type { Engine, RunOptions } from '../engine/engine';
import { renderResultText } from '../engine/result';
import { BACKEND_KINDS, type RunEvent, type RunOrigin, type RunResult } from '../engine/types';
import { PRODUCT_VERSION } from '../version';
import { renderSearch, type ToolBridge } from '../engine/codemode/bridge';
import type { SettingsPort } from '../engine/userSettings';
import { registerEnvironmentTools } from './environmentTools';
import { registerPackageTools } from './packageTools';
import type { Stores } from '../engine/stores/index';
import { registerStoreTools } from './storeTools';

export interface McpServerOptions {
  /** Tagged on runs this server starts, so front doors can tell agents' runs apart. */
  origin?: RunOrigin;
  /** The code-mode bridge; with it the server offers search_tools. */
  bridge?: ToolBridge;
  /** Where `configure` persists; with it the server offers get_environment and configure. */
  settings?: SettingsPort;
  /** How many learnings are stored, for get_environment. */
  learningsCount?: () => number;
  /** Code files and learnings; with them the server offers the *_code_file, add_learning and get_learnings tools. */
  stores?: Stores;
}

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export const runPythonInput = {
  code: z.string().describe('Python source to run. Globals persist between calls in the same session.'),
  backend: z
    .enum(BACKEND_KINDS as [string, ...string[]])
    .optional()
    .describe('"pyodide" (WebAssembly, isolated, the default) or "python" (the workspace interpreter, with its installed packages).'),
  timeout_s: z.number().positive().max(MAX_TIMEOUT_S).optional().describe('Seconds before the run is stopped (default 30).'),
  session: z.string().regex(SESSION_NAME).optional().describe('Named session whose globals persist (default "default").'),
  reset: z.boolean().optional().describe('Start from a fresh interpreter: globals, imports, sys.modules and builtins all new.'),
};

/**
 * Whether code run here can reach beyond the server: the workspace interpreter always can (it is not
 * sandboxed), Pyodide when its network is on, and both through other MCP servers when code mode is on.
 */
export function codeReachesOutside(engine: Engine, options: McpServerOptions): boolean {
  const pythonOn = engine.backendKinds.includes('python') && engine.disabledReason('python') === undefined;
  return pythonOn || engine.sandbox('pyodide')?.network === 'on' || options.bridge !== undefined;
}

/** The MCP surface of the engine (DESIGN.md section 3). Built per connection; the engine is shared. */
export function createMcpServer(engine: Engine, options: McpServerOptions = {}): McpServer {
  const server = new McpServer(
    { name: 'code-mode-python', version: PRODUCT_VERSION },
    { instructions: 'Run Python with run_python. Prefer one run that does several steps over many small calls.' },
  );

  server.registerTool(
    'run_python',
    {
      title: 'Run Python',
      description:
        'Run Python code in a persistent session and get {success, stdout, stderr, duration_ms, diagnostics}. ' +
        'Print what you need to see. Figures left open (matplotlib) and display(obj) come back as images or HTML; ' +
        'printing the path of an image or text file in the workspace or in the scratch folder ($CODE_MODE_SCRATCH) shows it. ' +
        'On failure diagnostics.error_type is SyntaxError, RuntimeError, TIMEOUT, CANCELLED, POLICY_VIOLATION, ' +
        'BACKEND_CRASHED or INVALID_ARGUMENT.' +
        (options.bridge
          ? ' Code can call other tools as functions (`from code_mode import tools`; `tools.<server>.<tool>(**kwargs)`): ' +
            'find them with search_tools, then do many steps in one run.'
          : ''),
      inputSchema: runPythonInput,
      annotations: { openWorldHint: codeReachesOutside(engine, options) },
    },
    (args, extra): Promise<CallToolResult> =>
      runForTool(
        engine,
        {
          code: args.code,
          backend: args.backend as RunResult['backend'] | undefined,
          timeoutS: args.timeout_s,
          session: args.session,
          reset: args.reset,
          origin: options.origin ?? 'mcp',
        },
        extra,
      ),
  );

  if (options.settings) {
    registerEnvironmentTools(server, { engine, settings: options.settings, bridge: options.bridge, learningsCount: options.learningsCount });
  }

  const bridge = options.bridge;
  if (bridge) {
    server.registerTool(
      'search_tools',
      {
        title: 'Search tools callable from Python',
        description:
          'List the tools Python code can call via `from code_mode import tools`, as Python signatures with one-line docs. ' +
          'Filter by words in `query` and/or by `server`. Use help(tools.<server>.<tool>) inside run_python for full docs.',
        inputSchema: {
          query: z.string().max(500).optional().describe('Words that must all appear in the tool name or docs.'),
          server: z.string().max(64).optional().describe('Only tools of this server.'),
        },
        annotations: { readOnlyHint: true },
      },
      async (args): Promise<CallToolResult> => {
        const catalog = await bridge.catalog(args.server);
        const text = renderSearch(catalog, args.query ?? '');
        return {
          content: [{ type: 'text', text }],
          structuredContent: {
            servers: catalog.servers.map((s) => ({ name: s.name, python_name: s.ident, state: s.status.state, error: s.status.error ?? null })),
            text,
          },
        };
      },
    );
  }

  if (options.stores) registerStoreTools(server, { engine, stores: options.stores, origin: options.origin ?? 'mcp', openWorld: codeReachesOutside(engine, options) });
  registerPackageTools(server, { engine });

  return server;
}

/**
 * Runs code for a tool call: output streams as progress notifications when the client sent a progress token,
 * and the client's cancel notification interrupts the run.
 */
export async function runForTool(engine: Engine, run: Omit<RunOptions, 'signal' | 'onEvent'>, extra: ToolExtra): Promise<CallToolResult> {
  const progressToken = extra._meta?.progressToken;
  let progress = 0;
  // The client drops progress that arrives after the response: every notification is awaited before it.
  const sent: Promise<unknown>[] = [];
  const onEvent =
    progressToken === undefined
      ? undefined
      : (event: RunEvent) => {
          if (event.type !== 'stdout' && event.type !== 'stderr') return;
          progress += 1;
          const notification = extra
            .sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress, message: event.type === 'stderr' ? `[stderr] ${event.text}` : event.text },
            })
            .catch(() => undefined);
          sent.push(notification);
        };
  const result = await engine.run({ ...run, signal: extra.signal, onEvent });
  await Promise.all(sent);
  return toolResult(result);
}

/** Structured content for programs, a short text for models, images as image content. */
export function toolResult(result: RunResult): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: renderResultText(result) }];
  for (const display of result.displays ?? []) {
    if (display.mime.startsWith('image/')) content.push({ type: 'image', data: display.data, mimeType: display.mime });
    // A file's text is labelled with its path, so several shown files stay apart.
    else content.push({ type: 'text', text: display.title ? `${display.title}:\n${display.data}` : display.data });
  }
  return {
    content,
    structuredContent: result as unknown as Record<string, unknown>,
    isError: !result.success,
  };
}
