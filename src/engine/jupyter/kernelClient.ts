// The only module that speaks to a Jupyter Server, through the maintained client (@jupyterlab/services): the
// REST API for kernels and kernel specs, the kernel's WebSocket for messages. Bundled on its own
// (dist/jupyter-client.js) and loaded on first use, so the extension and the CLI start without it.
import { KernelAPI, KernelConnection, KernelMessage, type Kernel } from '@jupyterlab/services/lib/kernel';
import { KernelSpecAPI } from '@jupyterlab/services/lib/kernelspec';
import { ServerConnection } from '@jupyterlab/services/lib/serverconnection';
import WebSocket from 'ws';
import { socketFetch } from './socketFetch';
import type { ExecuteReply, JupyterEndpoint, KernelHandle, KernelMessages, KernelStatus, ServerSummary } from './kernelTypes';

function serverSettings(endpoint: JupyterEndpoint): ServerConnection.ISettings {
  const base = endpoint.url.endsWith('/') ? endpoint.url : `${endpoint.url}/`;
  const token = endpoint.token ?? '';
  // Node 20 has no global WebSocket. The token goes in the Authorization header, as on REST calls, rather than
  // in the WebSocket URL where proxies log it.
  const socketPath = endpoint.socketPath;
  class AuthorizedWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(socketPath ? socketUrl(url, socketPath) : url, protocols, token ? { headers: { Authorization: `token ${token}` } } : {});
    }
  }
  return ServerConnection.makeSettings({
    baseUrl: base,
    wsUrl: base.replace(/^http/, 'ws'),
    token,
    WebSocket: AuthorizedWebSocket as unknown as typeof globalThis.WebSocket,
    appendToken: false,
    ...(endpoint.socketPath ? { fetch: socketFetch(endpoint.socketPath) } : {}),
  });
}

/**
 * The WebSocket URL of a server on a Unix socket: ws's own `ws+unix:` form, which reaches http.request as its
 * `socketPath`. A `createConnection` option does not survive VS Code's extension host, whose proxy support
 * patches http.request with an agent of its own (only a request with a socketPath passes through unpatched):
 * the socket then went to localhost:80 and the kernel's connection never opened.
 */
function socketUrl(url: string, socketPath: string): string {
  const { pathname, search } = new URL(url);
  return `ws+unix://${socketPath}:${pathname}${search}`;
}

/** What the server says about itself and its kernels; throws when it cannot be reached or refuses the token. */
export async function describeServer(endpoint: JupyterEndpoint): Promise<ServerSummary> {
  const settings = serverSettings(endpoint);
  const [specs, kernels] = await Promise.all([KernelSpecAPI.getSpecs(settings), KernelAPI.listRunning(settings)]);
  return {
    defaultKernel: specs.default,
    kernelSpecs: Object.values(specs.kernelspecs).flatMap((spec) => (spec ? [{ name: spec.name, displayName: spec.display_name, language: spec.language }] : [])),
    kernels: kernels.map((k) => ({ id: k.id, name: k.name, state: k.execution_state ?? 'unknown', lastActivity: k.last_activity })),
  };
}

class KernelConnectionHandle implements KernelHandle {
  private statusListener?: (status: KernelStatus) => void;

  constructor(private readonly connection: Kernel.IKernelConnection) {
    connection.statusChanged.connect((_, status) => this.statusListener?.(status));
    // The client gave up reconnecting (7 tries with back-off, about two minutes): the server is gone for it.
    connection.connectionStatusChanged.connect((_, status) => status === 'disconnected' && this.statusListener?.('disconnected'));
  }

  get id(): string {
    return this.connection.id;
  }

  get name(): string {
    return this.connection.name;
  }

  onStatus(listener: (status: KernelStatus) => void): void {
    this.statusListener = listener;
  }

  async language(): Promise<{ name: string; version?: string }> {
    const info = await this.connection.info;
    return { name: info.language_info.name, version: info.language_info.version };
  }

  async execute(code: string, handlers: KernelMessages): Promise<ExecuteReply> {
    const future = this.connection.requestExecute({ code, silent: false, store_history: false, allow_stdin: true, stop_on_error: true });
    future.onIOPub = (message) => handlers.iopub(message.header.msg_type, message.content as Record<string, unknown>);
    future.onStdin = (message) => {
      if (!KernelMessage.isInputRequestMsg(message)) return;
      handlers.input(message.content.prompt, message.content.password, (value) => {
        // A reply after the run ended (the answer came too late) has nobody to go to.
        if (!future.isDisposed) future.sendInputReply({ status: 'ok', value }, message.header);
      });
    };
    const reply = await future.done;
    return reply.content as ExecuteReply;
  }

  async interrupt(): Promise<void> {
    await this.connection.interrupt();
  }

  async restart(): Promise<void> {
    await this.connection.restart();
  }

  async shutdown(): Promise<void> {
    try {
      await this.connection.shutdown();
    } finally {
      this.connection.dispose();
    }
  }

  dispose(): void {
    this.connection.dispose();
  }
}

/** Starts a kernel of `kernelName` (the server's default when absent) and connects to it. */
export async function startKernel(endpoint: JupyterEndpoint, kernelName: string | undefined): Promise<KernelHandle> {
  const settings = serverSettings(endpoint);
  const model = await KernelAPI.startNew(kernelName ? { name: kernelName } : {}, settings);
  const connection = new KernelConnection({ model, serverSettings: settings, handleComms: false });
  const handle = new KernelConnectionHandle(connection);
  try {
    await connection.info;
  } catch (error) {
    await handle.shutdown().catch(() => undefined);
    throw error;
  }
  return handle;
}
