// What the Jupyter backend needs from a Jupyter Server, in its own words: the backend depends on these types
// only, and the client library stays in kernelClient.ts (a bundle loaded on first use).

/** A Jupyter Server's base URL (http(s)://host:port/prefix/) and its token. */
export interface JupyterEndpoint {
  url: string;
  token?: string;
  /** The Unix domain socket it listens on instead of a port (the URL is then http://localhost/). */
  socketPath?: string;
}

/**
 * A kernel's execution state as the server reports it; 'connecting' when its WebSocket dropped and the client
 * tries again, 'disconnected' when it gave up.
 */
export type KernelStatus =
  | 'unknown'
  | 'starting'
  | 'idle'
  | 'busy'
  | 'terminating'
  | 'restarting'
  | 'autorestarting'
  | 'dead'
  | 'connecting'
  | 'disconnected';

/**
 * What the server says of a kernel asked after: there, gone (with whether its server stopped, and a JupyterHub's
 * message for a user server that is not running), or no answer (the server cannot be reached: it may come back).
 */
export type KernelCheck =
  | { state: 'alive' }
  | { state: 'gone'; serverStopped: boolean; detail?: string }
  | { state: 'unreachable'; why: string };

/** The content of an execute_reply. */
export interface ExecuteReply {
  status: 'ok' | 'error' | 'aborted';
  ename?: string;
  evalue?: string;
  traceback?: string[];
  /** What the cell handed its requester alone (IPython's payloads): kernel_support.py's outcome among them. */
  payload?: unknown[];
}

/** Where the messages of one execution go. */
export interface KernelMessages {
  /** An IOPub message (stream, display_data, execute_result, error, ...) of this execution. */
  iopub(type: string, content: Record<string, unknown>): void;
  /** The kernel asks on its stdin channel; `reply` sends the answer (at most once). */
  input(prompt: string, password: boolean, reply: (value: string) => void): void;
}

/** One kernel on a server, connected. */
export interface KernelHandle {
  readonly id: string;
  readonly name: string;
  /** Its WebSocket is up (messages sent now reach the kernel). */
  readonly connected: boolean;
  /** Asks the server whether it still has this kernel. */
  check(): Promise<KernelCheck>;
  /** The listener is told each status change (one listener; a later one replaces it). */
  onStatus(listener: (status: KernelStatus) => void): void;
  /** The kernel's language_info: its name (python, R, julia) and version. */
  language(): Promise<{ name: string; version?: string }>;
  /** Runs `code`; resolves with the reply once the kernel is idle again (every IOPub message delivered). */
  execute(code: string, handlers: KernelMessages): Promise<ExecuteReply>;
  interrupt(): Promise<void>;
  /** Restarts the kernel process; an execution in flight rejects. */
  restart(): Promise<void>;
  /** Shuts the kernel down on the server and closes the connection. */
  shutdown(): Promise<void>;
  /** Closes the connection, leaving the kernel to the server. */
  dispose(): void;
}

export interface ServerSummary {
  defaultKernel: string;
  kernelSpecs: { name: string; displayName: string; language: string }[];
  kernels: { id: string; name: string; state: string; lastActivity?: string }[];
}

/** What dist/jupyter-client.js exports (src/engine/backends/jupyter/kernelClient.ts). */
export interface KernelClient {
  startKernel(endpoint: JupyterEndpoint, kernelName: string | undefined): Promise<KernelHandle>;
  describeServer(endpoint: JupyterEndpoint): Promise<ServerSummary>;
  /** A JupyterHub's message when its user server at `endpoint` is not running; undefined otherwise. */
  notRunningReason(endpoint: JupyterEndpoint): Promise<string | undefined>;
}
