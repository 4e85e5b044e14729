// Step 6: the person's layout is kept, and what a run shows is in order and usable (issue 21 items 2, 4, 5, 6, 8).
import { Buffer } from 'node:buffer';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { poll } from './checks.mjs';
import { REPORT_FILE } from './workspace.mjs';

export async function layoutAndResults({
  page,
  check,
  workspace,
  runButton,
  statusItem,
  screenshot,
  openFile,
  resultsPane,
  resultCards,
  newestCard,
}) {
  check(`Quick Open opens ${REPORT_FILE}`, await openFile(REPORT_FILE));
  const cardsBefore = (await resultCards()).length;
  // The person works in the Explorer; a run must leave the side bar there.
  await page.keyboard.press('Control+Shift+E');
  const explorerView = page.locator('.part.sidebar [id="workbench.view.explorer"]');
  check('Ctrl+Shift+E shows the Explorer in the side bar', await poll(() => explorerView.isVisible(), 10_000));
  await runButton.click();
  const told = await poll(async () => {
    const text = (await statusItem.textContent()) ?? '';
    return /1 new result/.test(text) ? text : undefined;
  }, 90_000);
  check(
    'the status bar item says "1 new result" once the run is done',
    told,
    told?.trim() ?? (await statusItem.textContent().catch(() => ''))?.trim(),
  );
  check('the side bar still shows the Explorer', await explorerView.isVisible());
  check(
    'the Output panel did not open for the run',
    !(await page
      .locator('.part.panel .output-view')
      .isVisible()
      .catch(() => false)),
  );
  const badge = page
    .locator('.part.activitybar .action-item', { has: page.locator('.action-label[aria-label^="Code Mode"]') })
    .locator('.badge-content');
  const badgeText = await poll(
    async () =>
      (await badge
        .first()
        .isVisible()
        .catch(() => false))
        ? (await badge.first().textContent())?.trim()
        : undefined,
    10_000,
  );
  check('a badge on the Code Mode icon says a result is there', badgeText === '1', `badge: ${badgeText ?? 'none'}`);
  await screenshot('explorer-kept');

  // Seeing the results clears the badge and the status bar's note.
  // The item, not its label: with a badge the label's box is covered by the badge.
  await page
    .locator('.part.activitybar .action-item', { has: page.locator('.action-label[aria-label^="Code Mode"]') })
    .first()
    .click({ timeout: 10_000 });
  check(
    'the Code Mode icon shows the Results view',
    await poll(() => resultsPane().locator('.pane-body').isVisible(), 15_000),
  );
  const cleared = await poll(
    async () =>
      !(await badge
        .first()
        .isVisible()
        .catch(() => false)) && !/new result/.test((await statusItem.textContent()) ?? ''),
    10_000,
  );
  check('seen: the badge and "new result" are gone', cleared);

  // Program order, and no attached data file (items 5 and 8).
  const found = await poll(async () => {
    const cards = await resultCards();
    return cards.length > cardsBefore && cards[0].status === 'ok' ? await newestCard() : undefined;
  }, 30_000);
  const order = found
    ? await found.card
        .locator('.outputs > *')
        .evaluateAll((nodes) =>
          nodes.map((n) => (n.matches('.stream') ? n.textContent.trim() : `[${n.getAttribute('data-mime')}]`)),
        )
    : [];
  check(
    'the card shows the output in program order: text, table, text, figure',
    JSON.stringify(order) === JSON.stringify(['read from data.csv', '[text/html]', 'done', '[image/png]']),
    order.join(' | ') || 'no card',
  );
  check(
    "the person's run attaches no data.csv it only names",
    found &&
      !(await found.card.locator('.display[data-mime="text/csv"]').count()) &&
      !/Lima/.test((await found.card.textContent()) ?? ''),
  );

  // The figure (item 6): click to enlarge, Escape to close, Save writes the PNG where the person says.
  if (found) {
    const figure = found.card.locator('.display[data-mime="image/png"]');
    await figure.locator('img').click();
    const enlarged = await poll(() => found.frame.locator('dialog.lightbox[open] img').isVisible(), 10_000);
    await screenshot('figure-enlarged');
    check('a click on the figure enlarges it', enlarged);
    await page.keyboard.press('Escape');
    check(
      'Escape closes the enlarged figure',
      await poll(async () => (await found.frame.locator('dialog.lightbox').count()) === 0, 10_000),
    );
    await figure.hover();
    await figure.locator('.save').click();
    // code-server's save dialog is the simple one: a path in a quick input, accepted with Enter.
    const dialog = page.locator('.quick-input-widget input.input');
    const proposed = await poll(
      async () => ((await dialog.isVisible()) ? await dialog.inputValue() : undefined),
      10_000,
    );
    if (proposed) await page.keyboard.press('Enter');
    const saved = path.join(workspace, 'gradient.png');
    const written = await poll(
      () =>
        fs.existsSync(saved) && fs.readFileSync(saved).subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex')),
      15_000,
    );
    check(
      'Save on the figure writes gradient.png (a PNG) where the dialog says',
      written,
      `dialog: ${proposed ?? 'none'}`,
    );
  }

  // Reading an older card when a new run arrives (item 2): a marker leads to it.
  const frame = (await newestCard())?.frame;
  if (frame) {
    await frame.evaluate(() => globalThis.scrollTo(0, globalThis.document.documentElement.scrollHeight));
    const scrolled = await frame.evaluate(() => globalThis.scrollY);
    await page.locator('.part.editor .editor-instance .monaco-editor .view-lines').first().click();
    await runButton.click();
    const marker = frame.locator('.new-results:not([hidden])');
    const shown = await poll(() => marker.isVisible(), 60_000);
    check(
      'reading an older card, a new run shows the "new result" marker',
      scrolled > 0 && shown,
      `scrolled to ${scrolled}`,
    );
    await screenshot('new-result-marker');
    if (shown) await marker.click();
    const atNewest = await poll(
      async () =>
        (await frame.evaluate(() => globalThis.scrollY)) === 0 && (await frame.locator('.new-results').isHidden()),
      10_000,
    );
    check('the marker takes the person to the newest run', atNewest);
  }
}
