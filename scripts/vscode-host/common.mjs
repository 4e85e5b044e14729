// Shared constants, paths and process helpers for the real-VS-Code test host (code-server +
// Debian Chromium). Used by setup.mjs (installs), run.mjs (runs the suite) and try-vsix.mjs
// (uses the packaged extension).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE_VERSION = '24.21.0';
export const CODE_SERVER_VERSION = '4.139.1';
/** npm package shipping a Node binary + headers; code-server 4.139.x requires Node 24. */
export const NODE_PACKAGE = `node-${process.platform}-${process.arch}`;

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export function hostPaths() {
  const hostDir = path.resolve(process.env.CODE_MODE_TEST_HOST_DIR || path.join(repoRoot, '.vscode-test-host'));
  const nodeDir = path.join(hostDir, 'node24', 'node_modules', NODE_PACKAGE);
  const codeServerDir = path.join(hostDir, 'code-server', 'node_modules', 'code-server');
  return {
    hostDir,
    marker: path.join(hostDir, 'setup-complete.json'),
    nodeDir,
    nodeBinDir: path.join(nodeDir, 'bin'),
    nodeBin: path.join(nodeDir, 'bin', 'node'),
    codeServerDir,
    codeServerEntry: path.join(codeServerDir, 'out', 'node', 'entry.js'),
    chromium: process.env.CHROMIUM || '/usr/bin/chromium',
  };
}

/** The Node 24 setup.mjs installs; without it, says so (as `who`) and exits. */
export function installedNode24(who) {
  const node24 = hostPaths().nodeBin;
  if (!fs.existsSync(node24)) {
    process.stderr.write(`[${who}] no Node 24 at ${node24}: run node scripts/vscode-host/setup.mjs first\n`);
    process.exit(1);
  }
  return node24;
}

/** The marker written by a completed setup, or null. */
export function readMarker(marker) {
  try {
    return JSON.parse(fs.readFileSync(marker, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Environment for child npm / code-server processes: drops the npm_* variables that
 * `npm run` injects (npm_config_user_agent names the outer Node 20 and code-server's
 * postinstall rejects it; npm_config_local_prefix would redirect the install into the
 * repository), keeping registry, cache, proxy and CA settings.
 */
export function cleanEnv(base = process.env) {
  const keep = /^npm_config_(registry|cache|userconfig|globalconfig|cafile|ca|strict_ssl|.*proxy|@.*:registry)$/i;
  const env = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined) continue;
    if (/^npm_/i.test(k) && !keep.test(k)) continue;
    env[k] = v;
  }
  return env;
}

export function log(tag, msg) {
  process.stdout.write(`[${tag}] ${msg}\n`);
}

/** A script's progress line: `[tag +12.3s] msg` on stdout, timed from this call. */
export function timedLog(tag) {
  const t0 = Date.now();
  return (msg) => process.stdout.write(`[${tag} +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);
}

/** A script's harness error: `[tag] msg` on stderr, exit code 2. */
export function harnessFail(tag) {
  return (msg) => {
    process.stderr.write(`[${tag}] ${msg}\n`);
    process.exit(2);
  };
}

/** hostPaths(), after checking (else `fail`) that setup.mjs completed and Chromium is there. */
export function requireHost(fail, what) {
  const host = hostPaths();
  if (!readMarker(host.marker) || !fs.existsSync(host.codeServerEntry) || !fs.existsSync(host.nodeBin)) {
    fail(`no ${what} in ${host.hostDir}; run: node scripts/vscode-host/setup.mjs`);
  }
  if (!fs.existsSync(host.chromium)) fail(`no Chromium at ${host.chromium}; run setup.mjs as root or set CHROMIUM`);
  return host;
}

/** The playwright-core module, or `fail`. */
export async function loadPlaywright(fail) {
  process.env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1'; // playwright-core never downloads; Debian Chromium is used
  try {
    return await import('playwright-core');
  } catch (e) {
    return fail(`playwright-core is not installed (npm ci): ${e.message}`);
  }
}

/** A TCP port that is free on 127.0.0.1 now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Environment for code-server and its CLI, kept inside the temporary folder `tmp`: cleanEnv()
 * plus XDG config/data/cache folders and TMPDIR (created here) under `tmp`.
 */
export function isolatedEnv(tmp) {
  const env = {
    ...cleanEnv(),
    XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'),
    XDG_DATA_HOME: path.join(tmp, 'xdg-data'),
    XDG_CACHE_HOME: path.join(tmp, 'xdg-cache'),
    TMPDIR: path.join(tmp, 'tmp'),
  };
  fs.mkdirSync(env.TMPDIR, { recursive: true });
  return env;
}

/**
 * Starts code-server (setup.mjs's install, on its Node 24) on a free 127.0.0.1 port, in its own
 * process group, opening `workspace`. Workspace trust is off unless `workspaceTrust`;
 * `smokeTestDriver` lets the workbench take a test payload from its URL.
 * Returns { process, authority, listening, output(), kill(signal), stop() }: `listening` settles
 * when the server logs "HTTP server listening" (rejects if it exits first or after 60 s);
 * output() is its recent stdout+stderr (VERBOSE echoes it as it comes).
 */
export async function startCodeServer({
  host,
  cwd,
  env,
  workspace,
  userDataDir,
  extensionsDir,
  workspaceTrust = false,
  smokeTestDriver = false,
  verbose = false,
}) {
  const authority = `127.0.0.1:${await freePort()}`;
  const args = [
    host.codeServerEntry,
    '--auth',
    'none',
    '--bind-addr',
    authority,
    '--disable-telemetry',
    '--disable-update-check',
    ...(workspaceTrust ? [] : ['--disable-workspace-trust']),
    '--disable-getting-started-override',
    // Without this a built VS Code ignores the `payload` URL parameter and nothing runs.
    ...(smokeTestDriver ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
    '--user-data-dir',
    userDataDir,
    '--extensions-dir',
    extensionsDir,
    workspace,
  ];
  const child = spawn(host.nodeBin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  const running = () => child.exitCode === null && child.signalCode === null;
  const kill = (signal) => {
    if (!running()) return;
    try {
      process.kill(-child.pid, signal); // the whole group: code-server, its extension host, their children
    } catch {
      /* already gone */
    }
  };
  // Last resort if the script exits without stopping it (uncaught error): never leave code-server behind.
  process.on('exit', () => kill('SIGKILL'));

  let onListening;
  const ready = new Promise((resolve, reject) => {
    onListening = resolve;
    child.once('error', reject);
    child.once('exit', (code, sig) => reject(new Error(`code-server exited early (${code ?? sig})\n${out}`)));
  });
  ready.catch(() => {});
  const onData = (chunk) => {
    const text = chunk.toString();
    out = (out + text).slice(-200_000);
    if (/HTTP server listening/.test(out)) onListening();
    if (verbose) process.stdout.write(text.replace(/^(?=.)/gm, '[server] '));
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const startupTimeout = new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`code-server not listening after 60 s\n${out}`)), 60_000).unref(),
  );

  return {
    process: child,
    authority,
    listening: Promise.race([ready, startupTimeout]),
    output: () => out,
    kill,
    /** SIGTERM to the group, SIGKILL if it has not exited 5 s later. */
    async stop() {
      if (!running()) return;
      const exited = new Promise((r) => child.once('exit', r));
      kill('SIGTERM');
      const done = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 5000))]);
      if (!done) kill('SIGKILL');
    },
  };
}

/**
 * Chromium's flags here and in the webview tests (test/support/chromium.ts): quiet and offline, no GPU, no
 * sandbox of its own (the container has none to give).
 */
const CHROMIUM_ARGS = JSON.parse(fs.readFileSync(new URL('./chromium-args.json', import.meta.url), 'utf8'));

/** Headless Debian Chromium (`host.chromium`) through playwright-core, with a persistent profile in `profileDir`. */
export function launchChromium(playwright, host, profileDir) {
  return playwright.chromium.launchPersistentContext(profileDir, {
    executablePath: host.chromium,
    headless: true,
    viewport: { width: 1440, height: 900 },
    // Our own signal handlers close the browser and stop code-server; Playwright's would exit first.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    args: CHROMIUM_ARGS,
  });
}

/**
 * The one cleanup of a run, whatever ends it (the end, an error, a signal): closes the browser
 * (10 s at most), stops code-server and removes the temporary folder `tmp` (or says where it is
 * kept). `parts()` gives what has been started by then: { context, server }. SIGINT, SIGTERM and
 * SIGHUP run it and exit 2. Returns cleanup(); cleanup.started() tells whether it has begun.
 */
export function cleanupOnce({ tmp, keepTmp, say, parts }) {
  let cleaning;
  const cleanup = () =>
    (cleaning ??= (async () => {
      const { context, server } = parts();
      if (context) await Promise.race([context.close().catch(() => {}), new Promise((r) => setTimeout(r, 10_000))]);
      await server?.stop();
      if (keepTmp) say(`kept ${tmp}`);
      else fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
    })());
  cleanup.started = () => cleaning !== undefined;
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      say(`${sig}: stopping`);
      cleanup().finally(() => process.exit(2));
    });
  }
  return cleanup;
}
