// A run's card in Chromium: what a finished run shows, a streaming run updated live and interrupted, output in
// program order and as a terminal shows it, labels, the cap on a flood of output, and the tool calls it made.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { gradientPng, result, runInfo } from './resultsFixtures';
import { card, openPage, post, sent, useResultsPage, waitForText } from './resultsPage';

useResultsPage();

describe("a run's card in Chromium", () => {
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
});
