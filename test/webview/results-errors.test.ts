// A failed run's card in Chromium: error type, message, traceback (its file frames as links), notes, hints and
// stderr, all as text; and a traceback in a narrow view, which scrolls rather than wraps.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { result, runInfo } from './resultsFixtures';
import { card, openPage, post, sent, useResultsPage, waitForText } from './resultsPage';

useResultsPage();

describe("a failed run's card in Chromium", () => {
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
});
