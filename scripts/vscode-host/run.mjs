#!/usr/bin/env node
// Runs the mocha suite (out/test/vscode/index.js) inside a real VS Code: code-server's
// Node extension host with its web workbench driven by headless Debian Chromium
// (playwright-core, no browser download). Needs `node scripts/vscode-host/setup.mjs` first
// and a test build (`node esbuild.mjs --tests`); `npm run test:vscode` does all three.
//
// Options (argument, or environment variable):
//   --workspace DIR    CODE_MODE_TEST_WORKSPACE   folder to open (default: a fresh temporary
//                                                 copy of test/vscode/fixtures/workspace)
//   --env KEY=VALUE    (repeatable)               extra environment for the extension host; the
//                                                 runner's own environment reaches it too.
//                                                 CODE_MODE_TEST=1 is always set.
// code-server (and its extension host) runs on setup's Node placed in the run's temporary folder
// (CODE_MODE_TEST_NODE tells the tests where), as a portable install under /tmp would.
//   --screenshot FILE  CODE_MODE_TEST_SCREENSHOT  save a PNG of the workbench when a test logs the cue
//   --no-trust         CODE_MODE_TEST_NO_TRUST=1  open the workspace untrusted (Restricted Mode)
//   --grep REGEX       CODE_MODE_TEST_GREP        only tests whose full title matches
//   --timeout MS       CODE_MODE_TEST_TIMEOUT_MS  whole run, default 300000
//   --tests FILE       CODE_MODE_TEST_ENTRY       mocha entry, default out/test/vscode/index.js
//   --extension DIR    CODE_MODE_TEST_EXTENSION   extension under development, default the repo root
//   --logs DIR         CODE_MODE_TEST_LOGS_DIR    write the workbench's log files there
//   --verbose          VERBOSE=1                  everything: server output, all browser console
//   --keep-tmp         KEEP_TMP=1                 keep the temporary folder (profiles, logs)
// Exit code: 0 all passed; 1 tests failed, or VS Code refused one of the extension's contributions; 2 timeout or
// harness error.
//
// Workspace trust: code-server decides trust in the browser workbench. With
// --disable-workspace-trust (the default here) the feature is off and every folder is
// trusted. --no-trust leaves the flag out; the workbench then asks the trust question on
// start-up, and with a fresh Chromium profile (no stored trust decision) the folder starts
// untrusted, so vscode.workspace.isTrusted is false and the extension runs in Restricted
// Mode under its `capabilities.untrustedWorkspaces` declaration. See docs/contributing.md,
// "Tests in a real VS Code" for what this does and does not cover.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { clearTimeout } from 'node:timers';
import { format, parseArgs } from 'node:util';
import {
  cleanupOnce,
  harnessFail,
  isolatedEnv,
  launchChromium,
  loadPlaywright,
  repoRoot,
  requireHost,
  startCodeServer,
  timedLog,
} from './common.mjs';

const say = timedLog('runner');
const fail = harnessFail('runner');

const { values: opt } = parseArgs({
  options: {
    workspace: { type: 'string' },
    env: { type: 'string', multiple: true },
    'no-trust': { type: 'boolean' },
    grep: { type: 'string' },
    timeout: { type: 'string' },
    tests: { type: 'string' },
    extension: { type: 'string' },
    logs: { type: 'string' },
    screenshot: { type: 'string' },
    verbose: { type: 'boolean' },
    'keep-tmp': { type: 'boolean' },
  },
  strict: true,
});
const truthy = (v) => v !== undefined && v !== '' && v !== '0' && v !== 'false';
const verbose = opt.verbose || truthy(process.env.VERBOSE);
const noTrust = opt['no-trust'] || truthy(process.env.CODE_MODE_TEST_NO_TRUST);
const keepTmp = opt['keep-tmp'] || truthy(process.env.KEEP_TMP);
const timeoutMs = Number(opt.timeout || process.env.CODE_MODE_TEST_TIMEOUT_MS || 300_000);
const logsDir = opt.logs || process.env.CODE_MODE_TEST_LOGS_DIR;
const SCREENSHOT_CUE = '[code-mode-test] screenshot now';
// A test that waits for a person's answer logs this cue and the text: the runner types it on the keyboard
// into whatever has focus (an input box) and presses Enter, as a person would.
const TYPE_CUE = '[code-mode-test] type: ';
const screenshot =
  opt.screenshot || process.env.CODE_MODE_TEST_SCREENSHOT
    ? path.resolve(opt.screenshot || process.env.CODE_MODE_TEST_SCREENSHOT)
    : undefined;
const grep = opt.grep || process.env.CODE_MODE_TEST_GREP;
const testsEntry = path.resolve(
  opt.tests || process.env.CODE_MODE_TEST_ENTRY || path.join(repoRoot, 'out', 'test', 'vscode', 'index.js'),
);
const extensionDir = path.resolve(opt.extension || process.env.CODE_MODE_TEST_EXTENSION || repoRoot);
// The workbench reports a contribution it refuses (a path outside the extension, a `when` it cannot parse, an unknown
// property) on its console, prefixed with the extension's id; such a run fails, whatever the tests say.
const manifest = JSON.parse(fs.readFileSync(path.join(extensionDir, 'package.json'), 'utf8'));
const CONTRIBUTION_REPORT = `[${manifest.publisher}.${manifest.name}]: `;
const refusedContributions = [];
const extraEnv = {};
for (const kv of opt.env || []) {
  const i = kv.indexOf('=');
  if (i <= 0) fail(`--env expects KEY=VALUE, got ${JSON.stringify(kv)}`);
  extraEnv[kv.slice(0, i)] = kv.slice(i + 1);
}
if (!(timeoutMs > 0)) fail(`bad timeout: ${opt.timeout || process.env.CODE_MODE_TEST_TIMEOUT_MS}`);

const host = requireHost(fail, 'test host');
if (!fs.existsSync(path.join(extensionDir, 'package.json'))) fail(`no extension package.json in ${extensionDir}`);
if (!fs.existsSync(testsEntry)) fail(`no test entry ${testsEntry}; build with: node esbuild.mjs --tests`);

const playwright = await loadPlaywright(fail);

/** `node` at `target`: a hard link where the file system allows one, else a copy. Returns `target`. */
function placeNode(node, target) {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  try {
    fs.linkSync(node, target);
  } catch {
    fs.copyFileSync(node, target);
    fs.chmodSync(target, 0o755);
  }
  return target;
}

/** vscode-remote URI for an absolute path on the code-server machine (segments percent-encoded). */
const remoteUri = (authority, p) =>
  `vscode-remote://${authority}${p.split(path.sep).map(encodeURIComponent).join('/')}`;

// Lines of browser console noise: the workbench without network, auth, marketplace, etc. Under the smoke-test
// driver the workbench confirms every dialog itself (an MCP tool call asks one) and warns each time.
const NOISE =
  /Dialog requested during smoke test|AgentHost|ChatModelSelection|Creating a socket|Resolv(ing|ed) connection|AccountPolicyGate|Service Worker|Updating additional|reconnection-grace|open-vsx|extensionquery|authentication provider 'github'|Failed to load resource|vsda|same-origin|sandbox attribute|An unknown error occurred|vscode-languagedetection|Creation of workbench contribution/;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-vscode-test-'));
let server; // startCodeServer()'s handle
let context; // playwright BrowserContext
const serverOut = () => server?.output() ?? ''; // recent server output, for failure reports
const cleanup = cleanupOnce({ tmp, keepTmp, say, parts: () => ({ context, server }) });

// One deadline for the whole run: start-up, workbench load and the tests.
let settled = false;
let deadline;
const overallTimeout = new Promise((r) => (deadline = setTimeout(() => r('timeout'), timeoutMs)));

async function main() {
  // Workspace: the given folder, or a fresh copy of the fixture workspace.
  let workspace;
  if (opt.workspace || process.env.CODE_MODE_TEST_WORKSPACE) {
    workspace = path.resolve(opt.workspace || process.env.CODE_MODE_TEST_WORKSPACE);
    if (!fs.statSync(workspace, { throwIfNoEntry: false })?.isDirectory())
      throw new Error(`workspace ${workspace} is not a folder`);
  } else {
    workspace = path.join(tmp, 'workspace');
    const fixture = path.join(repoRoot, 'test', 'vscode', 'fixtures', 'workspace');
    if (fs.existsSync(fixture)) fs.cpSync(fixture, workspace, { recursive: true });
    else fs.mkdirSync(workspace);
  }

  // code-server, and so the extension host, run on setup's Node placed in this run's temporary folder, as a
  // portable install under /tmp would be: the Pyodide sandbox must hold wherever the runtime lives (bubblewrap's
  // fresh /tmp once hid such a Node, and Pyodide silently ran without the OS sandbox). test/vscode/suite/sandbox.test.ts
  // checks the extension host runs on it (CODE_MODE_TEST_NODE) and that the sandbox is complete.
  const nodeBin = placeNode(host.nodeBin, path.join(tmp, 'node', 'bin', 'node'));
  const env = {
    ...isolatedEnv(tmp),
    CODE_MODE_TEST: '1',
    CODE_MODE_TEST_NODE: nodeBin,
    CODE_MODE_TEST_WORKSPACE: workspace,
    // The fixture's .vscode/mcp.json starts MCP servers from this checkout's node_modules.
    CODE_MODE_REPO_ROOT: repoRoot,
    CODE_MODE_TEST_EXPECT_TRUSTED: noTrust ? '0' : '1',
    ...(grep ? { CODE_MODE_TEST_GREP: grep } : {}),
    ...extraEnv,
  };
  // A scripted language model standing in for Copilot (which cannot sign in offline), for generate-and-run.
  // Installed as a plain extension folder: code-server loads only one extension under development.
  fs.cpSync(
    path.join(repoRoot, 'test', 'vscode', 'fixtures', 'scripted-model'),
    path.join(tmp, 'extensions', 'code-mode-tests.scripted-model-0.0.1'),
    { recursive: true },
  );
  server = await startCodeServer({
    host: { ...host, nodeBin },
    cwd: tmp,
    env,
    workspace,
    userDataDir: path.join(tmp, 'user-data'),
    extensionsDir: path.join(tmp, 'extensions'),
    workspaceTrust: noTrust,
    smokeTestDriver: true,
    verbose,
  });
  const { authority } = server;
  say(`starting code-server on ${authority} (workspace ${workspace}${noTrust ? ', untrusted' : ''})`);
  await server.listening;
  say('code-server is listening');

  context = await launchChromium(playwright, host, path.join(tmp, 'chromium-profile'));
  if (cleanup.started()) await context.close(); // timed out while Chromium was starting
  const page = context.pages()[0] ?? (await context.newPage());
  let lastBlank = false;
  let consoleQueue = Promise.resolve();
  // The extension host's stdout (mocha's reporter) and console.* reach the workbench, whose
  // browser console is forwarded here, so that is where test output is read from.
  // Console messages are resolved one after another so that lines print in order, and
  // the runner waits for this queue before it reports the result.
  // A test that has arranged the workbench logs SCREENSHOT_CUE and waits: by the time the tests exit, the
  // extension host has shut down and its views are empty.
  const takeScreenshot = async () => {
    fs.mkdirSync(path.dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot }).catch((e) => say(`screenshot failed: ${e.message}`));
    say(`screenshot saved to ${screenshot}`);
  };
  const printConsole = async (msg) => {
    let parts;
    try {
      parts = await Promise.all(msg.args().map((a) => a.jsonValue()));
    } catch {
      parts = [msg.text()];
    }
    // The workbench logs extension-host console.* as ('%c INFO', 'color: ...', fmt, ...args).
    if (typeof parts[0] === 'string' && parts[0].startsWith('%c')) {
      parts[0] = parts[0].slice(2).trim();
      parts.splice(1, 1);
    }
    const text = format(...parts);
    if (text.startsWith(CONTRIBUTION_REPORT)) refusedContributions.push(text);
    if (screenshot && text.includes(SCREENSHOT_CUE)) await takeScreenshot();
    const typed = text.indexOf(TYPE_CUE);
    if (typed >= 0) {
      await page.keyboard.type(text.slice(typed + TYPE_CUE.length));
      await page.keyboard.press('Enter');
    }
    if (verbose || (['log', 'info', 'error', 'warning'].includes(msg.type()) && !NOISE.test(text))) {
      const line = text.replace(/^(INFO|ERR|WARN) ?/, '');
      if (!line.trim() && lastBlank && !verbose) return; // collapse runs of blank lines
      lastBlank = !line.trim();
      process.stdout.write(`[vscode] ${line}\n`);
    }
  };
  page.on('console', (msg) => {
    consoleQueue = consoleQueue.then(() => printConsole(msg)).catch(() => {});
  });
  page.on('pageerror', (e) => verbose && process.stdout.write(`[browser pageerror] ${e.message}\n`));

  let resolveExit;
  const exited = new Promise((r) => (resolveExit = r));
  await page.exposeFunction('codeAutomationExit', async (code, logs) => {
    if (logsDir && Array.isArray(logs)) {
      for (const l of logs) {
        const file = path.resolve(logsDir, l.relativePath);
        if (!file.startsWith(path.resolve(logsDir) + path.sep)) continue;
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, l.contents);
      }
    }
    resolveExit(code);
  });

  const payload = [
    ['extensionDevelopmentPath', remoteUri(authority, extensionDir)],
    ['extensionTestsPath', remoteUri(authority, testsEntry)],
  ];
  const url = `http://${authority}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  say(`opening the workbench in ${host.chromium}`);
  await page.goto(url, { waitUntil: 'commit', timeout: 0 }); // the overall timeout applies

  const serverDied = new Promise((r) =>
    server.process.once('exit', (code, sig) => r(`code-server exited (${code ?? sig})`)),
  );
  const result = await Promise.race([exited, serverDied]);
  if (settled) return 2; // the overall timeout already reported
  await Promise.race([consoleQueue, new Promise((r) => setTimeout(r, 5000))]); // print what the tests logged first
  if (refusedContributions.length > 0) {
    say(`VS Code refused the extension's contributions:\n${[...new Set(refusedContributions)].join('\n')}`);
    return 1;
  }
  if (result === 0) {
    say('tests passed');
    return 0;
  }
  if (typeof result === 'number') say(`tests failed: exit code ${result}`);
  else say(String(result));
  if (typeof result !== 'number' && !verbose)
    process.stdout.write(`[runner] last server output:\n${serverOut().slice(-20_000)}\n`);
  else if (!verbose) say('VERBOSE=1 shows the server output and the whole browser console');
  return typeof result === 'number' ? 1 : 2;
}

let code;
try {
  code = await Promise.race([
    main(),
    overallTimeout.then(() => {
      settled = true;
      say(`timed out after ${timeoutMs} ms`);
      if (!verbose) process.stdout.write(`[runner] last server output:\n${serverOut().slice(-20_000)}\n`);
      return 2;
    }),
  ]);
} catch (e) {
  if (!cleanup.started()) process.stderr.write(`[runner] error: ${e?.stack || e}\n`); // else interrupted: closing made it throw
  code = 2;
}
clearTimeout(deadline);
await cleanup();
say(`exit ${code}`);
process.exit(code);
