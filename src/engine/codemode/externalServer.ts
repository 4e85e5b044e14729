import type { CallToolResult } from '@modelcontextprotocol/client';
import type { Logger } from '../types';
import type { ServerConfig } from './serverConfig';
import type { ProviderStatus, ToolProvider, ToolSpec } from './toolProvider';
import { PRODUCT_VERSION } from '../../version';
import { errorText } from '../errorText';
import { mcpClientLibrary, type McpClientLibrary } from './mcpClientLibrary';

const CONNECT_TIMEOUT_MS = 30_000;
const CALL_TIMEOUT_MS = 120_000;
/**
 * How long a stdio server may stay silent on the `server/discover` probe before it counts as a 2025 server and
 * is opened with `initialize` on the same process. Servers on the official SDKs answer at once (the 2026
 * revision, or "method not found"); this bounds the wait for one that ignores what it does not know.
 */
const PROBE_TIMEOUT_MS = 3_000;
const STDERR_TAIL_CHARS = 4000;

type Client = InstanceType<McpClientLibrary['Client']>;
type Transport = Parameters<Client['connect']>[0];
/** What a connection found the server to speak: the 2026-07-28 revision (modern) or 2025's (legacy). */
type Era = 'modern' | 'legacy';

/**
 * One external MCP server, connected on first use and kept alive, in whichever protocol revision it speaks
 * (2026-07-28 or 2025's): the first connection asks, later ones reuse the answer. If it dies, the failure is
 * reported with its stderr tail and the next use connects again.
 */
export class ExternalServer implements ToolProvider {
  private client: Promise<Client> | undefined;
  private tools: ToolSpec[] | undefined;
  private state: ProviderStatus['state'] = 'idle';
  private error: string | undefined;
  private stderrTail = '';
  /** The transport of the connection in use: only its closing ends the connection. */
  private transportInUse: Transport | undefined;
  /** The revision the last connection found; a reconnection opens that way without asking again. */
  private era: Era | undefined;

  constructor(
    readonly config: ServerConfig,
    private readonly log: Logger,
  ) {}

  get name(): string {
    return this.config.name;
  }

  get description(): string | undefined {
    return this.config.description;
  }

  status(): ProviderStatus {
    return {
      name: this.name,
      state: this.state,
      error: this.error,
      stderrTail: this.stderrTail || undefined,
      command:
        this.config.transport === 'stdio' ? [this.config.command, ...this.config.args].join(' ') : this.config.url,
      source: this.config.source,
      toolCount: this.tools?.length,
    };
  }

  async listTools(): Promise<ToolSpec[]> {
    if (this.tools) return this.tools;
    const client = await this.connect();
    const listed = await client.listTools();
    this.tools = listed.tools.map((t) => ({
      server: this.name,
      name: t.name,
      description: t.description ?? '',
      inputSchema: t.inputSchema as Record<string, unknown>,
      ...(t.annotations?.readOnlyHint === true ? { readOnly: true } : {}),
    }));
    return this.tools;
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const client = await this.connect();
    try {
      return (await client.callTool({ name, arguments: args }, { timeout: CALL_TIMEOUT_MS })) as CallToolResult;
    } catch (error) {
      // If the server died during the call, say so with its stderr rather than a bare "Connection closed".
      const message = errorText(error);
      throw new Error(this.state === 'failed' && this.error ? `${message}: ${this.error}` : message);
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.tools = undefined;
    this.state = 'closed';
    if (client) await (await client.catch(() => undefined))?.close().catch(() => undefined);
  }

  private connect(): Promise<Client> {
    this.client ??= this.open().catch((error: unknown) => {
      this.client = undefined;
      this.state = 'failed';
      this.error = this.describeFailure(error);
      this.log.warn(`MCP server "${this.name}" failed: ${this.error}`);
      throw new Error(this.error);
    });
    return this.client;
  }

  private async open(): Promise<Client> {
    this.state = 'connecting';
    this.error = undefined;
    const sdk = mcpClientLibrary();
    let client: Client;
    try {
      client = await this.openAs(sdk, this.era);
    } catch (error) {
      // A stdio server that exits on the probe (some SDKs end on any request before `initialize`) did nothing
      // yet: it is a 2025 server, started again once and opened with `initialize`.
      if (this.era !== undefined || this.config.transport !== 'stdio' || !this.exitedOnProbe(error)) throw error;
      this.log.info(`MCP server "${this.name}" ended on the protocol probe: opening it as a 2025 server`);
      client = await this.openAs(sdk, 'legacy');
    }
    this.era = client.getProtocolEra();
    this.state = 'connected';
    this.log.info(
      `MCP server "${this.name}" connected (${this.era === 'modern' ? 'protocol 2026-07-28' : 'protocol 2025'})`,
    );
    return client;
  }

  /** A connection opened as `known` says, or, the first time, in the revision the server turns out to speak. */
  private async openAs(sdk: McpClientLibrary, known: Era | undefined): Promise<Client> {
    const transport = this.transport(sdk);
    const client = new sdk.Client(
      { name: 'code-mode-python', version: PRODUCT_VERSION },
      {
        versionNegotiation: { mode: 'auto', probe: { timeoutMs: PROBE_TIMEOUT_MS } },
        listChanged: { tools: { autoRefresh: false, onChanged: () => (this.tools = undefined) } },
      },
    );
    transport.onclose = () => {
      // A connection given up while opening (a probe the server ended on) has no say over the one in use.
      if (transport !== this.transportInUse) return;
      // A crash or exit: forget the connection so the next use reconnects, and say what happened.
      this.transportInUse = undefined;
      if (this.state === 'connected') {
        this.state = 'failed';
        this.error = `the server closed the connection${this.stderrTail ? `; stderr: ${lastLines(this.stderrTail)}` : ''}`;
        this.log.warn(`MCP server "${this.name}" disconnected`);
      }
      this.client = undefined;
      this.tools = undefined;
    };
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.connect(transport, known === 'legacy' ? { prior: { kind: 'legacy' } } : undefined),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`)),
            CONNECT_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    this.transportInUse = transport;
    return client;
  }

  /** Whether `error` is the connection closing while the first probe was under way. */
  private exitedOnProbe(error: unknown): boolean {
    return (error as { code?: unknown }).code === 'ERA_NEGOTIATION_FAILED';
  }

  private transport(sdk: McpClientLibrary): Transport {
    const config = this.config;
    if (config.transport === 'http') {
      return new sdk.StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    }
    const transport = new sdk.StdioInPlace({
      command: config.command,
      args: config.args,
      env: { ...sdk.getDefaultEnvironment(), ...config.env },
      cwd: config.cwd,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-STDERR_TAIL_CHARS);
    });
    return transport;
  }

  private describeFailure(error: unknown): string {
    const message = errorText(error);
    const where =
      this.config.transport === 'stdio'
        ? `command "${[this.config.command, ...this.config.args].join(' ')}"`
        : this.config.url;
    return `${where}: ${message}${this.stderrTail ? `; stderr: ${lastLines(this.stderrTail)}` : ''}`;
  }
}

function lastLines(text: string, count = 5): string {
  return text.trim().split('\n').slice(-count).join('\n');
}
