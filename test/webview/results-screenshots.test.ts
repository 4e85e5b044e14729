// Screenshots of the results page in Chromium (test-output/webview-*.png): a representative session in the dark
// and light themes and in a narrow view, with no page error.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { CHART_SVG, DATAFRAME_HTML, result, runInfo, startRunsAfter } from './resultsFixtures';
import { card, openPage, outDir, post, useResultsPage, waitForText } from './resultsPage';

useResultsPage();

/** A representative session: a running stream, a figure, a table, an error and a plain run. */
async function populate(page: Page): Promise<void> {
  startRunsAfter(Date.now() - 60_000);
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
