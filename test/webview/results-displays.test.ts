// Displays on a run's card in Chromium: images (SVG only ever as an image), the enlarged figure with Save and
// Copy, HTML tables in sandboxed frames with their styles, and a real run's PNGs from the workspace interpreter.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createEngine } from '../../src/engine/index';
import type { RunEvent } from '../../src/engine/types';
import { testStorageDir } from '../support/mcp';
import { checkPng, PYTHON_PNG_ENCODER } from '../support/pythonPng';
import { messageForRunEvent, parsePageMessage } from '../../src/webview/protocol';
import { CHART_SVG, DATAFRAME_HTML, gradientPng, result, runInfo } from './resultsFixtures';
import { card, openPage, outDir, pageOrigin, post, sent, useResultsPage, waitForText } from './resultsPage';

useResultsPage();

describe('displays in Chromium', () => {
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
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: pageOrigin() });
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
});
