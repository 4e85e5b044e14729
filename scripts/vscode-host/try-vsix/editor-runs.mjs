// Steps 4 and 5: runs from the editor. Step 4: the Python file opened with Quick Open, its ▶ and the status bar
// item; the whole file run from the command palette, its card in the Results view with the layout kept, and the
// output in the runs channel. Step 5: a typed line with Ctrl+Alt+Enter in the same session, a line in the other
// backend, the ▶, the status bar item's menu, and Recent Runs and Backends in the tree.
import { poll } from './checks.mjs';
import { sectionChildren } from './workbench.mjs';
import { PY_FILE } from './workspace.mjs';

export async function editorRuns({
  page,
  check,
  say,
  runButton,
  statusItem,
  screenshot,
  openFile,
  runFromPalette,
  resultsPane,
  resultCards,
  outputText,
  typeLineAtEnd,
  selectLastLine,
  treeRows,
}) {
  // 4. Open the Python file, select all, run it from the command palette.
  check(`Quick Open opens ${PY_FILE} in an editor`, await openFile(PY_FILE));
  const editor = page.locator('.part.editor .editor-instance .monaco-editor').first();
  check('the editor title has the ▶ "Code Mode: Run File"', await poll(() => runButton.isVisible(), 15_000));
  const statusText = await poll(() => statusItem.textContent(), 15_000);
  check(
    'the status bar names the backend of your runs',
    /Code Mode: Python/.test(statusText ?? ''),
    statusText?.trim() || 'no item',
  );
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+A');
  await runFromPalette('Code Mode: Run Selection or Line');
  say('ran "Code Mode: Run Selection or Line" on the whole file; waiting for the result');
  check(
    'the Results view in the side bar opens',
    await poll(() => resultsPane().locator('.pane-body').isVisible(), 30_000),
  );
  let cards = await poll(async () => {
    const c = await resultCards();
    return c.length >= 1 && c[0].status && c[0].status !== 'running' ? c : undefined;
  }, 90_000);
  cards ??= await resultCards();
  check(
    'the Results view shows the run card: ok, workspace Python, with the output',
    cards.length === 1 &&
      /ok/.test(cards[0].status) &&
      /Python/.test(cards[0].backend) &&
      cards[0].text.includes('mean 87.4') &&
      cards[0].text.includes('stdev 5.68'),
    cards.map((c) => `${c.status} ${c.backend}`).join('; ') || 'no cards',
  );
  const groups = await page.locator('.part.editor .editor-group-container').count();
  check(
    `the editor area is not split and ${PY_FILE} stays active`,
    groups === 1 && (await page.locator('.part.editor .tab.active', { hasText: PY_FILE }).count()) === 1,
    `${groups} editor group(s)`,
  );
  check(
    'the Output panel did not open',
    !(await page
      .locator('.part.panel .output-view')
      .isVisible()
      .catch(() => false)),
  );
  await screenshot('first-run');
  await runFromPalette('Code Mode: Show Output');
  const out = await poll(async () => {
    const t = await outputText();
    return t.includes('mean 87.4') ? t : undefined;
  }, 15_000);
  const channel = await page
    .locator('.part.panel .monaco-select-box, .part.panel select')
    .first()
    .evaluate((el) => el.title || el.value || el.textContent)
    .catch(() => '');
  check(
    'Show Output opens the "Code Mode: Runs" channel with the output',
    out && /Code Mode: Runs/.test(channel ?? ''),
    `channel "${channel}", ${out ? 'has "mean 87.4"' : `text: ${JSON.stringify(((await outputText().catch(() => '')) ?? '').slice(0, 200))}`}`,
  );
  await runFromPalette('View: Hide Panel');

  // 5. Two more runs: a typed line with the keybinding (an error), and the other backend.
  await editor.locator('.view-lines').click();
  await typeLineAtEnd('print("best", max(scores), "of", len(scores), scores[5])');
  await page.keyboard.press('Control+Alt+Enter');
  cards = await poll(async () => {
    const c = await resultCards();
    return c.length >= 2 && c.every((x) => x.status && x.status !== 'running') ? c : undefined;
  }, 30_000);
  cards ??= await resultCards();
  const errorCard = cards.find((c) => c.text.includes('scores[5]'));
  check(
    'Ctrl+Alt+Enter runs the current line in the same session (IndexError, "scores" is known)',
    errorCard && /IndexError/.test(errorCard.status + errorCard.text) && !/NameError/.test(errorCard.text),
    errorCard ? errorCard.status : 'no card',
  );

  await page.keyboard.press('Control+End');
  await page.keyboard.press('Enter');
  await page.keyboard.insertText(
    'import platform, sys; print(platform.python_implementation(), sys.version.split()[0], sys.platform)',
  );
  await selectLastLine();
  await runFromPalette('Code Mode: Run Selection in the Other Backend');
  cards = await poll(async () => {
    const c = await resultCards();
    return c.length >= 3 && c.every((x) => x.status && x.status !== 'running') ? c : undefined;
  }, 60_000);
  cards ??= await resultCards();
  const pyCard = cards.find((c) => c.text.includes('import platform'));
  check(
    '"Run Selection in the Other Backend" runs in Pyodide',
    pyCard && /ok/.test(pyCard.status) && /Pyodide/.test(pyCard.backend) && /emscripten/.test(pyCard.text),
    pyCard ? `${pyCard.status} ${pyCard.backend}` : 'no card',
  );

  // The ▶ runs the whole file, as `python scores.py` would (the typed lines included).
  await runButton.click();
  cards = await poll(async () => {
    const c = await resultCards();
    return c.length >= 4 && c.every((x) => x.status && x.status !== 'running') ? c : undefined;
  }, 60_000);
  cards ??= await resultCards();
  const fileCard = cards.find(
    (c) => c.id !== errorCard?.id && c.text.includes('mean 87.4') && /IndexError/.test(c.status + c.text),
  );
  check(
    'the ▶ runs the whole file (it ends in the IndexError typed above)',
    fileCard,
    cards.map((c) => `${c.status} ${c.backend}`).join('; '),
  );

  await statusItem.click();
  const menu = await poll(async () => {
    const labels = await page
      .locator('.quick-input-list .monaco-list-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('aria-label') ?? ''));
    return labels.length >= 4 ? labels : undefined;
  }, 10_000);
  check(
    'the status bar item offers Stop, Restart Session, Choose Backend and Show Results',
    ['Stop', 'Restart Session', 'Choose Backend', 'Show Results'].every((w) => menu?.some((l) => l.includes(w))),
    (menu ?? []).join(', '),
  );
  await page.keyboard.press('Escape');

  // The tree gets the room again while it is read; the Results view opens again for the screenshots.
  await resultsPane()
    .locator('.pane-header[aria-expanded="true"]')
    .click()
    .catch(() => {});
  const runs = await poll(async () => {
    const r = sectionChildren(await treeRows(), 'Recent Runs').filter((x) => !x.label.startsWith('No runs yet'));
    return r.length >= 4 && !r.some((x) => x.description.startsWith('running')) ? r : undefined;
  }, 15_000);
  check(
    'Recent Runs lists the four runs, finished',
    runs,
    (runs ?? sectionChildren(await treeRows(), 'Recent Runs')).map((r) => `${r.label} [${r.description}]`).join('; '),
  );
  const ready = await poll(async () => {
    const b = sectionChildren(await treeRows(), 'Backends');
    return b.filter((x) => x.description === 'ready').length === 2 ? b : undefined;
  }, 15_000);
  check(
    'Backends shows both interpreters ready',
    ready,
    (ready ?? sectionChildren(await treeRows(), 'Backends')).map((b) => `${b.label}: ${b.description}`).join('; '),
  );
  await resultsPane()
    .locator('.pane-header[aria-expanded="false"]')
    .click()
    .catch(() => {});
}
