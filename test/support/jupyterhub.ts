// A real JupyterHub for the jupyter backend's tests: Debian's jupyterhub (3.0) and its configurable-http-proxy,
// installed by scripts/system-deps.mjs, on loopback ports only, with the dummy authenticator, the local process
// spawner and one throw-away Unix user whose single-user server is jupyter_server with ipykernel on
// /usr/bin/python3. Everything lives in a temp folder; stop() ends the hub, its proxy and servers, and removes the
// user. The local process spawner switches to the user's uid, so the hub runs as root (as CI does).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freeLoopbackPort } from '../../src/engine/localAddresses';

export const HUB_USER = 'cmhub-test';
const JUPYTERHUB = '/usr/bin/jupyterhub';
/** A Debian PATH: the root's own (pyenv shims under /root) is no use to the hub's user. */
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const POLL_MS = 200;
/** A guard against a hub that never comes up, not a timing assumption: polls end as soon as the state is reached. */
const GUARD_MS = 120_000;

export interface TestHub {
  /** The user's server as the backend is given it: http://127.0.0.1:PORT/user/cmhub-test/ */
  readonly userUrl: string;
  readonly hubUrl: string;
  /** An API token of the user (what a person copies from the hub's token page). */
  readonly token: string;
  /** The user's home, the single-user server's folder. */
  readonly home: string;
  /** The temp folder everything is in (mode 0711: the user may pass, not list). */
  readonly dir: string;
  readonly uid: number;
  readonly gid: number;
  startServer(): Promise<void>;
  /** Stops the user's server through the hub's API, with the user's own token, as a cull or a person would. */
  stopServer(): Promise<void>;
  stop(): Promise<void>;
}

function whyNoHub(): string | undefined {
  if (process.platform !== 'linux') return 'JupyterHub tests need Linux';
  if (!fs.existsSync(JUPYTERHUB))
    return `${JUPYTERHUB} is missing: run "npm run test:system" (installs Debian's jupyterhub)`;
  if (process.getuid?.() !== 0)
    return "the JupyterHub tests run as root (the local process spawner switches to the hub user's uid)";
  return undefined;
}

function run(command: string, args: string[]): string {
  const done = spawnSync(command, args, { encoding: 'utf8' });
  if (done.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${done.stderr || done.error?.message}`);
  return done.stdout.trim();
}

/** Creates the user with `home`, or points an existing one (left over from a killed run) there. */
function ensureUser(home: string): { uid: number; gid: number } {
  const exists = spawnSync('id', ['-u', HUB_USER]).status === 0;
  if (exists) run('usermod', ['--home', home, HUB_USER]);
  else
    run('useradd', ['--home-dir', home, '--no-create-home', '--shell', '/usr/sbin/nologin', '--user-group', HUB_USER]);
  const uid = Number(run('id', ['-u', HUB_USER]));
  const gid = Number(run('id', ['-g', HUB_USER]));
  fs.mkdirSync(home, { recursive: true });
  fs.chownSync(home, uid, gid);
  return { uid, gid };
}

function hubConfig(options: {
  dir: string;
  publicPort: number;
  hubPort: number;
  proxyPort: number;
  token: string;
}): string {
  const py = (value: string) => JSON.stringify(value);
  return `
c.JupyterHub.bind_url = ${py(`http://127.0.0.1:${options.publicPort}`)}
c.JupyterHub.hub_bind_url = ${py(`http://127.0.0.1:${options.hubPort}`)}
c.ConfigurableHTTPProxy.api_url = ${py(`http://127.0.0.1:${options.proxyPort}`)}
c.ConfigurableHTTPProxy.pid_file = ${py(path.join(options.dir, 'proxy.pid'))}
c.JupyterHub.db_url = ${py(`sqlite:///${path.join(options.dir, 'jupyterhub.sqlite')}`)}
c.JupyterHub.cookie_secret_file = ${py(path.join(options.dir, 'cookie_secret'))}
c.JupyterHub.pid_file = ${py(path.join(options.dir, 'jupyterhub.pid'))}
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = {${py(HUB_USER)}}
c.JupyterHub.api_tokens = {${py(options.token)}: ${py(HUB_USER)}}
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.ip = "127.0.0.1"
c.Spawner.cmd = ["/usr/bin/jupyterhub-singleuser"]
c.Spawner.environment = {"JUPYTERHUB_SINGLEUSER_APP": "jupyter_server.serverapp.ServerApp", "PATH": ${py(SYSTEM_PATH)}}
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.JupyterHub.cleanup_servers = True
`;
}

async function pollUntil<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + GUARD_MS;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`the test hub: ${what} did not happen within ${GUARD_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

export async function startTestHub(): Promise<TestHub> {
  const why = whyNoHub();
  if (why) throw new Error(why);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-hub-'));
  fs.chmodSync(dir, 0o711);
  const home = path.join(dir, 'home');
  const { uid, gid } = ensureUser(home);
  const [publicPort, hubPort, proxyPort] = [
    await freeLoopbackPort(),
    await freeLoopbackPort(),
    await freeLoopbackPort(),
  ];
  const token = randomBytes(24).toString('hex');
  const config = path.join(dir, 'jupyterhub_config.py');
  fs.writeFileSync(config, hubConfig({ dir, publicPort, hubPort, proxyPort, token }));
  const env = {
    PATH: SYSTEM_PATH,
    HOME: dir,
    LANG: 'C.UTF-8',
    NODE_PATH: '/usr/share/nodejs',
    CONFIGPROXY_AUTH_TOKEN: randomBytes(24).toString('hex'),
  };
  const log = fs.openSync(path.join(dir, 'jupyterhub.log'), 'a');
  const hub: ChildProcess = spawn(JUPYTERHUB, [`--config=${config}`], {
    cwd: dir,
    env,
    stdio: ['ignore', log, log],
    detached: true,
  });
  fs.closeSync(log);
  let exited = false;
  hub.once('exit', () => (exited = true));
  const hubUrl = `http://127.0.0.1:${publicPort}/`;
  const userUrl = `${hubUrl}user/${HUB_USER}/`;
  const api = (method: string, route: string) =>
    fetch(`${hubUrl}hub/api/${route}`, { method, headers: { Authorization: `token ${token}` } });
  const logTail = () => fs.readFileSync(path.join(dir, 'jupyterhub.log'), 'utf8').split('\n').slice(-20).join('\n');
  const serverState = async () => {
    const response = await api('GET', `users/${HUB_USER}`);
    if (!response.ok) throw new Error(`${response.status}`);
    const user = (await response.json()) as { servers: Record<string, { ready: boolean; pending: string | null }> };
    return user.servers[''];
  };

  const stop = async (): Promise<void> => {
    if (!exited) {
      hub.kill('SIGTERM');
      // The hub stops the servers it spawned and the proxy it started; a hub that hangs is killed with its group.
      const timer = setTimeout(() => hub.pid !== undefined && !exited && process.kill(-hub.pid, 'SIGKILL'), 30_000);
      await new Promise((resolve) => (exited ? resolve(undefined) : hub.once('exit', resolve)));
      clearTimeout(timer);
    }
    spawnSync('userdel', [HUB_USER]);
    fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    await pollUntil('the hub answering', async () => {
      if (exited) throw new Error(`the hub exited:\n${logTail()}`);
      return (await api('GET', '')).ok || undefined;
    }).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${exited ? '' : logTail()}`);
    });
  } catch (error) {
    await stop();
    throw error;
  }

  const startServer = async () => {
    const response = await api('POST', `users/${HUB_USER}/server`);
    if (response.status !== 201 && response.status !== 202 && response.status !== 400)
      throw new Error(`starting the user's server: ${response.status} ${await response.text()}`);
    await pollUntil("the user's server being ready", async () => ((await serverState())?.ready ? true : undefined));
    await pollUntil("the user's server answering through the proxy", async () =>
      (await fetch(`${userUrl}api/status`, { headers: { Authorization: `token ${token}` } })).ok ? true : undefined,
    );
  };
  const stopServer = async () => {
    const response = await api('DELETE', `users/${HUB_USER}/server`);
    if (response.status !== 202 && response.status !== 204)
      throw new Error(`stopping the user's server: ${response.status} ${await response.text()}`);
    await pollUntil("the user's server stopping", async () => ((await serverState()) === undefined ? true : undefined));
  };
  return { userUrl, hubUrl, token, home, dir, uid, gid, startServer, stopServer, stop };
}
