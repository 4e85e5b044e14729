// The tools of one server and the two methods that serve them, tools/list and tools/call, on the SDK's low-level
// Server. We own the dispatch rather than use the SDK's McpServer because what clients rely on differs from its
// defaults: an unknown tool and a task asked of a tool that cannot be one are protocol errors (-32602, -32601),
// bad arguments of a known tool are a tool result a model can read, the list is what every model provider takes
// and no bigger (toolSchemas.ts: input schemas only; the results' fields are in docs/tools.md, since a model reads
// no output schema and the list is read into its context).
import {
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type InputRequiredResult,
  type Server,
  type ServerContext,
  type Tool,
  type ToolAnnotations,
} from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { errorText } from '../engine/index';
import { issueLines } from './jsonRpcInput';
import type { PausedCalls } from './pausedCalls';
import { isModernRequest } from './requestEnvelope';
import { plainChannel } from './runChannel';
import { declaresTasks, type CreateTaskResult, type TaskExtension } from './taskExtension';
import type { RunChannel } from './shared';
import type { ToolName } from './toolNames';
import { listedSchema } from './toolSchemas';

/** A call of a tool that may run as a task and was asked to (2025-11-25 tasks): answered with the task at once. */
export type TaskCall<Args> = (args: Args, task: TaskRequest, ctx: ServerContext) => Promise<TaskAnswer>;

export interface TaskRequest {
  ttl?: number;
}

/** What a tools/call that made a task answers (CreateTaskResult); `content` is there because the SDK checks the answer as a tool result. */
export interface TaskAnswer {
  task: object;
  content: [];
}

export interface ToolDefinition<Shape extends z.ZodRawShape> {
  description: string;
  input: z.ZodObject<Shape>;
  annotations: ToolAnnotations;
  call(args: z.output<z.ZodObject<Shape>>, channel: RunChannel): Promise<CallToolResult>;
  /** Its calls may ask the person (input(), approvals): a 2026-07-28 client is asked by `input_required` rounds. */
  asksDuringCall?: boolean;
  /** With it the tool may run as a task (`execution.taskSupport: optional`). */
  callAsTask?: TaskCall<z.output<z.ZodObject<Shape>>>;
  /** Listed as the tool's `_meta` (an MCP App's `ui.resourceUri`). */
  _meta?: Tool['_meta'];
}

/** A tool as registered: its annotations follow the settings (tools/index.ts). */
export interface RegisteredTool {
  update(change: { annotations: ToolAnnotations }): void;
}

interface Entry {
  definition: ToolDefinition<z.ZodRawShape>;
  listed?: Tool;
}

export class ToolRegistry {
  private readonly tools = new Map<ToolName, Entry>();
  private list?: Tool[];

  constructor(
    private readonly server: Server,
    private readonly paused: PausedCalls,
    private readonly taskExtension?: TaskExtension,
  ) {
    server.registerCapabilities({ tools: { listChanged: true } });
    server.setRequestHandler('tools/list', () => ({ tools: this.listed() }));
    // A task's answer is no CallToolResult; the SDK checks it as one of 2025's, whose fields are open, and passes it.
    server.setRequestHandler('tools/call', (request, ctx) => this.call(request.params, ctx) as Promise<CallToolResult>);
  }

  register<Shape extends z.ZodRawShape>(name: ToolName, definition: ToolDefinition<Shape>): RegisteredTool {
    const entry: Entry = { definition: definition as unknown as ToolDefinition<z.ZodRawShape> };
    this.tools.set(name, entry);
    this.list = undefined;
    return {
      update: ({ annotations }) => {
        entry.definition = { ...entry.definition, annotations };
        entry.listed = undefined;
        this.list = undefined;
        void this.server.sendToolListChanged().catch(() => undefined);
      },
    };
  }

  /** The tools in the order they were registered, which is the same every time (the 2026 spec asks for a deterministic order). */
  private listed(): Tool[] {
    this.list ??= [...this.tools].map(([name, entry]) => (entry.listed ??= toolOf(name, entry.definition)));
    return this.list;
  }

  private async call(
    params: { name: string; arguments?: Record<string, unknown>; task?: TaskRequest },
    ctx: ServerContext,
  ): Promise<CallToolResult | InputRequiredResult | TaskAnswer | CreateTaskResult> {
    const entry = this.tools.get(params.name as ToolName);
    if (!entry) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
    const { definition } = entry;
    // 2026 has no `task` param: its tasks are the extension's, which the server decides on (SEP-2663).
    const task = isModernRequest(ctx) ? undefined : params.task;
    // The spec (basic/utilities/tasks, "Tool-Level Negotiation") refuses a task of a tool that cannot be one.
    if (task !== undefined && !definition.callAsTask) {
      throw new ProtocolError(
        ProtocolErrorCode.MethodNotFound,
        `${params.name} does not run as a task: call it without "task"`,
      );
    }
    const parsed = definition.input.safeParse(params.arguments ?? {});
    if (!parsed.success) return invalidArguments(params.name, parsed.error);
    // Each way a run can go builds its channel (runChannel.ts) and hands it to `run`.
    const run = (channel: RunChannel) => definition.call(parsed.data, channel);
    try {
      if (task !== undefined) return await definition.callAsTask!(parsed.data, task, ctx);
      // A long run of a client that declared the tasks extension becomes a task it polls.
      if (definition.callAsTask && this.taskExtension && declaresTasks(ctx))
        return await this.taskExtension.serve(this.server, ctx, run);
      if (definition.asksDuringCall && isModernRequest(ctx))
        return await this.paused.serve(this.server, ctx, parsed.data, run);
      return await run(plainChannel(this.server, ctx));
    } catch (error) {
      // A requestState that names no paused question is the client's error, as the SDK answers a forged one.
      if (error instanceof ProtocolError) throw error;
      // As any MCP server answers a tool that throws: a result the model reads.
      return { content: [{ type: 'text', text: errorText(error) }], isError: true };
    }
  }
}

function toolOf(name: string, definition: ToolDefinition<z.ZodRawShape>): Tool {
  return {
    name,
    description: definition.description,
    inputSchema: listedSchema(definition.input) as Tool['inputSchema'],
    annotations: definition.annotations,
    ...(definition.callAsTask ? { execution: { taskSupport: 'optional' } } : {}),
    ...(definition._meta ? { _meta: definition._meta } : {}),
  };
}

/** Bad arguments, as the SDK's McpServer words them: a result the model can read and correct. */
function invalidArguments(tool: string, error: z.ZodError): CallToolResult {
  const issues = issueLines(error.issues);
  return {
    content: [
      { type: 'text', text: `Input validation error: Invalid arguments for tool ${tool}: ${issues.join('; ')}` },
    ],
    isError: true,
  };
}
