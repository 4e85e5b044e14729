// The results page over time (Chromium): history replacing the cards within the bound, displays let go of past a
// total size, re-run, copy, reveal and clear, where a new run lands in view, and what survives a reload.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { RunCard } from '../../src/webview/protocol';
import { result, runInfo } from './resultsFixtures';
import { card, openPage, pageOrigin, post, sent, useResultsPage, waitForText } from './resultsPage';

useResultsPage();

describe('the runs over time in Chromium', () => {
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

    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: pageOrigin() });
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
