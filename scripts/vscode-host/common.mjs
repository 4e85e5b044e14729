// Shared constants and paths for the real-VS-Code test host (code-server + Debian Chromium).
// Used by setup.mjs (installs) and run.mjs (runs the suite).
import * as fs from 'node:fs';
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
