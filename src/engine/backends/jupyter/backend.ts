// The Jupyter backend: a kernel per session on a Jupyter Server, the configured one or a local one started on
// first use (localServer.ts).
import { errorText } from '../../errorText';
import type { Logger } from '../../types';
import type { BackendFactory } from '../contract';
import type { JupyterEndpoint } from './kernelTypes';
import { startLocalJupyterServer, type LocalJupyterServer } from './localServer';
import { resolvePythonInterpreter } from '../python/interpreter';
import { kernelClient } from './loadClient';
import { JupyterSession } from './session';

export interface JupyterBackendConfig {
  /** The Jupyter Server's URL (a JupyterHub user server, Enterprise Gateway, `jupyter server`). */
  url?: string;
  token?: string;
  /** The kernel spec to start; the server's default when absent. */
  kernelName?: string;
  /** Without a URL: the interpreter a local server is started from on first use (it needs jupyter_server and ipykernel). */
  localPython?: string;
  /** A local server's root folder. */
  localRootDir?: string;
  log?: Logger;
}

/** What `environment` and the explorer show about the server (snake_case, as every MCP result). */
export interface JupyterServerReport extends Record<string, unknown> {
  url: string;
  /** Started by this process from `python`, or configured. */
  local: boolean;
  python?: string;
  kernel_name: string;
  default_kernel?: string;
  kernel_specs?: { name: string; display_name: string }[];
  kernels?: { id: string; name: string; state: string }[];
  error?: string;
}

/** The backend's factory, with the server it talks to; `dispose` stops a server it started. */
export interface JupyterBackend extends BackendFactory {
  readonly kind: 'jupyter';
  describe(): Promise<JupyterServerReport>;
  dispose(): Promise<void>;
}

export function createJupyterBackend(config: JupyterBackendConfig = {}): JupyterBackend {
  const log = config.log;
  const sessions = new Set<JupyterSession>();
  let local: Promise<LocalJupyterServer> | undefined;
  const endpoint = async (sessionLog: Logger): Promise<JupyterEndpoint> => {
    if (config.url) return { url: config.url, token: config.token };
    if (!local) {
      const python = resolvePythonInterpreter(config.localPython);
      const starting = startLocalJupyterServer({ python, rootDir: config.localRootDir, log: log ?? sessionLog });
      local = starting;
      // A server that failed to start is tried again next time (the person may install jupyter_server meanwhile).
      starting.catch(() => local === starting && (local = undefined));
      // One that dies takes its kernels along: their sessions are told, and the next run starts a new server.
      void starting.then((server) =>
        server.lost.then((why) => {
          if (local === starting) local = undefined;
          (log ?? sessionLog).warn(why);
          for (const session of sessions) session.serverLost(why);
        }),
      );
    }
    return (await local).endpoint;
  };
  const kernelName = config.kernelName;
  return {
    kind: 'jupyter',
    create: (options) => {
      const session = new JupyterSession(
        options,
        config.log ?? options.log,
        () => endpoint(options.log),
        kernelName,
        !config.url,
        () => sessions.delete(session),
      );
      sessions.add(session);
      return session;
    },
    async describe(): Promise<JupyterServerReport> {
      const localServer = config.url ? undefined : await local?.catch(() => undefined);
      const where = localServer?.endpoint.socketPath
        ? `unix:${localServer.endpoint.socketPath}`
        : localServer?.endpoint.url;
      const url = config.url ?? where ?? '(a local server, started on first use)';
      const report: JupyterServerReport = {
        url,
        local: !config.url,
        kernel_name: kernelName ?? '(the server default)',
        ...(localServer ? { python: localServer.python } : {}),
      };
      const target = config.url ? { url: config.url, token: config.token } : localServer?.endpoint;
      if (!target) return report;
      try {
        const summary = await kernelClient().describeServer(target);
        report.default_kernel = summary.defaultKernel;
        report.kernel_specs = summary.kernelSpecs.map((spec) => ({ name: spec.name, display_name: spec.displayName }));
        report.kernels = summary.kernels.map((kernel) => ({ id: kernel.id, name: kernel.name, state: kernel.state }));
      } catch (error) {
        report.error = errorText(error);
      }
      return report;
    },
    async dispose() {
      const server = await local?.catch(() => undefined);
      local = undefined;
      await server?.stop();
    },
  };
}
