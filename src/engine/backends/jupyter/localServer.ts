// A Jupyter Server of the person's own, started from an interpreter that has jupyter_server and ipykernel: on a
// Unix domain socket in a private folder (127.0.0.1 and a free port on Windows), with a random token that travels
// in the environment (never argv, which other users of the machine can read), and kernels that run that same
// interpreter.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from '../../types';
import type { JupyterEndpoint } from './kernelTypes';
import { freeLoopbackPort, socketPathIn } from '../../localAddresses';
import { findSystemCommand } from '../../executables';
import { endWithThisProcess, forgetProcess, killGroup } from '../../processGroups';
import { socketFetch } from './socketFetch';

export interface LocalJupyterServer {
  readonly endpoint: JupyterEndpoint;
  readonly python: string;
  /** Resolves, with why, if the server ends without stop() (killed, crashed); never after stop(). */
  readonly lost: Promise<string>;
  /** Shuts the server down (and with it its kernels). */
  stop(): Promise<void>;
}

export interface LocalServerOptions {
  /** The interpreter to run the server and its kernels with. */
  python: string;
  /** The server's root folder (where a notebook UI would look); the current folder when absent. */
  rootDir?: string;
  log: Logger;
  /** How long the server may take to answer its first request. */
  readyTimeoutMs?: number;
  /** Listen on 127.0.0.1 and a free port even where a socket would do: a server other programs reach by its URL. */
  tcp?: boolean;
}

const READY_POLL_MS = 150;
const STOP_GRACE_MS = 5000;
const STDERR_TAIL_CHARS = 3000;

/**
 * Why `python` cannot serve Jupyter, or undefined when it has what it needs. Asynchronous: in VS Code this runs
 * on the extension host's only thread, which a synchronous probe would hold for as long as Python takes to import.
 */
export async function missingJupyterModules(python: string): Promise<string | undefined> {
  const probe = await new Promise<{ error?: Error; status: number | null; stderr: string }>((resolve) => {
    execFile(
      python,
      ['-c', 'import jupyter_server, ipykernel'],
      { encoding: 'utf8', timeout: 30_000, shell: false, windowsHide: true },
      (error, _stdout, stderr) => {
        const status = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ ...(error && status === null ? { error } : {}), status, stderr });
      },
    );
  });
  if (probe.error) return `${python} could not be started: ${probe.error.message}`;
  if (probe.status === 0) return undefined;
  const missing = /No module named '([^']+)'/.exec(probe.stderr)?.[1];
  return missing
    ? `${python} has no ${missing}: install jupyter_server and ipykernel into it (python -m pip install jupyter_server ipykernel), or connect to a running Jupyter Server by its URL`
    : `${python} cannot import jupyter_server and ipykernel: ${probe.stderr.trim().split('\n').pop()}`;
}

/**
 * Tornado leaves Nagle's algorithm on for the kernel WebSocket, so each run's last small message waits for the client's
 * delayed ACK, most of a warm run's time: a server of our own turns it off, as browsers' servers need not. A server
 * whose handler is in neither known place starts as it is. It also reads message dates without dateutil (see
 * _fast_iso_dates).
 */
const SERVER_CONFIG = `
def _without_nagle(handler):
    _open = handler.open
    def open(self, *args, **kwargs):
        self.set_nodelay(True)
        return _open(self, *args, **kwargs)
    handler.open = open

# jupyter_server 2 moved the kernel WebSocket handler; 1.x has it in handlers.
for _module, _name in (("jupyter_server.services.kernels.websocket", "KernelWebsocketHandler"),
                       ("jupyter_server.services.kernels.handlers", "ZMQChannelsHandler")):
    try:
        _without_nagle(getattr(__import__(_module, fromlist=[_name]), _name))
        break
    except (ImportError, AttributeError):
        pass

def _fast_iso_dates(jsonutil):
    # The server reads the dates in every kernel message's headers (twice: for the client and for its activity
    # monitor) with dateutil's general parser, ~45 us each, a third of its CPU per run. Those dates are ISO 8601
    # (jsonutil's own pattern has matched before this is called), which datetime parses alike in a fraction of
    # a microsecond; anything it refuses still goes to dateutil.
    from datetime import datetime
    general = jsonutil._dateutil_parse
    def parse(text, *args, **kwargs):
        if not args and not kwargs:
            try:
                return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
            except ValueError:
                pass
        return general(text, *args, **kwargs)
    jsonutil._dateutil_parse = parse

try:
    import jupyter_client.jsonutil
    if callable(getattr(jupyter_client.jsonutil, "_dateutil_parse", None)):
        _fast_iso_dates(jupyter_client.jsonutil)
except ImportError:
    pass
`;

/**
 * A folder with a kernel spec that runs `python` (first on JUPYTER_PATH, so the server's default kernel is this
 * interpreter) and the server's extra config file.
 */
function serverHome(python: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-jupyter-'));
  fs.writeFileSync(path.join(dir, 'server_config.py'), SERVER_CONFIG);
  const specDir = path.join(dir, 'kernels', 'python3');
  fs.mkdirSync(specDir, { recursive: true });
  const spec = {
    argv: [python, '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
    display_name: `Python (${python})`,
    language: 'python',
    interrupt_mode: 'signal',
  };
  fs.writeFileSync(path.join(specDir, 'kernel.json'), JSON.stringify(spec, null, 2));
  return dir;
}

export async function startLocalJupyterServer(options: LocalServerOptions): Promise<LocalJupyterServer> {
  const missing = await missingJupyterModules(options.python);
  if (missing) throw new Error(missing);
  const token = randomBytes(24).toString('hex');
  const jupyterPath = serverHome(options.python);
  const args = ['-m', 'jupyter_server', `--config=${path.join(jupyterPath, 'server_config.py')}`, '--no-browser'];
  // A socket in a folder only this user can enter: no port for other users to try, none for an editor to forward.
  const socketPath =
    options.tcp || process.platform === 'win32' ? undefined : socketPathIn(jupyterPath, 'jupyter.sock');
  let endpoint: JupyterEndpoint;
  if (socketPath) {
    args.push(`--ServerApp.sock=${socketPath}`, '--ServerApp.sock_mode=0600');
    endpoint = { url: 'http://localhost/', token, socketPath };
  } else {
    const port = await freeLoopbackPort();
    args.push('--ServerApp.ip=127.0.0.1', `--ServerApp.port=${port}`, '--ServerApp.port_retries=0');
    endpoint = { url: `http://127.0.0.1:${port}/`, token };
  }
  if (options.rootDir) args.push(`--ServerApp.root_dir=${options.rootDir}`);
  // Containers often run as root, where the server refuses to start unless told it is meant.
  if (typeof process.getuid === 'function' && process.getuid() === 0) args.push('--allow-root');
  const env = {
    ...process.env,
    JUPYTER_TOKEN: token,
    JUPYTER_PATH: [jupyterPath, process.env.JUPYTER_PATH].filter(Boolean).join(path.delimiter),
  };
  // The kernel ends when its server does; the server ends with this process through the exit hook below, and, where
  // setpriv is found (Linux), also when this process is killed outright and no hook runs.
  const setpriv = process.platform === 'linux' ? findSystemCommand('setpriv') : undefined;
  const [command, commandArgs] = setpriv
    ? [setpriv, ['--pdeathsig', 'TERM', '--', options.python, ...args]]
    : [options.python, args];
  const child = spawn(command, commandArgs, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env,
    cwd: options.rootDir,
    shell: false,
    detached: process.platform !== 'win32',
    windowsHide: true,
  });
  let stderrTail = '';
  child.stderr
    ?.setEncoding('utf8')
    .on('data', (text: string) => (stderrTail = (stderrTail + text).slice(-STDERR_TAIL_CHARS)));
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(`could not start: ${error.message}`));
    child.once('exit', (code, signal) => {
      if (child.pid !== undefined) forgetProcess(child.pid);
      resolve(signal ? `was killed by ${signal}` : `exited with code ${code}`);
    });
  });
  // Its kernels notice their parent is gone and end themselves.
  if (child.pid !== undefined) endWithThisProcess(child.pid);
  // An idle server never holds this process open; the exit hook ends it with the process.
  child.unref();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      // SIGTERM lets the server shut its kernels down; one that hangs is killed.
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.pid !== undefined && killGroup(child.pid), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(jupyterPath, { recursive: true, force: true });
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  let gone: string | undefined;
  void exited.then((why) => (gone = why));
  for (;;) {
    if (gone) {
      await stop();
      throw new Error(
        `the Jupyter Server (${options.python} -m jupyter_server) ${gone}: ${stderrTail.trim().split('\n').slice(-5).join('\n')}`,
      );
    }
    try {
      const response = await (endpoint.socketPath ? socketFetch(endpoint.socketPath) : fetch)(
        `${endpoint.url}api/status`,
        { headers: { Authorization: `token ${token}` } },
      );
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `the Jupyter Server (${options.python} -m jupyter_server) did not answer within ${Math.round((options.readyTimeoutMs ?? 60_000) / 1000)} s`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
  }
  options.log.info(
    `started a Jupyter Server on ${endpoint.socketPath ? `the socket ${endpoint.socketPath}` : endpoint.url} (pid ${child.pid}, ${options.python})`,
  );
  const lost = exited.then((why) => {
    if (stopped) return new Promise<string>(() => undefined);
    // Its socket and kernel spec go with it.
    fs.rmSync(jupyterPath, { recursive: true, force: true });
    return `the local Jupyter Server (pid ${child.pid}) ${why}`;
  });
  return { endpoint, python: options.python, lost, stop };
}
