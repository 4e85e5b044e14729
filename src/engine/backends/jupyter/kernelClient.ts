// The only module that speaks to a Jupyter Server, through the maintained client (@jupyterlab/services): the
// REST API for kernels and kernel specs, the kernel's WebSocket for messages. Bundled on its own
// (dist/jupyter-client.js) and loaded on first use, so the extension and the CLI start without it.
import { KernelAPI, KernelConnection, KernelMessage, type Kernel } from '@jupyterlab/services/lib/kernel';
import { KernelSpecAPI } from '@jupyterlab/services/lib/kernelspec';
import { ServerConnection } from '@jupyterlab/services/lib/serverconnection';
import WebSocket from 'ws';
import { socketFetch } from './socketFetch';
import type {
  ExecuteReply,
  JupyterEndpoint,
  KernelCheck,
  KernelHandle,
  KernelMessages,
  KernelStatus,
  ServerSummary,
} from './kernelTypes';

function serverSettings(endpoint: JupyterEndpoint): ServerConnection.ISettings {
  const base = endpoint.url.endsWith('/') ? endpoint.url : `${endpoint.url}/`;
  const token = endpoint.token ?? '';
  // Node 20 has no global WebSocket. The token goes in the Authorization header, as on REST calls, rather than
  // in the WebSocket URL where proxies log it.
  // A stock Jupyter Server leaves Nagle's algorithm on for the kernel WebSocket: each message it sends while an earlier
  // one is unacknowledged waits for this side's delayed ACK, several times a run. An unsolicited pong (RFC 6455 allows
  // one; the server answers nothing) after every message carries that ACK at once, through a hub's proxy too. A Unix
  // socket has no Nagle delay, and there each pong would only cost the server a wake-up and a frame to read, CPU for
  // nothing on every run.
  const socketPath = endpoint.socketPath;
  class AuthorizedWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(
        socketPath ? socketUrl(url, socketPath) : url,
        protocols,
        token ? { headers: { Authorization: `token ${token}` } } : {},
      );
      if (!socketPath) this.on('message', () => this.readyState === WebSocket.OPEN && this.pong());
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
    kernelSpecs: Object.values(specs.kernelspecs).flatMap((spec) =>
      spec ? [{ name: spec.name, displayName: spec.display_name, language: spec.language }] : [],
    ),
    kernels: kernels.map((k) => ({
      id: k.id,
      name: k.name,
      state: k.execution_state ?? 'unknown',
      lastActivity: k.last_activity,
    })),
  };
}

/**
 * JupyterHub's word for a user server that is not running, or undefined when `response` is not that: the hub
 * answers a GET for it with 424 and a message naming where to start it again (after a redirect to /hub/user/...);
 * an empty string when it redirected to the hub without one.
 */
async function stoppedServerMessage(response: Response): Promise<string | undefined> {
  const atHub = response.redirected && /\/hub\//.test(new URL(response.url).pathname);
  if (response.status !== 424 && !atHub) return undefined;
  const body = await response.text().catch(() => '');
  try {
    const message = (JSON.parse(body) as { message?: unknown }).message;
    return typeof message === 'string' ? message : '';
  } catch {
    return '';
  }
}

/** When the server started (its api/status), to tell a server started again from one that only lost a kernel. */
async function serverStarted(settings: ServerConnection.ISettings): Promise<string | undefined> {
  const response = await ServerConnection.makeRequest(`${settings.baseUrl}api/status`, {}, settings);
  if (!response.ok) return undefined;
  const started = ((await response.json()) as { started?: unknown }).started;
  return typeof started === 'string' ? started : undefined;
}

/** Why the server at `endpoint` cannot serve kernels when a JupyterHub says its user server is not running. */
export async function notRunningReason(endpoint: JupyterEndpoint): Promise<string | undefined> {
  const settings = serverSettings(endpoint);
  const response = await ServerConnection.makeRequest(`${settings.baseUrl}api/status`, {}, settings).catch(
    () => undefined,
  );
  return response && (await stoppedServerMessage(response));
}

class KernelConnectionHandle implements KernelHandle {
  private statusListener?: (status: KernelStatus) => void;

  constructor(
    private readonly connection: Kernel.IKernelConnection,
    private readonly serverStartedAt: string | undefined,
  ) {
    connection.statusChanged.connect((_, status) => this.statusListener?.(status));
    // 'connecting': the WebSocket dropped and the client tries again; 'disconnected': it gave up (7 tries with
    // back-off, about two minutes).
    connection.connectionStatusChanged.connect((_, status) => status !== 'connected' && this.statusListener?.(status));
  }

  get connected(): boolean {
    return this.connection.connectionStatus === 'connected';
  }

  async check(): Promise<KernelCheck> {
    const settings = this.connection.serverSettings;
    let response: Response;
    try {
      response = await ServerConnection.makeRequest(
        `${settings.baseUrl}api/kernels/${encodeURIComponent(this.id)}`,
        {},
        settings,
      );
    } catch (error) {
      return { state: 'unreachable', why: error instanceof Error ? error.message : String(error) };
    }
    const stopped = await stoppedServerMessage(response);
    if (stopped !== undefined) return { state: 'gone', serverStopped: true, ...(stopped ? { detail: stopped } : {}) };
    if (response.ok) return { state: 'alive' };
    if (response.status !== 404) return { state: 'unreachable', why: `${response.status} ${response.statusText}` };
    // The server answers without the kernel: it was started again since, or it shut the kernel down.
    const started = await serverStarted(settings).catch(() => undefined);
    return { state: 'gone', serverStopped: started !== undefined && started !== this.serverStartedAt };
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
    // Silent: the kernel does not echo the cell on IOPub (kernel_support.py triggers IPython's run hooks itself).
    const future = this.connection.requestExecute({ code, silent: true, store_history: false, allow_stdin: true });
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
  const started = await serverStarted(settings).catch(() => undefined);
  const model = await KernelAPI.startNew(kernelName ? { name: kernelName } : {}, settings);
  const connection = new KernelConnection({ model, serverSettings: settings, handleComms: false });
  const handle = new KernelConnectionHandle(connection, started);
  try {
    await connection.info;
  } catch (error) {
    await handle.shutdown().catch(() => undefined);
    throw error;
  }
  return handle;
}
