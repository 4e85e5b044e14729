// The results page's document and its messages: what the host accepts from the page and sends it for each run
// event, the Content Security Policy the document declares, and that Chromium holds the page to it (an injected
// script, a font from another origin).
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { makeNonce, renderResultsHtml } from '../../src/vscode/views/resultsHtml';
import { messageForRunEvent, parsePageMessage } from '../../src/webview/protocol';
import { result, runInfo } from './resultsFixtures';
import { card, openPage, pageOrigin, post, useResultsPage } from './resultsPage';

useResultsPage();

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

describe('the Content Security Policy in Chromium', () => {
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
    const foreign = `${pageOrigin().replace('127.0.0.1', 'localhost')}/dist/codicons/codicon.ttf`;
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
});
