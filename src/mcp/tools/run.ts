// run_python: its arguments and result schema, where its code comes from (given, or a code file), running it for a
// call (progress, cancellation, input and tool-call questions asked of the client), what the client's log hears of
// it, and its result as MCP content. It may run as a task (toolTasks.ts).
import type { CallToolResult, Server, ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  type ToolBridge,
  MAX_TIMEOUT_S,
  type Engine,
  type RunOptions,
  renderResultPieces,
  StoreError,
  type Stores,
  type RunOrigin,
  type RunResult,
  type ToolApprovals,
} from '../../engine/index';
import { handleArg, inScope, type ScopeForCall } from '../callScope';
import type { ClientLog } from '../clientLog';
import { approvalViaElicitation } from '../elicitApproval';
import { inputViaElicitation } from '../elicitInput';
import { RunProgress } from '../progress';
import type { RunTaskStore } from '../runTaskStore';
import {
  backendArg,
  codeReachesOutside,
  guarded,
  jsonText,
  refused,
  sessionArg,
  structured,
  type RunChannel,
} from '../shared';
import type { PausedCalls } from '../pausedCalls';
import type { RegisteredTool, ToolRegistry } from '../toolRegistry';
import { runsAsTask } from '../toolTasks';
import { RUN_CARD_URI } from '../appResource';

export interface RunToolContext {
  server: Server;
  engine: Engine;
  log: ClientLog;
  /** Where run_python's tasks live (the server's task store). */
  taskStore: RunTaskStore;
  /** The server's options that concern runs (McpServerOptions). */
  origin?: RunOrigin;
  bridge?: ToolBridge;
  stores?: Stores;
  /** Whose sessions a call reaches (callScope.ts). */
  scopes: ScopeForCall;
  toolApprovals?: ToolApprovals;
  /** Runs that wait between a 2026 client's rounds, and what a session's next run must hear of them. */
  paused: PausedCalls;
}

export const runPythonInput = z.object({
  code: z.string().optional(),
  file: z.string().optional(),
  backend: backendArg,
  // Checked here rather than as exclusiveMinimum, which Gemini's function declarations do not take (test/support/providerSchemaRules.ts).
  timeout_s: z
    .number()
    .max(MAX_TIMEOUT_S)
    .refine((seconds) => seconds > 0, 'timeout_s must be more than 0 seconds')
    .optional(),
  session: sessionArg,
  reset: z.boolean().optional(),
  handle: handleArg,
});

type RunPythonArgs = z.output<typeof runPythonInput>;

/** Whether a run may reach outside decides the hints, so they follow the settings (tools/index.ts). */
export function runAnnotations(engine: Engine, bridge: ToolBridge | undefined): ToolAnnotations {
  const reach = codeReachesOutside(engine, { bridge });
  return {
    title: 'Run Python',
    readOnlyHint: false,
    destructiveHint: reach,
    idempotentHint: false,
    openWorldHint: reach,
  };
}

/** `run_python`, callable plainly or as a task. */
export function registerRunTool(registry: ToolRegistry, ctx: RunToolContext): RegisteredTool {
  const { server, engine, log, bridge, stores } = ctx;
  const sessionAllowed = new Set<string>();
  // Asked per call: the client's capabilities are known only once it has initialized.
  const toolApprovals = (channel: RunChannel): ToolApprovals =>
    ctx.toolApprovals ?? { ask: approvalViaElicitation(channel), sessionAllowed };

  const runPython = (args: RunPythonArgs, channel: RunChannel): Promise<CallToolResult> =>
    inScope(ctx.scopes, args.handle, (scope) =>
      guarded(async () => {
        const code = await codeToRun(args, stores);
        if (typeof code !== 'string') return code;
        const result = await runForTool(
          engine,
          {
            code,
            backend: args.backend,
            timeoutS: args.timeout_s,
            ...(args.timeout_s !== undefined ? { timeoutSource: 'the timeout_s of this call' } : {}),
            session: args.session,
            scope: scope.scope,
            reset: args.reset,
            origin: ctx.origin ?? 'mcp',
            tool: 'run_python',
            onInput: inputViaElicitation(channel),
            toolApprovals: toolApprovals(channel),
          },
          channel,
          log,
          { handle: scope.handle, scope: scope.scope, notices: ctx.paused },
        );
        // Code calls other servers through the bridge: one may have failed during the run.
        if (bridge) await log.serversChecked(bridge, channel);
        return result;
      }),
    );

  return registry.register('run_python', {
    // What a model needs, and no more: it reads this at every turn (bench/tokens.ts).
    description:
      'Run Python. Variables, imports and installs persist per session (default "default"); reset: a fresh one. ' +
      "The last expression's value is shown; display(obj) and open figures come back as images or tables. " +
      'backend: pyodide (sandboxed, default), python (workspace interpreter)' +
      (engine.backendKinds.includes('jupyter') ? ', jupyter (a kernel). ' : '. ') +
      'file: a code_file .py. handle: pass back the one a result gave, if any. Do many steps in one run' +
      (bridge
        ? ': MCP tools are Python functions (`from code_mode import tools`; tools.search("words") lists them, ' +
          'help(tools.x.y) documents one).'
        : '.'),
    input: runPythonInput,
    annotations: runAnnotations(engine, bridge),
    call: runPython,
    asksDuringCall: true,
    // Hosts that render MCP Apps show the result in the run card; others ignore it.
    _meta: { ui: { resourceUri: RUN_CARD_URI } },
    callAsTask: runsAsTask(runPython, {
      server,
      store: ctx.taskStore,
      runLimitS: (args) => args.timeout_s ?? engine.config.timeoutS,
    }),
  });
}

/** The code of a run_python call (given, or a code file's), or why there is none. */
async function codeToRun(
  args: { code?: string; file?: string },
  stores: Stores | undefined,
): Promise<string | CallToolResult> {
  const { code, file } = args;
  if (file === undefined) return code ?? refused('give code, or the file to run');
  if (code !== undefined) return refused('give either code or file, not both');
  if (!stores) return refused('this server keeps no code files');
  return codeFileToRun(stores, file);
}

/** The code of a code file run_python is asked to run: a .py file of the store. */
async function codeFileToRun(stores: Stores, filename: string): Promise<string> {
  // The name's own problems (traversal, separators) are the clearer message, so they are checked first.
  stores.codeFiles.path(filename);
  if (!filename.toLowerCase().endsWith('.py'))
    throw new StoreError(`only .py files run; "${filename}" is data (read it with code_file)`);
  return (await stores.codeFiles.read(filename)).content;
}

/**
 * Runs code for a tool call: output streams as coalesced progress notifications (with a heartbeat while the
 * run is silent) when the client sent a progress token, the client's cancel notification interrupts the run,
 * and what the client should hear of (a reset session, a policy refusal, an install) goes to its log.
 */
async function runForTool(
  engine: Engine,
  run: Omit<RunOptions, 'signal' | 'onEvent'>,
  extra: RunChannel,
  log: ClientLog,
  where: { handle?: string; scope?: string; notices: PausedCalls },
): Promise<CallToolResult> {
  const progressToken = extra._meta?.progressToken;
  const progress =
    progressToken === undefined
      ? undefined
      : new RunProgress((progress, message) =>
          extra.notify({ method: 'notifications/progress', params: { progressToken, progress, message } }),
        );
  let result: RunResult;
  try {
    result = await engine.run({
      ...run,
      signal: extra.signal,
      onEvent:
        progress &&
        ((event) => (event.type === 'stdout' || event.type === 'stderr') && progress.output(event.type, event.text)),
    });
  } finally {
    // The client drops progress that arrives after the response: every notification is handed over before it.
    await progress?.finish();
  }
  await tellRunFinished(log, result, run.reset === true, extra);
  const session = `${where.scope ?? ''}\0${result.backend}\0${result.session}`;
  if (extra.nobodyWaits?.()) {
    where.notices.remember(
      session,
      `run ${result.run_id} of this session was stopped before its result was read (${String(extra.signal.reason)}); ` +
        'its output is lost, its variables are kept',
    );
    return toolResult(result);
  }
  const notice = where.notices.take(session);
  return toolResult({
    ...result,
    ...(where.handle === undefined ? {} : { handle: where.handle }),
    ...(notice === undefined ? {} : { notice }),
  });
}

/** A replaced interpreter, a policy refusal and an install go to the client's log. `askedForReset`: the caller wanted a fresh interpreter, so its reset is news, not a warning. */
async function tellRunFinished(
  log: ClientLog,
  result: RunResult,
  askedForReset: boolean,
  extra: RunChannel,
): Promise<void> {
  const where = { backend: result.backend, session: result.session, run_id: result.run_id };
  if (result.session_reset)
    await log.send(
      askedForReset ? 'info' : 'warning',
      { event: 'session_reset', ...where, reason: result.reset_reason },
      extra,
    );
  const policy = result.diagnostics?.policy;
  if (policy)
    await log.send('warning', { event: 'policy_refusal', ...where, rule: policy.rule, detail: policy.detail }, extra);
  if (result.auto_installed)
    await log.send('info', { event: 'install', ...where, installed: result.auto_installed, automatic: true }, extra);
}

/**
 * The run as structured content; as content, each piece once, since models read content: its text rendering
 * (output as a terminal shows it, the error and its traceback, the tool calls, how it ended) with the displays
 * (image or text content) between the text written before and after them, as the program made them, then the JSON
 * of only what that text does not say (the run's id, the error's structured fields, what was displayed). Clients
 * that read structured content get the whole result there.
 */
export function toolResult(result: RunResult & { handle?: string; notice?: string }): CallToolResult {
  const content: CallToolResult['content'] = renderResultPieces(result).map((piece) => {
    if ('text' in piece) return { type: 'text', text: piece.text };
    const { display } = piece;
    if (display.mime.startsWith('image/')) return { type: 'image', data: display.data, mimeType: display.mime };
    // A file's text is labelled with its path, so several shown files stay apart.
    return { type: 'text', text: display.title ? `${display.title}:\n${display.data}` : display.data };
  });
  content.push(jsonText(notInText(result)));
  return { content, structuredContent: structured(result), isError: !result.success };
}

/** The fields of `result` its text rendering (renderResultPieces) does not show, and no display's data. */
export function notInText(result: RunResult): Partial<RunResult> {
  const {
    stdout: _stdout,
    stderr: _stderr,
    outputs: _outputs,
    success: _success,
    duration_ms: _duration,
    backend: _backend,
    session: _session,
    truncated: _truncated,
    session_reset: _reset,
    reset_reason: _reason,
    auto_installed: _installed,
    tool_calls: _calls,
    diagnostics,
    displays,
    ...rest
  } = result;
  const shown =
    diagnostics && (({ message: _m, traceback: _t, hints: _h, auto_install: _a, ...kept }) => kept)(diagnostics);
  return {
    ...rest,
    ...(shown ? { diagnostics: shown as RunResult['diagnostics'] } : {}),
    ...(displays?.length
      ? { displays: displays.map(({ data: _data, ...meta }) => meta) as RunResult['displays'] }
      : {}),
  };
}
