#!/usr/bin/env node
// The same suite (out/test/vscode/index.js) in desktop VS Code (Electron) through
// @vscode/test-electron, for machines that can download VS Code from
// update.code.visualstudio.com: `npm run test:electron`. Offline it fails within
// CODE_MODE_TEST_DOWNLOAD_TIMEOUT_MS (default 60000) with a message, never hangs.
//   CODE_MODE_VSCODE_EXECUTABLE  use this VS Code binary instead of downloading
//   CODE_MODE_VSCODE_VERSION     version to download (default: stable)
//   CODE_MODE_TEST_WORKSPACE     folder to open (default: a temp copy of the fixture workspace)
//   CODE_MODE_TEST_GREP          only tests whose full title matches
// Linux without DISPLAY: starts Xvfb when it is installed (apt-get install xvfb), else stops.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { clearTimeout } from 'node:timers';
import { repoRoot } from './common.mjs';

const say = (msg) => process.stdout.write(`[electron] ${msg}\n`);
const testsEntry = path.join(repoRoot, 'out', 'test', 'vscode', 'index.js');
const downloadTimeoutMs = Number(process.env.CODE_MODE_TEST_DOWNLOAD_TIMEOUT_MS || 60_000);

function die(msg, code = 2) {
  process.stderr.write(`[electron] ${msg}\n`);
  process.exit(code);
}

if (!fs.existsSync(testsEntry)) die(`no test entry ${testsEntry}; build with: node esbuild.mjs --tests`);
const { downloadAndUnzipVSCode, runTests } = await import('@vscode/test-electron');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-electron-test-'));
let xvfb;
const cleanup = () => {
  if (xvfb && xvfb.exitCode === null) xvfb.kill('SIGTERM');
  fs.rmSync(tmp, { recursive: true, force: true });
};
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(2));

async function vscodeExecutable() {
  if (process.env.CODE_MODE_VSCODE_EXECUTABLE) return process.env.CODE_MODE_VSCODE_EXECUTABLE;
  const version = process.env.CODE_MODE_VSCODE_VERSION || 'stable';
  say(`downloading VS Code ${version} into .vscode-test/ (needs update.code.visualstudio.com)`);
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no VS Code after ${downloadTimeoutMs} ms`)), downloadTimeoutMs);
  });
  try {
    return await Promise.race([
      downloadAndUnzipVSCode({
        version,
        cachePath: path.join(repoRoot, '.vscode-test'),
        timeout: Math.min(downloadTimeoutMs, 30_000),
      }),
      timeout,
    ]);
  } catch (e) {
    die(
      `could not download VS Code: ${e?.message || e}\n` +
        '  @vscode/test-electron needs network access to update.code.visualstudio.com.\n' +
        '  Offline, use `npm run test:vscode` (code-server from npm + Debian Chromium), or set\n' +
        '  CODE_MODE_VSCODE_EXECUTABLE to an installed VS Code binary.',
    );
  } finally {
    clearTimeout(timer);
  }
}

function ensureDisplay(env) {
  if (process.platform !== 'linux' || env.DISPLAY) return;
  const found = spawnSync('sh', ['-c', 'command -v Xvfb'], { encoding: 'utf8' });
  if (found.status !== 0) die('no DISPLAY and no Xvfb: install xvfb (apt-get install -y xvfb) or run under xvfb-run');
  const display = `:${90 + (process.pid % 100)}`;
  xvfb = spawn('Xvfb', [display, '-screen', '0', '1280x1024x24', '-nolisten', 'tcp'], { stdio: 'ignore' });
  env.DISPLAY = display;
  say(`started Xvfb on ${display}`);
}

const executable = await vscodeExecutable();
let workspace = process.env.CODE_MODE_TEST_WORKSPACE && path.resolve(process.env.CODE_MODE_TEST_WORKSPACE);
if (!workspace) {
  workspace = path.join(tmp, 'workspace');
  fs.cpSync(path.join(repoRoot, 'test', 'vscode', 'fixtures', 'workspace'), workspace, { recursive: true });
}
ensureDisplay(process.env); // runTests starts VS Code with process.env plus extensionTestsEnv
try {
  await runTests({
    vscodeExecutablePath: executable,
    extensionDevelopmentPath: repoRoot,
    extensionTestsPath: testsEntry,
    launchArgs: [
      workspace,
      '--disable-extensions',
      '--disable-workspace-trust',
      '--user-data-dir',
      path.join(tmp, 'user-data'),
      '--skip-welcome',
      '--skip-release-notes',
    ],
    extensionTestsEnv: {
      CODE_MODE_TEST: '1',
      CODE_MODE_TEST_WORKSPACE: workspace,
      CODE_MODE_TEST_EXPECT_TRUSTED: '1',
      ...(process.env.CODE_MODE_TEST_GREP ? { CODE_MODE_TEST_GREP: process.env.CODE_MODE_TEST_GREP } : {}),
    },
  });
  say('tests passed');
} catch (e) {
  die(`tests failed: ${e?.message || e}`, 1);
}
