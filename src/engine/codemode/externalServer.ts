import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../types';
import type { ServerConfig } from './serverConfig';
import type { ProviderStatus, ToolProvider, ToolSpec } from './toolProvider';
import { PRODUCT_VERSION } from '../../version';
import { errorText } from '../errorText';

const CONNECT_TIMEOUT_MS = 30_000;
const CALL_TIMEOUT_MS = 120_000;
const STDERR_TAIL_CHARS = 4000;

type ClientLibrary = Awaited<ReturnType<typeof clientLibrary>>;
type Client = InstanceType<ClientLibrary['Client']>;

/**
 * The SDK's client side, loaded when code mode first connects to a server: with its schemas it takes tens of
 * milliseconds to load, which a server start should not wait for when no other server is called yet.
 */
async function clientLibrary() {
  const [client, stdio, http, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
}

/**
 * One external MCP server, connected on first use and kept alive. If it dies, the failure is reported
 * with its stderr tail and the next use connects again.
 */
export class ExternalServer implements ToolProvider {
  private client: Promise<Client> | undefined;
  private tools: ToolSpec[] | undefined;
  private state: ProviderStatus['state'] = 'idle';
  private error: string | undefined;
  private stderrTail = '';

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
      return (await client.callTool({ name, arguments: args }, undefined, {
        timeout: CALL_TIMEOUT_MS,
      })) as CallToolResult;
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
    const sdk = await clientLibrary();
    const transport = this.transport(sdk);
    const client = new sdk.Client({ name: 'code-mode-python', version: PRODUCT_VERSION });
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, async () => {
      this.tools = undefined;
    });
    transport.onclose = () => {
      // A crash or exit: forget the connection so the next use reconnects, and say what happened.
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
        client.connect(transport),
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
    this.state = 'connected';
    this.log.info(`MCP server "${this.name}" connected`);
    return client;
  }

  private transport(sdk: ClientLibrary): Transport {
    const config = this.config;
    if (config.transport === 'http') {
      return new sdk.StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    }
    const transport = new sdk.StdioClientTransport({
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
