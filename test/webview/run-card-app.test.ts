// run_python's MCP App in real headless Chromium against the real server: the HTML the built CLI serves for
// run_python's `_meta.ui.resourceUri`, framed by ext-apps' host bridge (appHost.mts), shows a run with a figure
// and a table, and its "Re-run" runs the code again through the bridge. Run after `node esbuild.mjs`.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunResult } from '../../src/engine/types';
import { connectStdio, runPython, type StdioConnection } from '../support/mcp';
import { PYTHON_PNG_ENCODER } from '../support/pythonPng';

const CODE = [
  PYTHON_PNG_ENCODER,
  'class Table:',
  '    def _repr_html_(self): return "<table><tr><th>answer</th></tr><tr><td>42</td></tr></table>"',
  'print("before")',
  'display(make_png(60, 40), title="gradient")',
  'display(Table())',
  'print("after")',
].join('\n');

describe('the run card App in Chromium, through the ext-apps host bridge', () => {
  let conn: StdioConnection;
  let browser: Browser;
  let page: Page;
  let app: FrameLocator;
  let first: RunResult;
  /** The App's HTML as the server serves it. */
  let appHtml: string;
  const relayed: string[] = [];
  /** What the page logs about its Content Security Policy: nothing, if the App loads nothing it may not. */
  const cspComplaints: string[] = [];

  before(async () => {
    conn = await connectStdio(['--backend', 'python']);
    const { tools } = await conn.client.listTools();
    const uri = (tools.find((tool) => tool.name === 'run_python')?._meta?.ui as { resourceUri: string }).resourceUri;
    const [resource] = (await conn.client.readResource({ uri })).contents;
    assert.ok('text' in resource);
    appHtml = resource.text;

    const input = { code: CODE };
    const call = await runPython(conn.client, input);
    assert.equal(call.result.success, true, JSON.stringify(call.result.diagnostics));
    first = call.result;

    const host = await esbuild.build({
      entryPoints: [path.join(__dirname, 'appHost.mts')],
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'iife',
      target: 'es2022',
    });
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspComplaints.push(message.text());
    });
    await page.exposeFunction('callTool', async (params: { name: string; arguments?: Record<string, unknown> }) => {
      relayed.push(params.name);
      return (await conn.client.callTool(params, undefined, { timeout: 120_000 })) as CallToolResult;
    });
    await page.setContent('<!DOCTYPE html><html><body></body></html>');
    await page.addScriptTag({ content: host.outputFiles[0].text });
    await page.evaluate(([html, args, result]) => window.showApp(html, args, result), [
      appHtml,
      input,
      call.raw,
    ] as const);
    app = page.frameLocator('iframe >> nth=0');
  });
  after(async () => {
    await browser?.close();
    await conn?.close();
  });

  test('the run renders: output in program order, the figure decoded with its tools, the table in its frame', async () => {
    const card = app.locator(`article.run-card[data-status="ok"][data-run-id="${first.run_id}"]`);
    await card.waitFor();
    const order = await card
      .locator('.outputs > *')
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-mime') ?? node.textContent?.trim()));
    assert.deepEqual(order, ['before', 'image/png', 'text/html', 'after']);

    const figure = card.locator('figure[data-mime="image/png"]');
    const size = await figure.locator('img').evaluate(async (img: HTMLImageElement) => {
      await img.decode();
      return [img.naturalWidth, img.naturalHeight];
    });
    assert.deepEqual(size, [60, 40]);
    assert.equal(await figure.locator('button.enlarge, button.save').count(), 2);

    const cell = card.frameLocator('iframe.html-frame').locator('td');
    await cell.waitFor();
    assert.equal(await cell.textContent(), '42');
    assert.deepEqual(cspComplaints, []);
  });

  test('Re-run runs the same code again through the bridge and shows the new run', async () => {
    await app.locator(`article.run-card[data-run-id="${first.run_id}"] button.rerun`).click();
    const again = app.locator(`article.run-card[data-status="ok"]:not([data-run-id="${first.run_id}"])`);
    await again.waitFor({ timeout: 120_000 });
    assert.deepEqual(relayed, ['run_python']);
    const runId = await again.getAttribute('data-run-id');
    assert.ok(runId && runId !== first.run_id, String(runId));
    assert.equal(await again.locator('figure[data-mime="image/png"] img').count(), 1);
    assert.equal(await app.locator('article.run-card').count(), 1, 'the new run replaces the old one');
    assert.deepEqual(cspComplaints, []);
  });
  test('a failed run shows its error and traceback', async () => {
    const input = { code: 'def f():\n    return 1 / 0\nf()' };
    const call = await runPython(conn.client, input);
    assert.equal(call.result.success, false);
    await page.evaluate(([html, args, result]) => window.showApp(html, args, result), [
      appHtml,
      input,
      call.raw,
    ] as const);
    const card = page.frameLocator('iframe >> nth=1').locator('article.run-card[data-status="error"]');
    await card.waitFor();
    assert.equal(await card.locator('.badge-label').textContent(), 'ZeroDivisionError');
    assert.match(
      (await card.locator('.error-block .traceback').textContent()) ?? '',
      /line 2, in f[\s\S]*ZeroDivisionError/,
    );
    assert.deepEqual(cspComplaints, []);
  });
});
