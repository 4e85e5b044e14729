// The results page as VS Code shows it, in real headless Chromium, for the tests in test/webview/results-*.test.ts:
// the exact document renderResultsHtml produces, served from a local origin standing in for webview.cspSource,
// with VS Code's theme variables, driven with window.postMessage as VS Code does. Needs dist/webview.js
// (`node esbuild.mjs`).
import { after, before } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { makeNonce, renderResultsHtml } from '../../src/vscode/views/resultsHtml';
import type { HostToPageMessage, PageToHostMessage } from '../../src/webview/protocol';

const root = path.resolve(__dirname, '../..');
/** Where screenshots and the PNGs the tests make are kept. */
export const outDir = path.join(root, 'test-output');

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
export type Theme = 'dark' | 'light';
const THEMES: Record<Theme, Record<string, string>> = { dark: DARK_VARS, light: LIGHT_VARS };

// ---- the page harness ------------------------------------------------------------------------------------

let server: http.Server;
let origin = '';

/** The page's origin, standing in for webview.cspSource; set once the page is served. */
export function pageOrigin(): string {
  return origin;
}
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

export async function openPage(theme: Theme = 'dark', width = 820): Promise<Harness> {
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

export async function post(page: Page, ...messages: HostToPageMessage[]): Promise<void> {
  await page.evaluate((list) => {
    for (const message of list) window.postMessage(message, '*');
  }, messages);
}

export async function sent(page: Page): Promise<PageToHostMessage[]> {
  return page.evaluate(() => (window as unknown as { __sent: PageToHostMessage[] }).__sent);
}

/** Waits until `selector`'s text contains `text` (output is written on the next animation frame). */
export async function waitForText(page: Page, selector: string, text: string): Promise<void> {
  await page.waitForFunction(
    ([s, t]) => (document.querySelector(s)?.textContent ?? '').includes(t),
    [selector, text] as const,
    { timeout: 5000 },
  );
}

export function card(runId: string): string {
  return `.run-card[data-run-id="${runId}"]`;
}

/** Serves the page and starts Chromium before the calling file's tests, and stops both after them. */
export function useResultsPage(): void {
  before(async () => {
    assert.ok(
      fs.existsSync(path.join(root, 'dist/webview.js')),
      'dist/webview.js is missing: run `node esbuild.mjs` first',
    );
    fs.mkdirSync(outDir, { recursive: true });
    server = http.createServer(serve);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });

  after(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });
}
