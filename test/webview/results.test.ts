// The results webview in real headless Chromium: the exact document renderResultsHtml produces, served from a
// local origin standing in for webview.cspSource, driven with window.postMessage as VS Code does.
// Run after `node esbuild.mjs` (it builds dist/webview.js).
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createEngine } from '../../src/engine/index';
import type { RunEvent, RunResult } from '../../src/engine/types';
import { testStorageDir } from '../support/mcp';
import { checkPng, PYTHON_PNG_ENCODER } from '../support/pythonPng';
import { makeNonce, renderResultsHtml } from '../../src/vscode/views/resultsHtml';
import {
  messageForRunEvent,
  parsePageMessage,
  type HostToPageMessage,
  type PageToHostMessage,
  type RunCard,
  type RunInfo,
} from '../../src/webview/protocol';
import { crc32 } from '../support/crc32';

const root = path.resolve(__dirname, '../..');
const outDir = path.join(root, 'test-output');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// ---- VS Code's theme variables, as a webview receives them (Dark Modern and Light Modern) -------------

const COMMON_VARS = {
  '--vscode-font-family': 'system-ui, "Ubuntu", "Droid Sans", sans-serif',
  '--vscode-font-size': '13px',
  '--vscode-font-weight': 'normal',
  '--vscode-editor-font-family': '"Droid Sans Mono", "DejaVu Sans Mono", monospace',
  '--vscode-editor-font-size': '13px',
};
const DARK_VARS = {
  ...COMMON_VARS,
  '--vscode-editor-background': '#1f1f1f',
  '--vscode-editor-foreground': '#cccccc',
  '--vscode-foreground': '#cccccc',
  '--vscode-descriptionForeground': '#9d9d9d',
  '--vscode-errorForeground': '#f85149',
  '--vscode-editorWarning-foreground': '#cca700',
  '--vscode-textCodeBlock-background': '#2b2b2b',
  '--vscode-textPreformat-foreground': '#d0d0d0',
  '--vscode-textLink-foreground': '#4daafc',
  '--vscode-badge-background': '#616161',
  '--vscode-badge-foreground': '#f8f8f8',
  '--vscode-button-background': '#0078d4',
  '--vscode-button-foreground': '#ffffff',
  '--vscode-button-hoverBackground': '#026ec1',
  '--vscode-button-border': '#ffffff12',
  '--vscode-button-secondaryBackground': '#313131',
  '--vscode-button-secondaryForeground': '#cccccc',
  '--vscode-button-secondaryHoverBackground': '#3c3c3c',
  '--vscode-panel-border': '#2b2b2b',
  '--vscode-widget-border': '#313131',
  '--vscode-editorWidget-background': '#202020',
  '--vscode-input-background': '#313131',
  '--vscode-input-foreground': '#cccccc',
  '--vscode-input-border': '#3c3c3c',
  '--vscode-input-placeholderForeground': '#989898',
  '--vscode-inputValidation-errorBorder': '#be1100',
  '--vscode-dropdown-background': '#313131',
  '--vscode-dropdown-foreground': '#cccccc',
  '--vscode-dropdown-border': '#3c3c3c',
  '--vscode-focusBorder': '#0078d4',
  '--vscode-progressBar-background': '#0078d4',
  '--vscode-testing-iconPassed': '#73c991',
  '--vscode-list-hoverBackground': '#2a2d2e',
  '--vscode-toolbar-hoverBackground': '#5a5d5e50',
  '--vscode-icon-foreground': '#cccccc',
};
const LIGHT_VARS = {
  ...COMMON_VARS,
  '--vscode-editor-background': '#ffffff',
  '--vscode-editor-foreground': '#3b3b3b',
  '--vscode-foreground': '#3b3b3b',
  '--vscode-descriptionForeground': '#717171',
  '--vscode-errorForeground': '#e51400',
  '--vscode-editorWarning-foreground': '#bf8803',
  '--vscode-textCodeBlock-background': '#f2f2f2',
  '--vscode-textPreformat-foreground': '#3b3b3b',
  '--vscode-textLink-foreground': '#005fb8',
  '--vscode-badge-background': '#cccccc',
  '--vscode-badge-foreground': '#3b3b3b',
  '--vscode-button-background': '#005fb8',
  '--vscode-button-foreground': '#ffffff',
  '--vscode-button-hoverBackground': '#0258a8',
  '--vscode-button-border': '#0000001a',
  '--vscode-button-secondaryBackground': '#e5e5e5',
  '--vscode-button-secondaryForeground': '#3b3b3b',
  '--vscode-button-secondaryHoverBackground': '#cccccc',
  '--vscode-panel-border': '#e5e5e5',
  '--vscode-widget-border': '#e5e5e5',
  '--vscode-editorWidget-background': '#f8f8f8',
  '--vscode-input-background': '#ffffff',
  '--vscode-input-foreground': '#3b3b3b',
  '--vscode-input-border': '#cecece',
  '--vscode-input-placeholderForeground': '#767676',
  '--vscode-inputValidation-errorBorder': '#be1100',
  '--vscode-dropdown-background': '#ffffff',
  '--vscode-dropdown-foreground': '#3b3b3b',
  '--vscode-dropdown-border': '#cecece',
  '--vscode-focusBorder': '#005fb8',
  '--vscode-progressBar-background': '#005fb8',
  '--vscode-testing-iconPassed': '#388a34',
  '--vscode-list-hoverBackground': '#f2f2f2',
  '--vscode-toolbar-hoverBackground': '#b8b8b850',
  '--vscode-icon-foreground': '#3b3b3b',
};
type Theme = 'dark' | 'light';
const THEMES: Record<Theme, Record<string, string>> = { dark: DARK_VARS, light: LIGHT_VARS };

// ---- a small valid PNG, built by hand so the test needs no image library --------------------------

function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** An RGB gradient, `size` pixels square. */
function gradientPng(size: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit depth, truecolour, deflate, adaptive filtering, no interlace
  const raw = Buffer.alloc(size * (1 + size * 3));
  for (let y = 0; y < size; y++) {
    const row = y * (1 + size * 3);
    raw[row] = 0; // filter: none
    for (let x = 0; x < size; x++) {
      const at = row + 1 + x * 3;
      raw[at] = Math.round((x / (size - 1)) * 255);
      raw[at + 1] = Math.round((y / (size - 1)) * 200);
      raw[at + 2] = 160;
    }
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    pngChunk('IHDR', header),
    pngChunk('IDAT', zlib.deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

// ---- fixtures ------------------------------------------------------------------------------------------

/** Runs start a few seconds apart, ending about now, so the clock column reads like a real session. */
let startedAt = Date.now() - 15 * 60_000;

function runInfo(runId: string, code = 'print("hello")', extra: Partial<RunInfo> = {}): RunInfo {
  startedAt += 7_000;
  return { runId, session: 'default', backend: 'pyodide', code, origin: 'command', startedAt, ...extra };
}

function result(runId: string, extra: Partial<RunResult> = {}): RunResult {
  return {
    success: true,
    stdout: '',
    stderr: '',
    duration_ms: 42,
    diagnostics: null,
    backend: 'pyodide',
    session: 'default',
    run_id: runId,
    ...extra,
  };
}

const DATAFRAME_HTML = `<div>
<style scoped>.dataframe tbody tr th { vertical-align: top; }</style>
<table border="1" class="dataframe">
  <thead><tr style="text-align: right;"><th></th><th>city</th><th>temp_c</th><th>rain_mm</th><th>wind_kmh</th></tr></thead>
  <tbody>
    <tr><th>0</th><td>Lisbon</td><td>21.4</td><td>0.2</td><td>14</td></tr>
    <tr><th>1</th><td>Oslo</td><td>9.8</td><td>3.1</td><td>22</td></tr>
    <tr><th>2</th><td>Nairobi</td><td>24.0</td><td>1.7</td><td>11</td></tr>
    <tr><th>3</th><td>Osaka</td><td>17.3</td><td>5.4</td><td>9</td></tr>
  </tbody>
</table>
<script>document.body.dataset.scriptRan = 'yes';</script>
</div>`;

/** A small line chart, the way matplotlib's SVG backend would hand one over (raw markup, not base64). */
const CHART_SVG = (() => {
  const xs = Array.from({ length: 40 }, (_, i) => i);
  const line = (f: (x: number) => number) => xs.map((x) => `${40 + x * 13},${150 - f(x) * 90}`).join(' ');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="580" height="190" viewBox="0 0 580 190" font-family="sans-serif" font-size="11">
<rect width="580" height="190" fill="#ffffff"/>
<g stroke="#e6e6e6">${[40, 70, 100, 130].map((y) => `<line x1="40" x2="560" y1="${y}" y2="${y}"/>`).join('')}</g>
<line x1="40" x2="560" y1="150" y2="150" stroke="#333"/><line x1="40" x2="40" y1="20" y2="150" stroke="#333"/>
<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="${line((x) => 0.5 + 0.45 * Math.sin(x / 4))}"/>
<polyline fill="none" stroke="#ff7f0e" stroke-width="2" points="${line((x) => 0.5 + 0.4 * Math.cos(x / 5) * Math.exp(-x / 60))}"/>
<text x="300" y="14" text-anchor="middle" font-size="12">Daily temperature anomaly</text>
<text x="300" y="175" text-anchor="middle" fill="#333">day</text>
<script>alert(1)</script>
</svg>`;
})();

// ---- the page harness ------------------------------------------------------------------------------------

let server: http.Server;
let origin = '';
let browser: Browser;
const contexts: BrowserContext[] = [];

/** The variables VS Code sets on the page, and the background the workbench paints behind it. */
function themeCss(theme: Theme): string {
  const vars = Object.entries(THEMES[theme]).map(([name, value]) => `  ${name}: ${value};`);
  return `:root {\n${vars.join('\n')}\n  background: var(--vscode-editor-background);\n}\n`;
}

/** The document VS Code would show, plus the theme variables and body class VS Code adds around it. */
function pageHtml(theme: Theme): string {
  const html = renderResultsHtml({
    cspSource: origin,
    nonce: makeNonce(),
    scriptUri: `${origin}/dist/webview.js`,
    styleUri: `${origin}/media/results.css`,
    codiconsUri: `${origin}/dist/codicons/codicon.css`,
    title: 'Python Results',
  });
  return html
    .replace(
      '<link rel="stylesheet"',
      `<link rel="stylesheet" href="${origin}/theme-${theme}.css">\n<link rel="stylesheet"`,
    )
    .replace('<body>', `<body class="vscode-${theme}">`);
}

function serve(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', origin);
  const send = (type: string, body: string | Buffer): void => {
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
  };
  if (url.pathname === '/')
    return send('text/html; charset=utf-8', pageHtml(url.searchParams.get('theme') === 'light' ? 'light' : 'dark'));
  if (url.pathname === '/dist/webview.js')
    return send('text/javascript', fs.readFileSync(path.join(root, 'dist/webview.js')));
  if (url.pathname === '/media/results.css')
    return send('text/css', fs.readFileSync(path.join(root, 'media/results.css')));
  if (url.pathname === '/dist/codicons/codicon.css')
    return send('text/css', fs.readFileSync(path.join(root, 'dist/codicons/codicon.css')));
  if (url.pathname === '/dist/codicons/codicon.ttf')
    return send('font/ttf', fs.readFileSync(path.join(root, 'dist/codicons/codicon.ttf')));
  if (url.pathname === '/theme-dark.css') return send('text/css', themeCss('dark'));
  if (url.pathname === '/theme-light.css') return send('text/css', themeCss('light'));
  res.writeHead(404).end();
}

/** Stands in for VS Code's webview API: records what the page posts and keeps its state across reloads. */
const FAKE_VSCODE_API = `
  window.__sent = [];
  window.__violations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__violations.push({ directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample });
  });
  window.acquireVsCodeApi = () => ({
    postMessage: (message) => window.__sent.push(JSON.parse(JSON.stringify(message))),
    getState: () => {
      const saved = sessionStorage.getItem('vscode-state');
      return saved ? JSON.parse(saved) : undefined;
    },
    setState: (state) => sessionStorage.setItem('vscode-state', JSON.stringify(state)),
  });
`;

interface Harness {
  page: Page;
  errors: Error[];
}

async function openPage(theme: Theme = 'dark', width = 820): Promise<Harness> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, deviceScaleFactor: 1 });
  contexts.push(context);
  const page = await context.newPage();
  const errors: Error[] = [];
  page.on('pageerror', (error) => errors.push(error));
  await page.addInitScript({ content: FAKE_VSCODE_API });
  await page.goto(`${origin}/?theme=${theme}`);
  await page.waitForFunction(() =>
    (window as unknown as { __sent: { type: string }[] }).__sent.some((m) => m.type === 'ready'),
  );
  return { page, errors };
}

async function post(page: Page, ...messages: HostToPageMessage[]): Promise<void> {
  await page.evaluate((list) => {
    for (const message of list) window.postMessage(message, '*');
  }, messages);
}

async function sent(page: Page): Promise<PageToHostMessage[]> {
  return page.evaluate(() => (window as unknown as { __sent: PageToHostMessage[] }).__sent);
}

/** Waits until `selector`'s text contains `text` (output is written on the next animation frame). */
async function waitForText(page: Page, selector: string, text: string): Promise<void> {
  await page.waitForFunction(
    ([s, t]) => (document.querySelector(s)?.textContent ?? '').includes(t),
    [selector, text] as const,
    { timeout: 5000 },
  );
}

function card(runId: string): string {
  return `.run-card[data-run-id="${runId}"]`;
}

before(async () => {
  assert.ok(
    fs.existsSync(path.join(root, 'dist/webview.js')),
    'dist/webview.js is missing: run `node esbuild.mjs` first',
  );
  fs.mkdirSync(outDir, { recursive: true });
  server = http.createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

after(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

// ---- pure parts -----------------------------------------------------------------------------------------

describe('protocol and document', () => {
  test('parsePageMessage accepts the page messages, copies only known fields and rejects the rest', () => {
    assert.deepEqual(parsePageMessage({ type: 'ready', extra: 1 }), { type: 'ready' });
    assert.deepEqual(parsePageMessage({ type: 'rerun', runId: 'r1', code: 'import os' }), {
      type: 'rerun',
      runId: 'r1',
    });
    assert.deepEqual(parsePageMessage({ type: 'interrupt', runId: 'r1' }), { type: 'interrupt', runId: 'r1' });
    assert.deepEqual(parsePageMessage({ type: 'openLocation', file: '/work/a.py', line: 3, extra: 1 }), {
      type: 'openLocation',
      file: '/work/a.py',
      line: 3,
    });
    assert.deepEqual(parsePageMessage({ type: 'invokeTool', requestId: 'q', server: 's', name: 'n', args: { a: 1 } }), {
      type: 'invokeTool',
      requestId: 'q',
      server: 's',
      name: 'n',
      args: { a: 1 },
    });
    assert.deepEqual(parsePageMessage({ type: 'invokeTool', requestId: 'q', name: 'n', args: {} }), {
      type: 'invokeTool',
      requestId: 'q',
      name: 'n',
      args: {},
    });
    for (const bad of [
      null,
      'ready',
      [],
      { type: 'runStarted' },
      { type: 'rerun' },
      { type: 'rerun', runId: 7 },
      { type: 'rerun', runId: '' },
      { type: 'rerun', runId: 'x'.repeat(300) },
      { type: 'openLocation', file: 'relative/path.py', line: 2 },
      { type: 'openLocation', file: '/abs/path.py', line: 0 },
      { type: 'openLocation', file: '/abs/path.py', line: 1.5 },
      { type: 'invokeTool', requestId: 'q', name: 'n', args: [] },
      { type: 'invokeTool', requestId: 'q', name: 'n', args: null },
      { type: 'invokeTool', requestId: 'q', name: 'n', server: 3, args: {} },
      { type: 'invokeTool', name: 'n', args: {} },
      Object.assign(Object.create({ inherited: true }), { type: 'ready' }),
    ]) {
      assert.equal(parsePageMessage(bad), undefined, JSON.stringify(bad));
    }
  });

  test('messageForRunEvent maps every engine run event to its page message', () => {
    const info = runInfo('e1');
    assert.deepEqual(messageForRunEvent({ type: 'started', ...info }), { type: 'runStarted', run: info });
    assert.deepEqual(messageForRunEvent({ type: 'stderr', runId: 'e1', text: 'warn' }), {
      type: 'runOutput',
      runId: 'e1',
      stream: 'stderr',
      text: 'warn',
    });
    const display = { mime: 'text/plain', data: 'x' };
    assert.deepEqual(messageForRunEvent({ type: 'display', runId: 'e1', display }), {
      type: 'runDisplay',
      runId: 'e1',
      display,
    });
    const done = result('e1');
    assert.deepEqual(messageForRunEvent({ type: 'finished', runId: 'e1', result: done }), {
      type: 'runFinished',
      runId: 'e1',
      result: done,
    });
  });

  test('renderResultsHtml writes a strict CSP, a nonced script and escaped values', () => {
    const nonce = makeNonce();
    assert.match(nonce, /^[A-Za-z0-9+/]{32}$/);
    assert.notEqual(nonce, makeNonce());
    const html = renderResultsHtml({
      cspSource: 'https://x.vscode-cdn.net',
      nonce,
      scriptUri: 'https://x/webview.js',
      styleUri: 'https://x/results.css',
      codiconsUri: 'https://x/codicons/codicon.css',
      title: '<Runs & "more">',
    });
    const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)?.[1].replace(/&#39;/g, "'");
    assert.equal(
      csp,
      `default-src 'none'; img-src https://x.vscode-cdn.net data:; font-src https://x.vscode-cdn.net; style-src https://x.vscode-cdn.net 'nonce-${nonce}'; script-src 'nonce-${nonce}'; frame-src https://x.vscode-cdn.net data:;`,
    );
    assert.ok(html.includes(`<script nonce="${nonce}" src="https://x/webview.js"></script>`));
    assert.ok(html.includes('<link rel="stylesheet" href="https://x/codicons/codicon.css">'));
    assert.ok(html.includes('<title>&#60;Runs &#38; &#34;more&#34;&#62;</title>'));
    assert.equal((html.match(/<script/g) ?? []).length, 1, 'one script, the nonced bundle');
    assert.doesNotMatch(html, /style=/);
  });
});

// ---- the page in Chromium ---------------------------------------------------------------------------------

describe('results page in Chromium', () => {
  test('a finished successful run shows status, backend, session, origin, duration and stdout', async () => {
    const { page, errors } = await openPage();
    assert.equal(await page.textContent('.empty-state .empty-title'), 'No Python runs yet');
    assert.match(
      (await page.textContent('.empty-state .empty-how')) ?? '',
      /press (Ctrl|Cmd)\+Alt\+Enter to run the selection or the current line, or ▶ in the editor title to run the file/,
    );
    await post(
      page,
      {
        type: 'runStarted',
        run: runInfo('ok1', 'total = sum(range(10))\nprint(total)', { origin: 'mcp', session: 'analysis' }),
      },
      {
        type: 'runFinished',
        runId: 'ok1',
        result: result('ok1', { stdout: '45\n', duration_ms: 1234, session: 'analysis' }),
      },
    );
    await waitForText(page, `${card('ok1')} .stdout`, '45');
    const view = await page.$eval(card('ok1'), (node) => ({
      status: node.getAttribute('data-status'),
      badge: node.querySelector('.badge')?.textContent,
      backend: node.querySelector('.backend')?.textContent,
      session: node.querySelector('.session')?.textContent,
      origin: node.querySelector('.origin')?.textContent,
      duration: node.querySelector('.duration')?.textContent,
      code: node.querySelector('.code-text')?.textContent,
      stderrShown: node.querySelector('.stderr') !== null,
      errorHidden: (node.querySelector('.error-block') as HTMLElement).hidden,
      rerunHidden: (node.querySelector('.rerun') as HTMLElement).hidden,
      interruptHidden: (node.querySelector('.interrupt') as HTMLElement).hidden,
    }));
    assert.deepEqual(view, {
      status: 'ok',
      badge: 'ok',
      backend: 'Pyodide',
      session: 'analysis',
      origin: 'agent (MCP)',
      duration: '1.23 s',
      code: 'total = sum(range(10))\nprint(total)',
      stderrShown: false,
      errorHidden: true,
      rerunHidden: false,
      interruptHidden: true,
    });
    assert.equal(await page.textContent('.run-count'), '1 run');
    assert.ok(await page.isHidden('.empty-state'));
    assert.deepEqual(errors, []);
  });

  test('a streaming run updates live, can be interrupted, and ends with the result text', async () => {
    const { page, errors } = await openPage();
    await post(page, {
      type: 'runStarted',
      run: runInfo('s1', 'for i in range(3):\n    print("step", i)\n    time.sleep(1)', { backend: 'python' }),
    });
    assert.equal(await page.getAttribute(card('s1'), 'data-status'), 'running');
    assert.equal(await page.textContent(`${card('s1')} .badge`), 'running');
    assert.ok(await page.isVisible(`${card('s1')} .spinner`));
    let expected = '';
    for (let i = 0; i < 3; i++) {
      await post(page, { type: 'runOutput', runId: 's1', stream: 'stdout', text: `step ${i}\n` });
      expected += `step ${i}\n`;
      await waitForText(page, `${card('s1')} .stdout`, `step ${i}`);
      assert.equal(await page.textContent(`${card('s1')} .stdout pre`), expected, 'output appended in order, once');
    }
    await post(page, { type: 'runOutput', runId: 's1', stream: 'stderr', text: 'DeprecationWarning: soon\n' });
    await waitForText(page, `${card('s1')} .stderr`, 'DeprecationWarning');

    // A burst of chunks lands in one frame and nothing is lost or duplicated; it comes after the stderr it followed.
    await page.evaluate(() => {
      for (let i = 0; i < 500; i++)
        window.postMessage({ type: 'runOutput', runId: 's1', stream: 'stdout', text: `line ${i}\n` }, '*');
    });
    await waitForText(page, `${card('s1')} .stdout:last-child`, 'line 499');
    assert.deepEqual(await page.$$eval(`${card('s1')} .outputs > *`, (nodes) => nodes.map((node) => node.className)), [
      'stream stdout',
      'stream stderr',
      'stream stdout',
    ]);
    const burst = (await page.textContent(`${card('s1')} .stdout:last-child pre`)) ?? '';
    assert.equal(burst.split('\n').filter((l) => l.startsWith('line ')).length, 500);

    await page.click(`${card('s1')} .interrupt`);
    assert.ok((await sent(page)).some((m) => m.type === 'interrupt' && m.runId === 's1'));
    assert.ok(await page.isDisabled(`${card('s1')} .interrupt`));
    // "Interrupting…" is text in the view's font, beside the stop icon (not written into the icon's glyph).
    const label = await page.$eval(`${card('s1')} .interrupt`, (node) => ({
      text: node.querySelector('.label')?.textContent,
      font: getComputedStyle(node.querySelector('.label')!).fontFamily === getComputedStyle(document.body).fontFamily,
      icon: node.querySelector('.codicon')?.textContent,
    }));
    assert.deepEqual(label, { text: 'Interrupting…', font: true, icon: '' });

    await post(page, {
      type: 'runFinished',
      runId: 's1',
      result: result('s1', {
        backend: 'python',
        stdout: 'step 0\nstep 1\nstep 2\n',
        stderr: 'DeprecationWarning: soon\n',
        duration_ms: 3021,
      }),
    });
    await page.waitForSelector(`${card('s1')}[data-status="ok"]`);
    assert.equal(
      await page.textContent(`${card('s1')} .stdout pre`),
      'step 0\nstep 1\nstep 2\n',
      'the result is authoritative',
    );
    assert.equal(await page.textContent(`${card('s1')} .duration`), '3.02 s');
    assert.ok(await page.isHidden(`${card('s1')} .interrupt`));
    assert.ok(await page.isHidden(`${card('s1')} .spinner`));
    assert.deepEqual(errors, []);
  });

  test('text and displays show in the order the program made them, live and from the result', async () => {
    const { page, errors } = await openPage();
    const table = { mime: 'text/html', data: '<table><tr><td>42</td></tr></table>' };
    const png = { mime: 'image/png', data: gradientPng(8).toString('base64') };
    await post(
      page,
      { type: 'runStarted', run: runInfo('o1', 'print("a"); display(table); print("done")') },
      { type: 'runOutput', runId: 'o1', stream: 'stdout', text: 'a\n' },
      { type: 'runDisplay', runId: 'o1', display: table },
      { type: 'runOutput', runId: 'o1', stream: 'stdout', text: 'done\n' },
    );
    const order = () =>
      page.$$eval(`${card('o1')} .outputs > *`, (nodes) =>
        nodes.map((node) => (node.matches('.stream') ? node.textContent : `[${node.getAttribute('data-mime')}]`)),
      );
    await waitForText(page, `${card('o1')} .stdout:last-child`, 'done');
    assert.deepEqual(await order(), ['a\n', '[text/html]', 'done\n'], 'live');
    // The result's order is authoritative, also for what never streamed (the figure a run left open).
    const outputs = [
      { type: 'stream', name: 'stdout', text: 'a\n' },
      { type: 'display', index: 0 },
      { type: 'stream', name: 'stdout', text: 'done\n' },
      { type: 'stream', name: 'stderr', text: 'warned\n' },
      { type: 'display', index: 1 },
    ] as const;
    await post(page, {
      type: 'runFinished',
      runId: 'o1',
      result: result('o1', { stdout: 'a\ndone\n', stderr: 'warned\n', displays: [table, png], outputs: [...outputs] }),
    });
    await page.waitForSelector(`${card('o1')}[data-status="ok"]`);
    assert.deepEqual(
      await order(),
      ['a\n', '[text/html]', 'done\n', 'stderrwarned\n', '[image/png]'],
      'from the result',
    );
    assert.deepEqual(errors, []);
  });

  test('output shows as a terminal shows it: a progress bar rewritten in place, colours in the theme, no escape codes', async () => {
    const { page, errors } = await openPage();
    const ticks = Array.from({ length: 40 }, (_, i) => ({
      type: 'runOutput' as const,
      runId: 't1',
      stream: 'stderr' as const,
      // tqdm's way: a carriage return, then the whole bar again; one tick split mid-sequence across two chunks.
      text: i === 20 ? '\r\x1b[3' : i === 21 ? `2m${i + 1}/40\x1b[0m` : `\r${i + 1}/40`,
    }));
    await post(
      page,
      { type: 'runStarted', run: runInfo('t1', 'from tqdm import tqdm') },
      {
        type: 'runOutput',
        runId: 't1',
        stream: 'stdout',
        text: '\x1b[1;31mError\x1b[0m and \x1b[38;2;0;128;255mblue\x1b[0m\n',
      },
      ...ticks,
    );
    await waitForText(page, `${card('t1')} .stderr`, '40/40');
    const stderr = () => page.$eval(`${card('t1')} .stderr .stream-text`, (node) => node.textContent);
    assert.equal(await stderr(), '40/40', 'live: one line, in its last state');
    await post(page, { type: 'runOutput', runId: 't1', stream: 'stderr', text: '\n' });
    await waitForText(page, `${card('t1')} .stderr`, '40/40\n');
    const styled = await page.$$eval(`${card('t1')} .stdout .ansi`, (spans) =>
      spans.map((span) => [span.textContent, getComputedStyle(span).color, getComputedStyle(span).fontWeight]),
    );
    assert.deepEqual(styled, [
      ['Error', 'rgb(205, 49, 49)', '700'],
      ['blue', 'rgb(0, 128, 255)', '400'],
    ]);
    assert.equal(
      await page.$eval(`${card('t1')} .stdout .stream-text`, (node) => node.textContent),
      'Error and blue\n',
    );
    // From the result: the same, and Copy takes the text as shown.
    const chunks = ticks.map((tick) => ({ type: 'stream' as const, name: 'stderr' as const, text: tick.text }));
    await post(page, {
      type: 'runFinished',
      runId: 't1',
      result: result('t1', {
        outputs: [{ type: 'stream', name: 'stdout', text: '\x1b[1;31mError\x1b[0m and blue\n' }, ...chunks],
      }),
    });
    await page.waitForSelector(`${card('t1')}[data-status="ok"]`);
    assert.equal(await stderr(), '40/40');
    assert.deepEqual(errors, []);
  });

  test("labels: Jupyter capitalised, failures in words, a tool form's run named after the tool, Interrupting… in every page", async () => {
    const { page, errors } = await openPage();
    await post(
      page,
      { type: 'runStarted', run: runInfo('j1', '1/0', { backend: 'jupyter' }) },
      {
        type: 'runFinished',
        runId: 'j1',
        result: result('j1', {
          backend: 'jupyter',
          success: false,
          diagnostics: { error_type: 'CANCELLED', message: 'the run was cancelled. The session state is kept.' },
        }),
      },
      { type: 'runStarted', run: { ...runInfo('f1', 'print(1)', { origin: 'explorer' }), tool: 'run_python' } },
    );
    await page.waitForSelector(`${card('j1')}[data-status="error"]`);
    assert.equal(await page.textContent(`${card('j1')} .backend`), 'Jupyter');
    assert.equal(await page.textContent(`${card('j1')} .badge`), 'Cancelled');
    assert.equal(await page.textContent(`${card('f1')} .origin`), 'run_python form');
    // The other page showing this run (side bar or panel beside) asked to interrupt it: this one says so too.
    await post(page, { type: 'interrupting', runId: 'f1' });
    await page.waitForFunction(
      (s) => (document.querySelector(s) as HTMLButtonElement).disabled,
      `${card('f1')} .interrupt`,
    );
    assert.equal(await page.textContent(`${card('f1')} .interrupt .label`), 'Interrupting…');
    assert.deepEqual(errors, []);
  });

  test('in a narrow view a traceback scrolls sideways: its ^^^ markers stay under the code they point at', async () => {
    const { page, errors } = await openPage('dark', 340);
    const code =
      '    result = compute_the_ratio_of(first_measurement_value, second_measurement_value) / zero_denominator';
    const marker = `    ${' '.repeat(code.indexOf('compute') - 4)}${'^'.repeat(code.length - code.indexOf('compute'))}`;
    const traceback = `Traceback (most recent call last):\n  File "/work/report.py", line 9, in <module>\n${code}\n${marker}\nZeroDivisionError: division by zero\n`;
    await post(
      page,
      { type: 'runStarted', run: runInfo('tb1', 'report()') },
      {
        type: 'runFinished',
        runId: 'tb1',
        result: result('tb1', {
          success: false,
          diagnostics: {
            error_type: 'RuntimeError',
            exception: 'ZeroDivisionError',
            message: 'division by zero',
            traceback,
          },
        }),
      },
    );
    const box = await page.waitForSelector(`${card('tb1')} .traceback`);
    const shape = await box.evaluate((node) => {
      const lineHeight = parseFloat(getComputedStyle(node).lineHeight);
      const padding = parseFloat(getComputedStyle(node).paddingTop) + parseFloat(getComputedStyle(node).paddingBottom);
      return {
        lines: Math.round((node.scrollHeight - padding) / lineHeight),
        sideways: node.scrollWidth > node.clientWidth,
        pageSideways: document.documentElement.scrollWidth > window.innerWidth,
      };
    });
    assert.deepEqual(
      shape,
      { lines: 5, sideways: true, pageSideways: false },
      'five lines, none wrapped; the traceback scrolls, the page does not',
    );
    assert.deepEqual(errors, []);
  });

  test('a flood of output is capped per card', async () => {
    const { page } = await openPage();
    await post(page, { type: 'runStarted', run: runInfo('flood') });
    await page.evaluate(() => {
      const chunk = 'x'.repeat(9_999) + '\n';
      for (let i = 0; i < 40; i++)
        window.postMessage({ type: 'runOutput', runId: 'flood', stream: 'stdout', text: chunk }, '*');
    });
    await waitForText(page, `${card('flood')} .stdout`, 'not kept in this view');
    const length = await page.$eval(`${card('flood')} .stdout pre`, (node) => node.textContent?.length ?? 0);
    assert.ok(length > 199_000 && length < 201_000, `kept ${length} characters`);
  });

  test('an error run shows its error type, message, traceback, notes, hints and stderr as text', async () => {
    const { page, errors } = await openPage();
    const traceback =
      'Traceback (most recent call last):\n  File "<cell 3>", line 2, in <module>\n    ratio()\n  File "/work/project/calc.py", line 2, in ratio\n    1 / 0\nZeroDivisionError: division by zero\n';
    const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    await post(
      page,
      { type: 'runStarted', run: runInfo('err1', 'x = 1\n1 / 0') },
      {
        type: 'runFinished',
        runId: 'err1',
        result: result('err1', {
          success: false,
          stdout: hostile,
          stderr: 'about to fail\n',
          duration_ms: 8,
          diagnostics: {
            error_type: 'RuntimeError',
            exception: 'ZeroDivisionError',
            message: 'ZeroDivisionError: division by zero',
            traceback,
            hints: ['Check the divisor before dividing.'],
          },
        }),
      },
      { type: 'runStarted', run: runInfo('t1', 'while True: pass') },
      {
        type: 'runFinished',
        runId: 't1',
        result: result('t1', {
          success: false,
          duration_ms: 30_004,
          diagnostics: {
            error_type: 'TIMEOUT',
            message: 'Execution timed out after 30 s',
            timeout_s: 30,
            session_reset: true,
          },
        }),
      },
    );
    await page.waitForSelector(`${card('err1')}[data-status="error"]`);
    assert.equal(
      await page.textContent(`${card('err1')} .badge`),
      'ZeroDivisionError',
      'the badge names the Python exception',
    );
    assert.equal(await page.textContent(`${card('err1')} .error-title`), 'ZeroDivisionError: division by zero');
    assert.equal(await page.textContent(`${card('err1')} .traceback`), traceback);
    const links = await page.$$eval(`${card('err1')} .traceback a.location`, (nodes) =>
      nodes.map((n) => n.textContent),
    );
    assert.deepEqual(links, ['File "/work/project/calc.py", line 2'], 'file frames are links; cell frames are not');
    await page.click(`${card('err1')} .traceback a.location`);
    assert.deepEqual(
      (await sent(page)).filter((m) => m.type === 'openLocation'),
      [{ type: 'openLocation', file: '/work/project/calc.py', line: 2 }],
    );
    assert.equal(await page.textContent(`${card('err1')} .hints li`), 'Check the divisor before dividing.');
    assert.equal(await page.textContent(`${card('err1')} .stderr pre`), 'about to fail\n');
    assert.equal(await page.textContent(`${card('err1')} .stdout pre`), hostile, 'markup in output is shown as text');
    assert.equal(
      await page.$$eval(`${card('err1')} .stdout img, ${card('err1')} .stdout script`, (nodes) => nodes.length),
      0,
    );
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    const [stdoutBg, stderrBg] = await page.$$eval(`${card('err1')} .stream`, (nodes) =>
      nodes.map((n) => getComputedStyle(n).backgroundColor),
    );
    assert.notEqual(stdoutBg, stderrBg, 'stderr is styled apart from stdout');

    // A run refused before it started (Restricted Mode): the badge says it did not run, the title says why.
    await post(
      page,
      { type: 'runStarted', run: runInfo('r1', 'print(1)', { backend: 'python' }) },
      {
        type: 'runFinished',
        runId: 'r1',
        result: result('r1', {
          success: false,
          duration_ms: 0,
          backend: 'python',
          diagnostics: {
            error_type: 'INVALID_ARGUMENT',
            message: 'Workspace Python is off because this workspace is not trusted (Restricted Mode).',
          },
        }),
      },
    );
    await waitForText(page, `${card('r1')} .badge`, 'Not run');
    assert.equal(
      await page.textContent(`${card('r1')} .error-title`),
      'Workspace Python is off because this workspace is not trusted (Restricted Mode).',
    );
    assert.doesNotMatch((await page.textContent(card('r1'))) ?? '', /INVALID_ARGUMENT/);

    assert.equal(await page.textContent(`${card('t1')} .badge`), 'Timed out');
    assert.equal(await page.textContent(`${card('t1')} .duration`), '30.0 s');
    const notes = await page.$$eval(`${card('t1')} .error-note`, (nodes) => nodes.map((n) => n.textContent));
    assert.deepEqual(notes, ['Time limit: 30 s.', 'The session was reset: its variables and imports are gone.']);
    assert.deepEqual(errors, []);
  });

  test("a run's tool calls are listed on its card with outcome, time and approval, refused ones marked; none, no list", async () => {
    const { page, errors } = await openPage();
    const toolCalls = [
      { server: 'memory', tool: 'read_graph', ok: true, ms: 3, approval: 'read-only' as const },
      { server: 'memory', tool: 'create_entities', ok: false, ms: 0, approval: 'denied' as const },
      { server: 'memory', tool: 'add_observations', ok: true, ms: 12, approval: 'asked-allowed' as const },
    ];
    await post(
      page,
      { type: 'runStarted', run: runInfo('tc1', 'from code_mode import tools') },
      { type: 'runFinished', runId: 'tc1', result: result('tc1', { stdout: 'done\n', tool_calls: toolCalls }) },
      { type: 'runStarted', run: runInfo('tc2', 'print(1)') },
      { type: 'runFinished', runId: 'tc2', result: result('tc2', { stdout: '1\n', tool_calls: [] }) },
    );
    await waitForText(page, `${card('tc1')} .tool-calls-title`, 'Tool calls · 3 · 1 refused');
    const rows = await page.$$eval(`${card('tc1')} .tool-call`, (nodes) =>
      nodes.map((n) => Array.from(n.children, (c) => c.textContent)),
    );
    assert.deepEqual(rows, [
      ['memory.read_graph', 'ok · 3 ms', 'read-only'],
      ['memory.create_entities', 'not called', 'denied'],
      ['memory.add_observations', 'ok · 12 ms', 'asked-allowed'],
    ]);
    assert.match(
      (await page.getAttribute(`${card('tc1')} .tool-call[data-approval="denied"] .tool-call-approval`, 'title')) ?? '',
      /not called/,
    );
    assert.ok(await page.isHidden(`${card('tc2')} .tool-calls`), 'a run without tool calls shows no list');
    assert.deepEqual(errors, []);
  });

  test('image displays render as loaded <img> elements, SVG included, never as inline markup', async () => {
    const { page, errors } = await openPage();
    let dialogs = 0;
    page.on('dialog', (dialog) => {
      dialogs += 1;
      void dialog.dismiss();
    });
    const png = gradientPng(64).toString('base64');
    await post(
      page,
      { type: 'runStarted', run: runInfo('img1', 'plt.plot(x, y); plt.show()') },
      { type: 'runDisplay', runId: 'img1', display: { mime: 'image/png', data: png, title: 'gradient.png' } },
      { type: 'runDisplay', runId: 'img1', display: { mime: 'image/svg+xml', data: CHART_SVG } },
      {
        type: 'runDisplay',
        runId: 'img1',
        display: { mime: 'image/svg+xml', data: Buffer.from(CHART_SVG).toString('base64') },
      },
    );
    await page.waitForFunction(() => {
      const images = Array.from(document.querySelectorAll('.run-card .display img')) as HTMLImageElement[];
      return images.length === 3 && images.every((img) => img.complete && img.naturalWidth > 0);
    });
    const images = await page.$$eval(`${card('img1')} .display img`, (nodes) =>
      (nodes as HTMLImageElement[]).map((img) => ({
        width: img.naturalWidth,
        height: img.naturalHeight,
        scheme: img.src.slice(0, img.src.indexOf(',')),
      })),
    );
    assert.deepEqual(images, [
      { width: 64, height: 64, scheme: 'data:image/png;base64' },
      { width: 580, height: 190, scheme: 'data:image/svg+xml;charset=utf-8' },
      { width: 580, height: 190, scheme: 'data:image/svg+xml;base64' },
    ]);
    assert.equal(await page.textContent(`${card('img1')} figcaption`), 'gradient.png');
    assert.equal(await page.$$eval('svg', (nodes) => nodes.length), 0, 'no SVG markup in the page');
    assert.equal(dialogs, 0, 'the script inside the SVG did not run');

    // The result lists the same displays that streamed: nothing is rendered twice.
    const displays = [
      { mime: 'image/png', data: png, title: 'gradient.png' },
      { mime: 'image/svg+xml', data: CHART_SVG },
      { mime: 'image/svg+xml', data: Buffer.from(CHART_SVG).toString('base64') },
    ];
    await post(page, { type: 'runFinished', runId: 'img1', result: result('img1', { displays }) });
    await page.waitForSelector(`${card('img1')}[data-status="ok"]`);
    assert.equal(await page.$$eval(`${card('img1')} .display`, (nodes) => nodes.length), 3);

    // Broken image data becomes a note instead of a broken image icon.
    await post(
      page,
      { type: 'runStarted', run: runInfo('img2') },
      { type: 'runDisplay', runId: 'img2', display: { mime: 'image/png', data: 'bm90IGEgcG5n' } },
    );
    await waitForText(page, `${card('img2')} .display`, 'could not be decoded');
    assert.deepEqual(errors, []);
  });

  test('a figure enlarges on click, saves through the host as it came, and copies as PNG; a large table scrolls inside the card', async () => {
    const { page, errors } = await openPage('dark', 420);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    const png = gradientPng(640).toString('base64');
    const rows = Array.from(
      { length: 200 },
      (_, i) => `<tr>${Array.from({ length: 30 }, (_, j) => `<td>r${i}c${j}</td>`).join('')}</tr>`,
    ).join('');
    await post(
      page,
      { type: 'runStarted', run: runInfo('fig1', 'plt.show(); display(df)') },
      { type: 'runDisplay', runId: 'fig1', display: { mime: 'image/png', data: png, title: 'out/loss curve.png' } },
      { type: 'runDisplay', runId: 'fig1', display: { mime: 'image/svg+xml', data: CHART_SVG, title: 'chart' } },
      { type: 'runDisplay', runId: 'fig1', display: { mime: 'text/html', data: `<table>${rows}</table>` } },
    );
    const figure = `${card('fig1')} .display[data-mime="image/png"]`;
    await page.waitForFunction(
      (s) => (document.querySelector(`${s} img`) as HTMLImageElement | null)?.complete === true,
      figure,
    );
    const shown = await page.$eval(`${figure} img`, (img) => img.getBoundingClientRect().width);
    assert.ok(shown < 420, `fitted in the card (${shown} px)`);

    // Click to enlarge: a modal view of the figure at the view's size; a click on it shows it at its own size.
    await page.click(`${figure} img`);
    await page.waitForSelector('dialog.lightbox[open]');
    assert.equal(await page.textContent('.lightbox-head span'), 'out/loss curve.png');
    await page.click('.lightbox-body img');
    assert.equal(
      await page.$eval('.lightbox-body img', (img) => Math.round(img.getBoundingClientRect().width)),
      640,
      'its own size',
    );
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('dialog.lightbox'));

    // Save asks the host, with the data as the run displayed it (SVG stays SVG markup).
    await page.hover(`${card('fig1')} .display[data-mime="image/svg+xml"] img`);
    await page.click(`${card('fig1')} .display[data-mime="image/svg+xml"] .save`);
    await page.hover(`${figure} img`);
    await page.click(`${figure} .save`);
    const saves = (await sent(page)).filter((m) => m.type === 'saveImage');
    assert.deepEqual(saves, [
      { type: 'saveImage', mime: 'image/svg+xml', data: CHART_SVG, title: 'chart' },
      { type: 'saveImage', mime: 'image/png', data: png, title: 'out/loss curve.png' },
    ]);
    assert.deepEqual(parsePageMessage(saves[1]), saves[1], 'the host accepts it');
    assert.equal(parsePageMessage({ ...saves[1], mime: 'text/html' }), undefined, 'only images');

    // Copy puts a PNG of the figure on the clipboard.
    await page.click(`${figure} .copy-image`);
    await page.waitForFunction(
      () => document.querySelector('.copy-image.flashed')?.getAttribute('aria-label') === 'Copied',
    );
    const copied = await page.evaluate(async () => {
      const [item] = await navigator.clipboard.read();
      const blob = await item!.getType('image/png');
      return Array.from(new Uint8Array(await blob.arrayBuffer()));
    });
    assert.deepEqual(checkPng(Buffer.from(copied)), { width: 640, height: 640 });

    // The table keeps to the card's width and a bounded height, and scrolls inside its frame.
    const frameBox = await page.$eval(`${card('fig1')} .html-frame-wrapper`, (node) => node.getBoundingClientRect());
    assert.ok(frameBox.height <= 480 && frameBox.right <= 420, JSON.stringify(frameBox));
    assert.equal(
      await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
      true,
      'the view does not scroll sideways',
    );
    const frame = page.frames().find((f) => f !== page.mainFrame() && f.url().startsWith('about:srcdoc'))!;
    await frame.waitForSelector('td');
    const scroll = await frame.evaluate(() => ({
      down: document.scrollingElement!.scrollHeight > window.innerHeight,
      across: document.scrollingElement!.scrollWidth > window.innerWidth,
    }));
    assert.deepEqual(scroll, { down: true, across: true });
    assert.deepEqual(errors, []);
  });

  test('an HTML table renders in a sandboxed srcdoc frame, themed, and its script does not run', async () => {
    const { page, errors } = await openPage();
    await post(
      page,
      { type: 'runStarted', run: runInfo('html1', 'df.head()') },
      {
        type: 'runDisplay',
        runId: 'html1',
        display: { mime: 'text/html', data: DATAFRAME_HTML, title: 'DataFrame 4 × 4' },
      },
    );
    const frameSelector = `${card('html1')} iframe.html-frame`;
    await page.waitForSelector(frameSelector);
    const attrs = await page.$eval(frameSelector, (frame) => ({
      sandbox: frame.getAttribute('sandbox'),
      hasSrcdoc: frame.hasAttribute('srcdoc'),
      src: frame.getAttribute('src'),
    }));
    assert.deepEqual(attrs, { sandbox: '', hasSrcdoc: true, src: null });

    const handle = await page.$(frameSelector);
    const frame = await handle!.contentFrame();
    assert.ok(frame);
    await frame.waitForSelector('table.dataframe');
    const inside = await frame.evaluate(() => ({
      rows: document.querySelectorAll('tbody tr').length,
      firstCity: document.querySelector('tbody td')?.textContent,
      scriptRan: document.body.dataset.scriptRan ?? null,
      origin: window.origin,
      cellPadding: getComputedStyle(document.querySelector('td')!).paddingLeft,
      color: getComputedStyle(document.body).color,
    }));
    assert.equal(inside.rows, 4);
    assert.equal(inside.firstCity, 'Lisbon');
    assert.equal(inside.scriptRan, null, 'a script inside the HTML display must not run');
    assert.equal(inside.origin, 'null', 'the frame has an opaque origin');
    assert.equal(inside.cellPadding, '10px', 'the nonced frame stylesheet applied');
    assert.equal(inside.color, 'rgb(204, 204, 204)', 'the frame uses the theme foreground');
    assert.deepEqual(errors, []);

    // A theme switch restyles the frame.
    await page.evaluate(() => document.body.classList.replace('vscode-dark', 'vscode-light'));
    await page.waitForFunction(
      (sel) => (document.querySelector(sel) as HTMLIFrameElement).dataset.scheme === 'light',
      frameSelector,
    );
  });

  test("a styled table keeps its colours (a pandas Styler's stylesheet, style attributes) and the page logs no CSP error", async () => {
    const { page, errors } = await openPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') violations.push(message.text());
    });
    // What pandas' Styler writes (background_gradient, set_properties), plus what the frame's CSP would refuse.
    const styled = `<style type="text/css">
#T_ab12_row0_col1 { background-color: #ff0000; color: #f1f1f1; }
#T_ab12_row1_col1 { background-color: #0000ff; color: #f1f1f1; }
</style>
<table id="T_ab12">
  <thead><tr><th class="blank level0">&nbsp;</th><th id="T_ab12_level0_col0" class="col_heading level0 col0">city</th><th class="col_heading level0 col1">temp_c</th></tr></thead>
  <tbody>
    <tr><th id="T_ab12_level0_row0" class="row_heading level0 row0">0</th><td id="T_ab12_row0_col0" style="font-weight: bold; color: rgb(0, 128, 0)">Lisbon</td><td id="T_ab12_row0_col1">21.4</td></tr>
    <tr><th class="row_heading level0 row1">1</th><td style="color: x} body{display:none">Oslo</td><td id="T_ab12_row1_col1" onclick="alert(1)">9.8</td></tr>
  </tbody>
</table>
<link rel="stylesheet" href="https://example.com/remote.css"><script>document.body.dataset.scriptRan = 'yes';</script>`;
    await post(
      page,
      { type: 'runStarted', run: runInfo('sty1', 'df.style.background_gradient()') },
      { type: 'runDisplay', runId: 'sty1', display: { mime: 'text/html', data: styled } },
    );
    const handle = await page.waitForSelector(`${card('sty1')} iframe.html-frame`);
    const frame = await handle.contentFrame();
    assert.ok(frame);
    await frame.waitForSelector('#T_ab12');
    const inside = await frame.evaluate(() => ({
      hot: getComputedStyle(document.querySelector('#T_ab12_row0_col1')!).backgroundColor,
      cold: getComputedStyle(document.querySelector('#T_ab12_row1_col1')!).backgroundColor,
      bold: getComputedStyle(document.querySelector('#T_ab12_row0_col0')!).fontWeight,
      green: getComputedStyle(document.querySelector('#T_ab12_row0_col0')!).color,
      bodyShown: getComputedStyle(document.body).display,
      scriptRan: document.body.dataset.scriptRan ?? null,
      handlers: document.querySelectorAll('[onclick]').length,
    }));
    assert.deepEqual(inside, {
      hot: 'rgb(255, 0, 0)',
      cold: 'rgb(0, 0, 255)',
      bold: '700',
      green: 'rgb(0, 128, 0)',
      bodyShown: 'block',
      scriptRan: null,
      handlers: 0,
    });
    // A theme switch rewrites the frame: the colours stay.
    await page.evaluate(() => document.body.classList.replace('vscode-dark', 'vscode-light'));
    await page.waitForFunction(
      (sel) => (document.querySelector(sel) as HTMLIFrameElement).dataset.scheme === 'light',
      `${card('sty1')} iframe.html-frame`,
    );
    const again = await (await page.$(`${card('sty1')} iframe.html-frame`))!.contentFrame();
    await again!.waitForSelector('#T_ab12_row0_col1');
    assert.equal(
      await again!.evaluate(() => getComputedStyle(document.querySelector('#T_ab12_row0_col1')!).backgroundColor),
      'rgb(255, 0, 0)',
    );
    assert.deepEqual(violations, []);
    assert.deepEqual(errors, []);
  });

  test('a real run: display() of a pure-Python PNG, and a matplotlib figure where /usr/bin/python3 has it', async () => {
    // Debian's python3-matplotlib serves /usr/bin/python3; without it the run still shows the pure-Python PNG.
    const system = '/usr/bin/python3';
    const withMatplotlib =
      fs.existsSync(system) && spawnSync(system, ['-c', 'import matplotlib'], { stdio: 'ignore' }).status === 0;
    const engine = createEngine({ storageDir: testStorageDir, pythonPath: withMatplotlib ? system : undefined });
    const events: RunEvent[] = [];
    const code = [
      PYTHON_PNG_ENCODER,
      'display(make_png(96, 64), title="gradient made with zlib and struct")',
      ...(withMatplotlib
        ? [
            'import matplotlib.pyplot as plt',
            'plt.plot([0, 1, 2, 3, 4], [0, 1, 4, 9, 16], marker="o")',
            'plt.title("squares")',
          ]
        : []),
    ].join('\n');
    try {
      const run = await engine.run({
        code,
        backend: 'python',
        origin: 'command',
        onEvent: (event) => events.push(event),
      });
      assert.equal(run.success, true, JSON.stringify(run.diagnostics));
    } finally {
      await engine.dispose();
    }
    const shown = events.flatMap((event) => (event.type === 'display' ? [event.display] : []));
    assert.deepEqual(
      shown.map((d) => d.title),
      ['gradient made with zlib and struct', ...(withMatplotlib ? ['Figure 1'] : [])],
    );
    const sizes = shown.map((d) => checkPng(Buffer.from(d.data, 'base64')));
    fs.writeFileSync(path.join(outDir, 'webview-display-fixture.png'), Buffer.from(shown[0].data, 'base64'));

    const { page, errors } = await openPage('dark', 760);
    await post(page, ...events.map(messageForRunEvent));
    const runId = events[0].runId;
    await page.waitForSelector(`${card(runId)}[data-status="ok"]`);
    await page.waitForFunction((count) => {
      const images = Array.from(document.querySelectorAll('.run-card .display img')) as HTMLImageElement[];
      return images.length === count && images.every((img) => img.complete && img.naturalWidth > 0);
    }, shown.length);
    const rendered = await page.$$eval(`${card(runId)} .display img`, (nodes) =>
      (nodes as HTMLImageElement[]).map((img) => ({ width: img.naturalWidth, height: img.naturalHeight })),
    );
    assert.deepEqual(rendered, sizes);
    assert.deepEqual(
      await page.$$eval(`${card(runId)} figcaption`, (nodes) => nodes.map((n) => n.textContent)),
      shown.map((d) => d.title),
    );
    await page.setViewportSize({
      width: 760,
      height: await page.evaluate(() => document.documentElement.scrollHeight),
    });
    await page.screenshot({ path: path.join(outDir, 'webview-run-displays.png'), animations: 'disabled' });
    assert.deepEqual(errors, []);
  });

  test('the CSP blocks an injected inline script and reports it', async () => {
    const { page } = await openPage();
    await page.evaluate(() => {
      const script = document.createElement('script');
      script.textContent = 'window.__injected = true;';
      document.body.append(script);
    });
    await page.waitForFunction(() => (window as unknown as { __violations: unknown[] }).__violations.length > 0);
    const state = await page.evaluate(() => ({
      injected: (window as unknown as { __injected?: boolean }).__injected ?? false,
      violations: (window as unknown as { __violations: { directive: string; blocked: string }[] }).__violations,
    }));
    assert.equal(state.injected, false);
    assert.ok(
      state.violations.some((v) => v.directive === 'script-src-elem' && v.blocked === 'inline'),
      JSON.stringify(state.violations),
    );
  });

  test("the buttons' icons are codicons, from the extension's own font file and no other origin", async () => {
    const { page, errors } = await openPage();
    await post(
      page,
      { type: 'runStarted', run: runInfo('ic1', 'print(1)') },
      { type: 'runFinished', runId: 'ic1', result: result('ic1', { stdout: '1\n' }) },
    );
    await page.waitForSelector(`${card('ic1')} .rerun .codicon-debug-rerun`);
    await page.evaluate(() => document.fonts.ready);
    const glyphs = await page.$$eval('button .codicon', (nodes) =>
      nodes.map((node) => {
        const before = getComputedStyle(node, '::before');
        return {
          icon: Array.from(node.classList).find((c) => c !== 'codicon'),
          font: before.fontFamily,
          glyph: before.content.codePointAt(1),
          width: node.getBoundingClientRect().width,
        };
      }),
    );
    const shown = new Map(glyphs.map((g) => [g.icon, g]));
    for (const [icon, codepoint] of [
      ['codicon-clear-all', 0xeabf],
      ['codicon-debug-rerun', 0xebc0],
      ['codicon-copy', 0xebcc],
    ] as const) {
      const glyph = shown.get(icon);
      assert.ok(glyph, `${icon} is on the page: ${JSON.stringify(glyphs)}`);
      assert.equal(glyph.font, 'codicon');
      assert.equal(glyph.glyph, codepoint, `${icon} draws its codicon`);
      assert.equal(glyph.width, 14, `${icon} is a 14px glyph`);
    }
    const font = await page.evaluate(() => ({
      loaded: document.fonts.check('14px codicon'),
      faces: Array.from(document.fonts as unknown as Iterable<FontFace>, (f) => `${f.family}:${f.status}`),
    }));
    assert.ok(font.loaded, `the codicon font is loaded: ${font.faces.join(', ')}`);

    // The same font from another origin (localhost is not 127.0.0.1) is refused by font-src.
    const foreign = `${origin.replace('127.0.0.1', 'localhost')}/dist/codicons/codicon.ttf`;
    const outcome = await page.evaluate(async (url) => {
      try {
        await new FontFace('foreign', `url(${url})`).load();
        return 'loaded';
      } catch {
        return 'refused';
      }
    }, foreign);
    assert.equal(outcome, 'refused');
    const violations = await page.evaluate(
      () => (window as unknown as { __violations: { directive: string; blocked: string }[] }).__violations,
    );
    assert.deepEqual(violations, [{ directive: 'font-src', blocked: foreign, sample: '' }]);
    assert.deepEqual(errors, []);
  });

  test('the tool form renders fields from the schema, validates, and posts invokeTool with typed args', async () => {
    const { page, errors } = await openPage();
    await post(page, {
      type: 'toolForm',
      tool: {
        server: 'weather',
        name: 'forecast',
        description: 'Daily forecast for a city.',
        inputSchema: {
          type: 'object',
          properties: {
            city: { type: 'string', description: 'City name' },
            days: { type: 'integer', default: 3, minimum: 1, maximum: 14 },
            threshold: { type: 'number' },
            metric: { type: 'boolean', default: true },
            alerts: { type: 'boolean' },
            detail: { enum: ['summary', 'hourly', 'full'], default: 'summary' },
            coords: { type: 'object', description: 'lat/lon' },
            fields: { type: 'array', items: { type: 'string' } },
            stations: {
              type: 'array',
              items: {
                type: 'object',
                properties: { id: { type: 'string' }, height: { type: 'number' } },
                required: ['id'],
              },
            },
          },
          required: ['city'],
        },
      },
    });
    await page.waitForSelector('.tool-panel:not([hidden]) form');
    const kinds = await page.$$eval('.tool-form [data-kind]', (nodes) =>
      nodes.map((n) => `${(n as HTMLInputElement).name}:${n.getAttribute('data-kind')}:${n.tagName.toLowerCase()}`),
    );
    assert.deepEqual(kinds, [
      'city:string:input',
      'days:integer:input',
      'threshold:number:input',
      'metric:boolean:input',
      'alerts:boolean:input',
      'detail:enum:select',
      'coords:json:textarea',
      'fields:json:textarea',
      'stations:json:textarea',
    ]);
    assert.equal(await page.textContent('.tool-name'), 'weather›forecast');
    // A JSON value shows the shape it needs and an example, not a bare box.
    assert.equal(
      await page.textContent('.field:has([name="stations"]) .field-shape'),
      '[{id: string, height?: number}]',
    );
    assert.equal(
      await page.getAttribute('[name="stations"]', 'placeholder'),
      JSON.stringify([{ id: '', height: 0 }], null, 2),
    );

    // Missing required value and bad JSON are reported next to their fields, and nothing is sent.
    await page.fill('[name="coords"]', '{ not json');
    await page.click('.tool-form button[type="submit"]');
    assert.equal(await page.textContent('.field-string .field-error'), 'required');
    assert.match((await page.textContent('.field-json .field-error')) ?? '', /^invalid JSON/);
    assert.ok(!(await sent(page)).some((m) => m.type === 'invokeTool'));

    await page.fill('[name="city"]', 'Lisbon');
    await page.fill('[name="days"]', '5');
    await page.fill('[name="threshold"]', '0.25');
    await page.selectOption('[name="detail"]', { label: 'hourly' });
    await page.check('[name="alerts"]');
    await page.fill('[name="coords"]', '{"lat": 38.7, "lon": -9.1}');
    await page.fill('[name="fields"]', '["temp", "rain"]');
    await page.click('.tool-form button[type="submit"]');
    const invoke = (await sent(page)).find((m) => m.type === 'invokeTool');
    assert.ok(invoke && invoke.type === 'invokeTool');
    assert.deepEqual(parsePageMessage(invoke), invoke, 'the host validator accepts what the form sends');
    assert.equal(invoke.server, 'weather');
    assert.equal(invoke.name, 'forecast');
    assert.deepEqual(invoke.args, {
      city: 'Lisbon',
      days: 5,
      threshold: 0.25,
      metric: true,
      alerts: true,
      detail: 'hourly',
      coords: { lat: 38.7, lon: -9.1 },
      fields: ['temp', 'rain'],
    });
    assert.ok(await page.isDisabled('.tool-form button[type="submit"]'), 'one request at a time');

    await post(page, { type: 'toolResult', requestId: 'someone-else', ok: true, content: 'ignored' });
    await post(page, {
      type: 'toolResult',
      requestId: invoke.requestId,
      ok: true,
      content: [{ type: 'text', text: 'Sunny, 24 °C' }],
    });
    await waitForText(page, '.tool-result', 'Sunny, 24 °C');
    assert.ok(!((await page.textContent('.tool-result')) ?? '').includes('ignored'));
    assert.ok(await page.isEnabled('.tool-form button[type="submit"]'));
    await page.screenshot({ path: path.join(outDir, 'webview-tool-form.png'), fullPage: true });

    await page.click('.tool-panel .icon-button');
    assert.ok(await page.isHidden('.tool-panel'));
    assert.deepEqual(errors, []);
  });

  test('history replaces the cards, newest first, and the bound drops the oldest', async () => {
    const { page } = await openPage();
    const runs: RunCard[] = Array.from({ length: 105 }, (_, i) => ({
      run: runInfo(`h${i}`, `print(${i})`),
      stdout: `${i}\n`,
      stderr: '',
      displays: [],
      result: result(`h${i}`, { stdout: `${i}\n` }),
    }));
    await post(page, { type: 'history', runs });
    await page.waitForFunction(() => document.querySelectorAll('.run-card').length === 100);
    assert.equal(await page.getAttribute('.run-card:first-child', 'data-run-id'), 'h104');
    assert.equal(await page.getAttribute('.run-card:last-child', 'data-run-id'), 'h5');
    assert.equal(await page.textContent('.run-count'), '100 runs');

    await post(page, { type: 'runStarted', run: runInfo('h105') });
    await page.waitForSelector(card('h105'));
    assert.equal(await page.$$eval('.run-card', (nodes) => nodes.length), 100);
    assert.equal(await page.getAttribute('.run-card:first-child', 'data-run-id'), 'h105');
    assert.equal(await page.$(card('h5')), null, 'the oldest card was dropped');
    assert.equal(await page.getAttribute('.run-card:last-child', 'data-run-id'), 'h6');
  });

  test('a run whose displays the history no longer keeps says so, and the page bounds the displays it keeps', async () => {
    const { page, errors } = await openPage();
    const dropped = {
      count: 3,
      bytes: 12_000_000,
      reason: 'the history keeps the displays of recent runs only (64 MB in all)',
    };
    await post(page, {
      type: 'history',
      runs: [
        {
          run: runInfo('d0'),
          stdout: 'x\n',
          stderr: '',
          displays: [],
          result: result('d0', { stdout: 'x\n' }),
          displaysDropped: dropped,
        },
      ],
    });
    await waitForText(page, `${card('d0')} .displays-dropped`, '3 displays (12.0 MB) of this run are no longer shown');
    assert.match(
      (await page.textContent(`${card('d0')} .displays-dropped`)) ?? '',
      /recent runs only \(64 MB in all\)\. Re-run to see them again\.$/,
    );

    // Five runs of 16 M characters each, made in the page: past 64 M the oldest cards let go of theirs.
    await page.evaluate(() => {
      for (let i = 1; i <= 5; i++) {
        const runId = `d${i}`;
        window.postMessage(
          {
            type: 'runStarted',
            run: {
              runId,
              session: 'default',
              backend: 'pyodide',
              code: 'display(big)',
              origin: 'command',
              startedAt: Date.now(),
            },
          },
          '*',
        );
        window.postMessage(
          { type: 'runDisplay', runId, display: { mime: 'text/plain', data: 'y'.repeat(16 * 1024 * 1024) } },
          '*',
        );
        window.postMessage(
          {
            type: 'runFinished',
            runId,
            result: {
              success: true,
              stdout: '',
              stderr: '',
              duration_ms: 1,
              diagnostics: null,
              backend: 'pyodide',
              session: 'default',
              run_id: runId,
            },
          },
          '*',
        );
      }
    });
    await waitForText(page, `${card('d5')} .badge`, 'ok');
    await waitForText(
      page,
      `${card('d1')} .displays-dropped`,
      '1 display (16.8 MB) of this run is no longer shown: this view keeps the displays of recent runs only (64 MB in all)',
    );
    assert.equal(await page.$$eval(`${card('d1')} .display`, (nodes) => nodes.length), 0);
    for (const kept of ['d2', 'd3', 'd4', 'd5']) {
      assert.equal(await page.$$eval(`${card(kept)} .display`, (nodes) => nodes.length), 1, kept);
      assert.ok(await page.isHidden(`${card(kept)} .displays-dropped`), kept);
    }
    assert.deepEqual(errors, []);
  });

  test('re-run, copy, reveal and clear', async () => {
    const { page } = await openPage();
    await post(
      page,
      { type: 'runStarted', run: runInfo('a1') },
      { type: 'runFinished', runId: 'a1', result: result('a1', { stdout: 'a\n' }) },
      { type: 'runStarted', run: runInfo('a2') },
      { type: 'runFinished', runId: 'a2', result: result('a2', { stdout: 'b\n' }) },
    );
    await page.click(`${card('a1')} .rerun`);
    assert.deepEqual(
      (await sent(page)).filter((m) => m.type === 'rerun'),
      [{ type: 'rerun', runId: 'a1' }],
    );

    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    await page.click(`${card('a2')} .copy`);
    await waitForText(page, `${card('a2')} .copy`, 'Copied');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'b\n');

    await post(page, { type: 'reveal', runId: 'a1' });
    await page.waitForSelector(`${card('a1')}.revealed`);

    await page.click('.toolbar-button');
    assert.equal(await page.$$eval('.run-card', (nodes) => nodes.length), 0);
    assert.ok((await sent(page)).some((m) => m.type === 'clear'));
    assert.ok(await page.isVisible('.empty-state'));

    await post(page, { type: 'runStarted', run: runInfo('a3') });
    await page.waitForSelector(card('a3'));
    await post(page, { type: 'clear' });
    await page.waitForFunction(() => document.querySelectorAll('.run-card').length === 0);
  });

  test('a new run scrolls into view unless the person scrolled away, and lands above an open tool form', async () => {
    const { page, errors } = await openPage();
    const lines = Array.from({ length: 30 }, (_, i) => `row ${i}`).join('\n');
    await post(
      page,
      ...Array.from({ length: 8 }, (_, i) => [
        { type: 'runStarted', run: runInfo(`s${i}`) } as const,
        { type: 'runFinished', runId: `s${i}`, result: result(`s${i}`, { stdout: lines }) } as const,
      ]).flat(),
    );
    await page.waitForSelector(`${card('s7')}[data-status="ok"]`);
    const top = (selector: string) => page.$eval(selector, (node) => Math.round(node.getBoundingClientRect().top));
    const inView = (selector: string) =>
      page.$eval(
        selector,
        (node) => node.getBoundingClientRect().top >= 0 && node.getBoundingClientRect().top < window.innerHeight,
      );

    // Slightly scrolled still counts as following the newest run.
    await page.evaluate(() => window.scrollTo(0, 60));
    await post(page, { type: 'runStarted', run: runInfo('new1') });
    await page.waitForSelector(card('new1'));
    assert.ok(await inView(card('new1')), 'the new run is in view');

    // Scrolled down to read an older run: it stays where it is.
    await page.evaluate(() => window.scrollTo(0, 1500));
    const reading = await page.evaluate(() =>
      document.elementFromPoint(400, 450)!.closest('.run-card')!.getAttribute('data-run-id')!,
    );
    const before = await top(card(reading));
    await post(page, { type: 'runStarted', run: runInfo('new2') });
    await page.waitForSelector(card('new2'));
    assert.ok(Math.abs((await top(card(reading))) - before) <= 1, 'the run being read did not move');
    assert.ok(!(await inView(card('new2'))));
    // ... and a marker says a newer result is there, floating in view, and takes them to it.
    await page.waitForSelector('.new-results:not([hidden])');
    assert.equal((await page.textContent('.new-results'))?.trim(), '1 new result');
    await post(page, { type: 'runStarted', run: runInfo('new2b') });
    await page.waitForFunction(() => document.querySelector('.new-results')?.textContent?.trim() === '2 new results');
    const marker = await page.$eval('.new-results', (node) => node.getBoundingClientRect().top);
    assert.ok(marker >= 0 && marker < 100, `the marker is at the top of the view (${marker})`);
    await page.click('.new-results');
    await page.waitForFunction(() => window.scrollY === 0);
    assert.ok(await inView(card('new2b')), 'the marker took the person to the newest run');
    assert.ok(await page.isHidden('.new-results'));
    // After a reload the page starts at the newest run, whatever scroll position was restored.
    const restored = Array.from({ length: 8 }, (_, i) => ({
      run: runInfo(`h${i}`),
      stdout: lines,
      stderr: '',
      displays: [],
      result: result(`h${i}`, { stdout: lines }),
    }));
    await post(page, { type: 'history', runs: restored });
    // The page handles a message after this one is posted: wait for the cards it makes before scrolling.
    await page.waitForSelector(`${card('h0')}[data-status="ok"]`);
    await page.evaluate(() => window.scrollTo(0, 1500));
    assert.ok((await page.evaluate(() => window.scrollY)) > 1000, 'the page is long enough to be scrolled');
    await post(page, { type: 'history', runs: restored });
    await page.waitForFunction(() => window.scrollY === 0);

    // A tool form opened earlier is part of the timeline: newer runs come above it, in view.
    await page.evaluate(() => window.scrollTo(0, 0));
    await post(page, { type: 'toolForm', tool: { name: 'ping', description: '', inputSchema: { type: 'object' } } });
    await page.waitForSelector('.tool-panel:not([hidden])');
    await post(page, { type: 'runStarted', run: runInfo('new3') });
    await page.waitForSelector(card('new3'));
    assert.ok((await top(card('new3'))) < (await top('.tool-panel')), 'the newer run is above the form');
    assert.ok(await inView(card('new3')));
    assert.deepEqual(errors, []);
  });

  test('cards and the open tool form survive a reload through getState/setState', async () => {
    const { page } = await openPage();
    await post(
      page,
      { type: 'runStarted', run: runInfo('p1', 'print("kept")') },
      { type: 'runOutput', runId: 'p1', stream: 'stdout', text: 'kept\n' },
      { type: 'runFinished', runId: 'p1', result: result('p1', { stdout: 'kept\n' }) },
      { type: 'toolForm', tool: { name: 'ping', description: '', inputSchema: { type: 'object' } } },
    );
    await page.waitForSelector(`${card('p1')}[data-status="ok"]`);
    await page.waitForFunction(() => sessionStorage.getItem('vscode-state')?.includes('"ping"'));
    await page.reload();
    await page.waitForSelector(`${card('p1')}[data-status="ok"]`);
    assert.equal(await page.textContent(`${card('p1')} .stdout pre`), 'kept\n');
    assert.equal(await page.textContent('.tool-name'), 'ping');
    assert.equal(await page.textContent('.tool-form .note'), 'This tool takes no arguments.');
  });
});

// ---- screenshots ---------------------------------------------------------------------------------------

/** A representative session: a running stream, a figure, a table, an error and a plain run. */
async function populate(page: Page): Promise<void> {
  startedAt = Date.now() - 60_000;
  await post(
    page,
    {
      type: 'runStarted',
      run: runInfo('shot-ok', 'import sys\nprint(sys.version.split()[0])\nprint(sum(range(1_000_000)))', {
        origin: 'command',
      }),
    },
    {
      type: 'runFinished',
      runId: 'shot-ok',
      result: result('shot-ok', { stdout: '3.12.7\n499999500000\n', duration_ms: 184 }),
    },
    {
      type: 'runStarted',
      run: runInfo('shot-err', 'rates = {"EUR": 1.0, "USD": 1.08}\nprint(rates["GBP"])', {
        origin: 'mcp',
        backend: 'python',
      }),
    },
    {
      type: 'runFinished',
      runId: 'shot-err',
      result: result('shot-err', {
        success: false,
        backend: 'python',
        duration_ms: 12,
        stderr: 'warning: rates are from yesterday\n',
        diagnostics: {
          error_type: 'RuntimeError',
          message: "KeyError: 'GBP'",
          traceback:
            'Traceback (most recent call last):\n  File "<cell 4>", line 2, in <module>\n    print(rates["GBP"])\n          ~~~~~^^^^^^^\nKeyError: \'GBP\'\n',
          hints: ['Use rates.get(code) and handle a missing currency.'],
        },
      }),
    },
    {
      type: 'runStarted',
      run: runInfo('shot-table', 'import pandas as pd\ndf = pd.read_csv("weather.csv")\ndf.head(4)', {
        origin: 'explorer',
        session: 'analysis',
      }),
    },
    { type: 'runDisplay', runId: 'shot-table', display: { mime: 'text/html', data: DATAFRAME_HTML } },
    {
      type: 'runFinished',
      runId: 'shot-table',
      result: result('shot-table', { session: 'analysis', duration_ms: 2310 }),
    },
    {
      type: 'runStarted',
      run: runInfo(
        'shot-plot',
        'import matplotlib.pyplot as plt\nplt.plot(days, anomaly)\nplt.title("Daily temperature anomaly")\nplt.show()',
        { origin: 'mcp', session: 'analysis' },
      ),
    },
    { type: 'runOutput', runId: 'shot-plot', stream: 'stdout', text: 'loaded 40 days of readings\n' },
    { type: 'runDisplay', runId: 'shot-plot', display: { mime: 'image/svg+xml', data: CHART_SVG, title: 'Figure 1' } },
    {
      type: 'runFinished',
      runId: 'shot-plot',
      result: result('shot-plot', { session: 'analysis', stdout: 'loaded 40 days of readings\n', duration_ms: 1562 }),
    },
    {
      type: 'runStarted',
      run: runInfo(
        'shot-live',
        'for epoch in range(5):\n    loss = train(model, epoch)\n    print(f"epoch {epoch}: loss={loss:.3f}")',
        { origin: 'command', backend: 'python', startedAt: Date.now() - 2_400 },
      ),
    },
    { type: 'runOutput', runId: 'shot-live', stream: 'stdout', text: 'epoch 0: loss=0.912\nepoch 1: loss=0.644\n' },
    { type: 'runOutput', runId: 'shot-live', stream: 'stdout', text: 'epoch 2: loss=0.481\n' },
  );
  await page.waitForFunction(() =>
    Array.from(document.querySelectorAll('.display img')).every((img) => (img as HTMLImageElement).complete),
  );
  await waitForText(page, `${card('shot-live')} .stdout`, 'epoch 2');
  await page.waitForFunction(() => document.fonts.status === 'loaded');
}

describe('screenshots', () => {
  for (const [name, theme, width] of [
    ['dark', 'dark', 760],
    ['light', 'light', 760],
    ['narrow', 'dark', 340],
  ] as const) {
    test(`${name} (${theme} theme, ${width}px wide)`, async () => {
      const { page, errors } = await openPage(theme, width);
      await populate(page);
      // Let the frame documents lay out before the picture is taken.
      const frame = await (await page.$('iframe.html-frame'))!.contentFrame();
      await frame!.waitForSelector('table');
      // A viewport as tall as the page: Chromium's full-page capture leaves frames below the fold unpainted.
      await page.setViewportSize({ width, height: await page.evaluate(() => document.documentElement.scrollHeight) });
      await page.screenshot({ path: path.join(outDir, `webview-${name}.png`), animations: 'disabled' });
      assert.deepEqual(errors, []);
    });
  }
});
