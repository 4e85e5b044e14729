#!/usr/bin/env node
// Installs the packaged extension (.vsix) into a fresh code-server and uses it the way a person
// would, through the web workbench in headless Debian Chromium (playwright-core): no test
// payload, no extension-development path, no smoke-test driver, so VS Code runs an ordinary
// session with an installed extension. `npm run try:vsix` packages first and runs this.
//
//   --vsix FILE        the package (default code-mode-python.vsix in the repository root)
//   --out DIR          screenshots of each step (default test-output/try-vsix)
//   --readme           also save media/screenshots/sidebar.png and workbench.png
//   --timeout MS       whole run (default 600000)
//   --verbose          server output and the browser console
//   --keep-tmp         keep the temporary folder (profiles, logs, workspace)
//
// What it does, each step checked and printed as "ok"/"FAIL":
//   1. code-server --install-extension <vsix> into a temporary --extensions-dir;
//   2. starts code-server (the flags of run.mjs, minus the smoke-test driver) on a temporary
//      workspace holding one Python file and an mcp_servers.json, opens it in Chromium;
//   3. opens the Code Mode view container from the activity bar and reads the Tool Explorer tree
//      (Backends, Tools, External Servers, Recent Runs; both backends; no "There is no data
//      provider registered" message), and expands the "memory" server to list its tools;
//   4. opens the Python file (Quick Open): the ▶ in the editor title and the status bar item of your
//      runs are there; selects all, runs "Code Mode: Run Selection or Line" from the command palette,
//      waits for the run card in the Results side bar view, checks the editor area was neither split
//      nor pushed up by the Output panel, and finds the output in the "Code Mode: Runs" channel
//      through Code Mode: Show Output;
//   5. more runs a person would make: a typed line with Ctrl+Alt+Enter (an error, in the same
//      session), "Run Selection in the Other Backend" (Pyodide) and the ▶ (Run File); the status
//      bar item's menu; then the Recent Runs section of the tree;
//   6. the person's layout and results: ▶ on a report script while the side bar shows the Explorer
//      keeps the Explorer and the Output panel closed, with a badge on the Code Mode icon and "1 new
//      result" in the status bar; the card shows print, table, print, figure in that order and
//      attaches no data.csv the script only names; the figure enlarges on click and Save writes a
//      PNG; reading an older card, a new run shows the "new result" marker that leads to it.
//   7. your runs on a local Jupyter Server (codeMode.jupyter.url "local", the workspace interpreter
//      /usr/bin/python3 with jupyter_server and ipykernel): the ▶ on a slow file, then on another file
//      while it runs: a queued card "waiting for slow.py" at once, whose Cancel cancels it; the slow run
//      then finishes on the kernel.
//   8. a tool call that writes, from a run of yours with codeMode.tools.approvePersonRuns off: the
//      question (server, tool, arguments, run), Allow once, and the card's list of the run's tool calls.
// Exit code: 0 every check passed; 1 a check failed; 2 harness error or timeout.
//
// The steps are in try-vsix/ (tool-explorer, editor-runs, layout-and-results, jupyter-queue, approval), with
// what they share: the workbench a person uses (workbench.mjs), the workspace's files (workspace.mjs), and the
// checks (checks.mjs). This file is the harness: options, the temporary profiles, code-server and Chromium,
// the deadline, the summary and the exit code.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { clearTimeout } from 'node:timers';
import { parseArgs } from 'node:util';
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
import { checkList } from './try-vsix/checks.mjs';
import { workbenchOf } from './try-vsix/workbench.mjs';
import { memoryServer, writeWorkspace } from './try-vsix/workspace.mjs';
import { toolExplorer } from './try-vsix/tool-explorer.mjs';
import { editorRuns } from './try-vsix/editor-runs.mjs';
import { layoutAndResults } from './try-vsix/layout-and-results.mjs';
import { localJupyterAndQueue } from './try-vsix/jupyter-queue.mjs';
import { approvalQuestion } from './try-vsix/approval.mjs';

const say = timedLog('try-vsix');
const fail = harnessFail('try-vsix');

const { values: opt } = parseArgs({
  options: {
    vsix: { type: 'string' },
    out: { type: 'string' },
    readme: { type: 'boolean' },
    timeout: { type: 'string' },
    verbose: { type: 'boolean' },
    'keep-tmp': { type: 'boolean' },
  },
  strict: true,
});
const vsix = path.resolve(opt.vsix || path.join(repoRoot, 'code-mode-python.vsix'));
const outDir = path.resolve(opt.out || path.join(repoRoot, 'test-output', 'try-vsix'));
const timeoutMs = Number(opt.timeout || 600_000);
const verbose = Boolean(opt.verbose || process.env.VERBOSE === '1');
const keepTmp = Boolean(opt['keep-tmp'] || process.env.KEEP_TMP === '1');

const host = requireHost(fail, 'code-server');
if (!fs.existsSync(vsix)) fail(`no ${vsix}; build it with: npm run package`);
if (!(timeoutMs > 0)) fail(`bad --timeout ${opt.timeout}`);

const playwright = await loadPlaywright(fail);

const { check, results } = checkList(say);

// ---------------------------------------------------------------------------------------------
// Temporary folder: workspace, profiles, extensions, XDG dirs

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-try-vsix-'));
const dirs = {
  workspace: path.join(tmp, 'workspace'),
  userData: path.join(tmp, 'user-data'),
  extensions: path.join(tmp, 'extensions'),
  chromiumProfile: path.join(tmp, 'chromium-profile'),
};
const env = isolatedEnv(tmp);
for (const d of [dirs.workspace, path.join(dirs.userData, 'User')]) fs.mkdirSync(d, { recursive: true });
writeWorkspace(tmp, dirs);

// ---------------------------------------------------------------------------------------------
// Processes

let server; // startCodeServer()'s handle
let context;
const cleanup = cleanupOnce({ tmp, keepTmp, say, parts: () => ({ context, server }) });

/** code-server's own CLI (install/list extensions): same binary, same profile folders. */
function codeServerCli(args) {
  const r = spawnSync(
    host.nodeBin,
    [host.codeServerEntry, '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions, ...args],
    {
      cwd: tmp,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

/** The workbench as a person uses it (try-vsix/workbench.mjs), once Chromium has its page. */
let workbench;

async function main() {
  fs.mkdirSync(outDir, { recursive: true });
  for (const f of fs.readdirSync(outDir)) if (/^\d\d-.*\.png$/.test(f)) fs.rmSync(path.join(outDir, f));

  // 1. Install the package with code-server's CLI.
  say(`installing ${path.relative(process.cwd(), vsix) || vsix} (${(fs.statSync(vsix).size / 1e6).toFixed(2)} MB)`);
  const installed = codeServerCli(['--install-extension', vsix]);
  if (verbose) say(installed.out);
  check(
    'code-server --install-extension installs the .vsix',
    installed.status === 0 && /successfully installed/i.test(installed.out),
    installed.out.split('\n').pop(),
  );
  const listed = codeServerCli(['--list-extensions', '--show-versions']);
  const version = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version;
  check(
    '--list-extensions shows code-mode.code-mode-python',
    listed.out.includes(`code-mode.code-mode-python@${version}`),
    listed.out.replace(/\n/g, ', '),
  );
  const installedDir = fs.readdirSync(dirs.extensions).find((d) => d.startsWith('code-mode.code-mode-python'));
  check(
    'the installed folder has the bundles, Pyodide, the Python driver, the codicon font and the icon',
    installedDir &&
      [
        'dist/extension.js',
        'dist/pyodide/pyodide.asm.wasm',
        'dist/python/driver.py',
        'dist/python/interrupts.py',
        'dist/python/frames.py',
        'dist/python/run_output.py',
        'dist/python/host_calls.py',
        'media/results.css',
        'dist/codicons/codicon.css',
        'dist/codicons/codicon.ttf',
        'media/icon.png',
      ].every((f) => fs.existsSync(path.join(dirs.extensions, installedDir, f))),
    installedDir,
  );

  // 2. code-server and the workbench.
  server = await startCodeServer({
    host,
    cwd: tmp,
    env,
    workspace: dirs.workspace,
    userDataDir: dirs.userData,
    extensionsDir: dirs.extensions,
    verbose,
  });
  const { authority } = server;
  say(`starting code-server on ${authority}`);
  await server.listening;
  context = await launchChromium(playwright, host, dirs.chromiumProfile);
  const page = context.pages()[0] ?? (await context.newPage());
  workbench = workbenchOf({ page, outDir, say, workspace: dirs.workspace });
  const consoleErrors = [];
  page.on('console', (msg) => {
    if (verbose) process.stdout.write(`[browser ${msg.type()}] ${msg.text()}\n`);
    if (msg.type() === 'error' && /code-?mode/i.test(msg.text())) consoleErrors.push(msg.text());
  });
  await page.goto(`http://${authority}/?folder=${encodeURIComponent(dirs.workspace)}`, {
    waitUntil: 'domcontentloaded',
    timeout: 60_000,
  });
  await page.locator('.monaco-workbench .part.activitybar').waitFor({ state: 'visible', timeout: 60_000 });
  say('workbench loaded');

  const walkthrough = {
    ...workbench,
    check,
    say,
    workspace: dirs.workspace,
    userData: dirs.userData,
    readme: opt.readme,
  };
  await toolExplorer(walkthrough);
  await editorRuns(walkthrough);
  await layoutAndResults(walkthrough);
  await localJupyterAndQueue(walkthrough);
  if (fs.existsSync(memoryServer)) await approvalQuestion(walkthrough);

  // Errors the extension host logged for Code Mode: printed, not a check (a bundled dependency's
  // probe of the global `navigator` is reported by VS Code on Node 22+ hosts; esbuild.mjs defines it away).
  const errors = [...new Set(consoleErrors.map((e) => e.replace(/^%c\s*ERR\s+color:\s*\S+\s*/, '').split('\n')[0]))];
  say(
    errors.length
      ? `note: the extension host logged ${errors.length} error(s) naming Code Mode: ${errors.join(' | ')}`
      : 'note: no errors naming Code Mode in the browser console',
  );

  // Screenshots: the whole workbench, and for the README and docs/ (media/screenshots/).
  await page
    .locator('.notifications-toasts .notification-toast')
    .first()
    .waitFor({ state: 'hidden', timeout: 1000 })
    .catch(() => workbench.runFromPalette('Notifications: Clear All Notifications').catch(() => {}));
  await new Promise((r) => setTimeout(r, 500));
  const full = await workbench.screenshot('workbench');
  if (opt.readme) await readmeScreenshots(page, full);
}

/**
 * media/screenshots: workbench.png is the window as the runs left it (the editor with its ▶, the Code
 * Mode side bar with the Results view, the status bar item); sidebar.png the side bar alone.
 */
async function readmeScreenshots(page, fullShot) {
  const target = path.join(repoRoot, 'media', 'screenshots');
  fs.mkdirSync(target, { recursive: true });
  fs.copyFileSync(fullShot, path.join(target, 'workbench.png'));
  await page.mouse.move(1, 899); // no hover highlight, no tooltip
  await page.waitForTimeout(1000);
  await page.locator('.part.sidebar').screenshot({ path: path.join(target, 'sidebar.png') });
  for (const f of ['workbench.png', 'sidebar.png'])
    say(`saved media/screenshots/${f} (${(fs.statSync(path.join(target, f)).size / 1024).toFixed(0)} KB)`);
}

let code;
let timer;
try {
  code = await Promise.race([
    main().then(() => (results.every((r) => r.ok) ? 0 : 1)),
    new Promise((r) => (timer = setTimeout(() => r('timeout'), timeoutMs))),
  ]);
  if (code === 'timeout') {
    say(`timed out after ${timeoutMs} ms`);
    await workbench?.screenshot('timeout');
    code = 2;
  }
} catch (e) {
  process.stderr.write(`[try-vsix] error: ${e?.stack || e}\n`);
  if (workbench) say(`screenshot of the failure: ${await workbench.screenshot('error')}`);
  if (!verbose) process.stdout.write(`[try-vsix] last server output:\n${server?.output().slice(-5000) ?? ''}\n`);
  code = 2;
}
clearTimeout(timer);
await cleanup();
const failed = results.filter((r) => !r.ok);
say(
  `${results.length - failed.length}/${results.length} checks passed${failed.length ? `; failed: ${failed.map((r) => r.name).join('; ')}` : ''}; screenshots in ${path.relative(repoRoot, outDir)}`,
);
process.exit(code);
