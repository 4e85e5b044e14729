import type { HostCallHandler, HostCallRun, Logger, ToolApprovalAnswer, ToolCallRecord } from '../types';
import {
  answerDecision,
  decideApproval,
  defaultApprovalPolicy,
  matchesToolPattern,
  nobodyToAsk,
  type ApprovalPolicy,
  type ApprovalVerdict,
} from './approval';
import { toIdentifier, uniqueIdentifiers } from './pythonNames';
import { shownName, undeclaredArgs } from './questionText';
import { firstSentence, pythonDocstring, pythonParams, pythonSignature, type PythonParam } from './pythonSignature';
import type { ConfigProblem } from './serverConfig';
import type { ProviderStatus, ToolProvider, ToolSpec } from './toolProvider';
import { toolErrorMessage, toolValue } from './toolValue';
import { errorText } from '../errorText';
import { performance } from 'node:perf_hooks';

/** Which servers and tools code may call; empty lists allow everything. Tool patterns: "server.tool" or "server.*". */
export interface BridgePolicy {
  allowServers: string[];
  allowTools: string[];
}

export interface CatalogTool {
  server: string;
  serverIdent: string;
  name: string;
  ident: string;
  signature: string;
  summary: string;
  doc: string;
  params: Pick<PythonParam, 'name' | 'ident' | 'required'>[];
}

export interface CatalogServer {
  name: string;
  ident: string;
  description?: string;
  status: ProviderStatus;
}

export interface Catalog {
  servers: CatalogServer[];
  tools: CatalogTool[];
  /** Config entries that could not be used, each naming its source. */
  problems: ConfigProblem[];
}

/**
 * The code-mode bridge: everything Python's `code_mode.tools` reaches goes through here. It gathers tool
 * providers (external MCP servers, VS Code's tools), applies the allowlist, and answers the host calls the
 * backends forward from Python.
 */
export class ToolBridge {
  private readonly groups = new Map<string, ToolProvider[]>();
  private readonly listeners = new Set<() => void>();
  policy: BridgePolicy = { allowServers: [], allowTools: [] };
  /** Which calls of allowed tools need a person's yes (approval.ts). */
  approval: ApprovalPolicy = defaultApprovalPolicy;
  /** Set by whoever reads the server configs, so tools.search() in Python can say what was skipped. */
  configProblems: ConfigProblem[] = [];

  constructor(private readonly log: Logger) {}

  /** Replaces one group of providers (e.g. "external" on config change); the old ones are closed. */
  async setProviders(group: string, providers: ToolProvider[]): Promise<void> {
    const previous = this.groups.get(group) ?? [];
    this.groups.set(group, providers);
    await Promise.all(previous.filter((p) => !providers.includes(p)).map((p) => p.close().catch(() => undefined)));
    this.changed();
  }

  providers(): ToolProvider[] {
    return [...this.groups.values()].flat();
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  changed(): void {
    for (const listener of this.listeners) listener();
  }

  serverAllowed(server: string): boolean {
    return this.policy.allowServers.length === 0 || this.policy.allowServers.includes(server);
  }

  toolAllowed(server: string, tool: string): boolean {
    if (!this.serverAllowed(server)) return false;
    const patterns = this.policy.allowTools;
    return patterns.length === 0 || matchesToolPattern(patterns, server, tool);
  }

  /** Connects to every allowed provider (in parallel) and lists its tools; a failing one is reported, not fatal. */
  async catalog(serverFilter?: string): Promise<Catalog> {
    const providers = this.providers().filter(
      (p) =>
        this.serverAllowed(p.name) &&
        (!serverFilter || p.name === serverFilter || toIdentifier(p.name) === serverFilter),
    );
    const serverIdents = uniqueIdentifiers(
      providers.map((p) => p.name),
      new Set(['search', 'refresh', 'servers']),
    );
    const listed = await Promise.all(
      providers.map((p) =>
        p.listTools().then(
          (tools) => tools,
          () => [] as ToolSpec[],
        ),
      ),
    );
    this.changed();
    const catalog: Catalog = { servers: [], tools: [], problems: this.configProblems };
    providers.forEach((provider, i) => {
      catalog.servers.push({
        name: provider.name,
        ident: serverIdents[i],
        description: provider.description,
        status: provider.status(),
      });
      const tools = listed[i].filter((t) => this.toolAllowed(provider.name, t.name));
      const idents = uniqueIdentifiers(tools.map((t) => t.name));
      tools.forEach((tool, j) => {
        const params = pythonParams(tool.inputSchema);
        catalog.tools.push({
          server: provider.name,
          serverIdent: serverIdents[i],
          name: tool.name,
          ident: idents[j],
          signature: pythonSignature(idents[j], params),
          summary: firstSentence(tool.description),
          doc: pythonDocstring(tool.description, params, tool.name, idents[j]),
          params: params.map(({ name, ident, required }) => ({ name, ident, required })),
        });
      });
    });
    return catalog;
  }

  /**
   * Calls a tool for the code of `run`, once the approval policy lets it (asking a person when it says so), and adds
   * the call to the run's audit. Returns the tool's value for Python, or why the call was refused (Python raises
   * ToolCallRefused; nothing reached the tool); throws with the tool's own message when the call failed.
   */
  async callFromCode(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    run?: HostCallRun,
  ): Promise<ToolCallReply> {
    const provider = this.allowedProvider(server, tool);
    const decision = await this.approve(provider, tool, args, run);
    if (decision.kind !== 'allow') {
      run?.recordToolCall({ server, tool, ok: false, ms: 0, approval: 'denied' });
      return { refused: `${server}.${tool} was not called: ${decision.reason}` };
    }
    // Every call that reaches a tool is in its run's audit: none after the run's result was made, and each one
    // listed from the moment it is made, so a run that ends while it is under way still lists it.
    if (run?.over) return { refused: `${server}.${tool} was not called: the run that asked for it is over` };
    const call: ToolCallRecord = { server, tool, ok: false, ms: 0, approval: decision.approval };
    run?.recordToolCall(call);
    const started = performance.now();
    try {
      const value = await this.invoke(provider, tool, args);
      call.ok = true;
      return { value };
    } finally {
      call.ms = Math.round(performance.now() - started);
    }
  }

  /** Calls a tool a person invoked themselves (a tool form): their click is the approval. Throws with the tool's message. */
  async call(server: string, tool: string, args: Record<string, unknown>): Promise<unknown> {
    return this.invoke(this.allowedProvider(server, tool), tool, args);
  }

  private allowedProvider(server: string, tool: string): ToolProvider {
    const provider = this.providers().find((p) => p.name === server);
    if (!provider) throw new Error(`no MCP server named "${server}" is configured`);
    if (!this.toolAllowed(server, tool))
      throw new Error(`calling ${server}.${tool} is not allowed by the code-mode allowlist`);
    return provider;
  }

  private async invoke(provider: ToolProvider, tool: string, args: Record<string, unknown>): Promise<unknown> {
    const result = await provider.callTool(tool, args).catch((error: unknown) => {
      throw new Error(`${provider.name}.${tool}: ${errorText(error)}`);
    });
    if (result.isError) throw new Error(`${provider.name}.${tool}: ${toolErrorMessage(result)}`);
    return toolValue(result);
  }

  /** The policy's decision for the call, after asking the person behind the run when it needs a yes. */
  private async approve(
    provider: ToolProvider,
    tool: string,
    args: Record<string, unknown>,
    run: HostCallRun | undefined,
  ): Promise<ApprovalVerdict> {
    const server = provider.name;
    const key = `${server}.${tool}`;
    // The tool's annotations, from the list the provider keeps; a tool it does not list counts as not read-only.
    const spec = (await provider.listTools().catch(() => [] as ToolSpec[])).find((t) => t.name === tool);
    const facts = {
      server,
      tool,
      readOnly: spec?.readOnly === true,
      confirmsItself: provider.confirmsCalls === true,
      origin: run?.origin,
      sessionAllowed: run?.sessionAllowed.has(key) ?? false,
    };
    const undeclared = undeclaredArgs(args, spec?.inputSchema);
    // A closed schema makes the tool reject them anyway: refusing before anyone is asked keeps a question from
    // carrying arguments the tool would never take.
    if (undeclared.length > 0 && spec?.inputSchema.additionalProperties === false)
      return {
        kind: 'refuse',
        reason: `its schema does not declare the argument${undeclared.length === 1 ? '' : 's'} ${undeclared.map((name) => shownName(name)).join(', ')}`,
      };
    const decision = decideApproval(this.approval, facts);
    if (decision.kind !== 'ask') return decision;
    if (!run?.askToolApproval) return { kind: 'refuse', reason: nobodyToAsk(this.approval, server, tool) };
    let answer: ToolApprovalAnswer;
    try {
      answer = await run.askToolApproval({
        server,
        tool,
        args,
        undeclared,
        run: {
          runId: run.runId,
          origin: run.origin,
          session: run.session,
          ...(run.location ? { location: run.location } : {}),
        },
      });
    } catch (error) {
      return { kind: 'refuse', reason: `the question could not be answered (${errorText(error)})` };
    }
    if (answer === 'session') run.sessionAllowed.add(key);
    return answerDecision(answer, server, tool);
  }

  /** The callable tools as Python signatures with one-line docs, for tools.search(). */
  async search(query = '', server?: string): Promise<string> {
    return renderSearch(await this.catalog(server), query);
  }

  /** The engine's host-call handler: what `_code_mode_host.call(method, params)` reaches from Python. */
  hostCallHandler(): HostCallHandler {
    return async (method, params, run) => {
      const p = (params ?? {}) as Record<string, unknown>;
      switch (method) {
        case 'tools.catalog':
          return this.catalog(typeof p.server === 'string' ? p.server : undefined);
        case 'tools.call': {
          // Only a run's code calls tools: a call that belongs to no run would be in no run's audit.
          if (!run) throw new Error('tools can only be called by the code of a run under way');
          if (typeof p.server !== 'string' || typeof p.tool !== 'string')
            throw new Error('tools.call needs "server" and "tool"');
          const args =
            typeof p.args === 'object' && p.args !== null && !Array.isArray(p.args)
              ? (p.args as Record<string, unknown>)
              : {};
          return this.callFromCode(p.server, p.tool, args, run);
        }
        case 'tools.search':
          return this.search(
            typeof p.query === 'string' ? p.query : '',
            typeof p.server === 'string' ? p.server : undefined,
          );
        default:
          this.log.warn(`unknown host call "${method}" from Python`);
          throw new Error(`unknown host call "${method}"`);
      }
    };
  }

  async dispose(): Promise<void> {
    await Promise.all(this.providers().map((p) => p.close().catch(() => undefined)));
    this.groups.clear();
    this.listeners.clear();
  }
}

/** What Python's `tools.call` gets back: the tool's value, or why the call was refused before it was made. */
export type ToolCallReply = { value: unknown } | { refused: string };

/** Tools whose name or docs contain every word of `query`, as `tools.<server>.<signature>` lines with a summary. */
export function renderSearch(catalog: Catalog, query: string): string {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const matches = catalog.tools.filter((t) => {
    const haystack = `${t.server} ${t.name} ${t.ident} ${t.doc}`.toLowerCase();
    return words.every((w) => haystack.includes(w));
  });
  const unavailable = [
    ...catalog.servers
      .filter((s) => s.status.state === 'failed')
      .map((s) => `# ${s.name}: unavailable — ${s.status.error}`),
    ...catalog.problems.map((p) => `# config ${p.source}${p.server ? ` / ${p.server}` : ''}: ${p.message}`),
  ];
  if (matches.length === 0) {
    return [
      ...unavailable,
      catalog.tools.length === 0 ? 'No external tools are configured.' : `No tool matches "${query}".`,
    ].join('\n');
  }
  const lines = ['from code_mode import tools  # then call, e.g.:'];
  for (const t of matches) {
    lines.push(`tools.${t.serverIdent}.${t.signature}`);
    if (t.summary) lines.push(`    ${t.summary}`);
  }
  return [...lines, ...unavailable].join('\n');
}
