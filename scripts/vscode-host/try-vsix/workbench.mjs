// What a person sees and does in the workbench: the palette, Quick Open, the Tool Explorer's tree, the Results
// view's cards, the Output view, the editor, the workspace settings; and a screenshot of each step.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { poll } from './checks.mjs';

/** Rows under a top-level section (until the next level-1 row). */
export function sectionChildren(rows, section) {
  const i = rows.findIndex((r) => r.level === 1 && r.label === section);
  if (i < 0) return [];
  const out = [];
  for (const r of rows.slice(i + 1)) {
    if (r.level === 1) break;
    out.push(r);
  }
  return out;
}

/** The workbench in `page`, as a person uses it; `workspace` is the folder it has open. */
export function workbenchOf({ page, outDir, say, workspace }) {
  /** The ▶ "Code Mode: Run File" in the active editor's title. */
  const runButton = page.locator('.part.editor .editor-actions [aria-label^="Code Mode: Run File"]').first();
  /** The status bar item of your runs. */
  const statusItem = page.locator('.part.statusbar .statusbar-item', { hasText: 'Code Mode:' }).first();

  let shot = 0;
  /** A screenshot of the whole page, numbered in the order taken, in outDir; its file. */
  async function screenshot(name) {
    const file = path.join(outDir, `${String(++shot).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path: file }).catch((e) => say(`screenshot ${name} failed: ${e.message}`));
    return file;
  }

  /** F1, type a command's title, Enter on the entry with exactly that title. */
  async function runFromPalette(title) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input.input');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await input.fill(`>${title}`);
    const entry = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    await entry.waitFor({ state: 'visible', timeout: 10_000 });
    const label = (await entry.getAttribute('aria-label')) ?? '';
    if (!label.startsWith(title)) throw new Error(`the palette's first match is "${label}", not "${title}"`);
    await page.keyboard.press('Enter');
    await input.waitFor({ state: 'hidden', timeout: 10_000 });
  }

  /** The Results view's pane in the Code Mode side bar. */
  const resultsPane = () =>
    page.locator('.part.sidebar .pane', { has: page.locator('.pane-header', { hasText: /^\s*Results/ }) });

  /** The Tool Explorer's pane: header, and the tree (or message) in its body. */
  const explorerPane = () =>
    page.locator('.pane', { has: page.locator('.pane-header', { hasText: /tool explorer/i }) });

  /** Visible tree rows of the Tool Explorer: [{ label, level, expanded }] from their ARIA attributes. */
  async function treeRows() {
    return explorerPane()
      .locator('.monaco-list-row')
      .evaluateAll((rows) =>
        rows.map((r) => ({
          label: r.querySelector('.label-name')?.textContent?.trim() ?? r.getAttribute('aria-label') ?? '',
          description: r.querySelector('.label-description')?.textContent?.trim() ?? '',
          level: Number(r.getAttribute('aria-level')),
          expanded: r.getAttribute('aria-expanded'),
        })),
      );
  }

  /** The results webview's inner frame (the one whose document has the results page). */
  async function resultsFrames() {
    const frames = [];
    for (const frame of page.frames()) {
      if (frame === page.mainFrame()) continue;
      const has = await frame
        .locator('.run-card, #runs, [data-run-id]')
        .count()
        .catch(() => 0);
      if (has) frames.push(frame);
    }
    return frames;
  }

  /** The cards of the results webview (the Results view): [{ status, backend, text }]. */
  async function resultCards() {
    const cards = [];
    for (const frame of await resultsFrames()) {
      const found = await frame
        .locator('.run-card')
        .evaluateAll((els) =>
          els.map((e) => ({
            id: e.getAttribute('data-run-id'),
            status: e.querySelector('.badge-label')?.textContent?.trim() ?? '',
            backend: e.querySelector('.meta-item.backend')?.textContent?.trim() ?? '',
            text: e.textContent ?? '',
          })),
        )
        .catch(() => []);
      cards.push(...found);
    }
    // The panel and the sidebar view render the same history: one entry per run.
    return [...new Map(cards.map((c) => [c.id, c])).values()];
  }

  /** The text of the output channel shown in the Output view (the visible lines). */
  async function outputText() {
    return page
      .locator('.part.panel .output-view .view-lines, .part.panel [id="workbench.panel.output"] .view-lines')
      .first()
      .evaluate((el) =>
        [...el.querySelectorAll('.view-line')]
          .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
          .map((l) => l.textContent.replace(/\u00a0/g, ' '))
          .join('\n'),
      );
  }

  /** Puts the cursor at the end of the editor and types a new line as text (no auto-closing brackets). */
  async function typeLineAtEnd(text) {
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText(text);
  }

  async function selectLastLine() {
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Shift+Home');
  }

  /** Quick Open on `file`; true once it is the active editor. */
  async function openFile(file) {
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input.input');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await input.fill(file);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: file }).first().waitFor({ timeout: 10_000 });
    await page.keyboard.press('Enter');
    return poll(() => page.locator('.part.editor .tab.active', { hasText: file }).count(), 15_000);
  }

  /** The card of the newest run in the Results view's page, and that page's frame. */
  async function newestCard() {
    for (const frame of await resultsFrames()) {
      const card = frame.locator('.run-card').first();
      if (await card.count()) return { frame, card };
    }
    return undefined;
  }

  /**
   * Replaces the workspace settings as a person would: Preferences: Open Workspace Settings (JSON), the new text,
   * save, close. The workspace's, because the interpreter and the Jupyter Server are machine-overridable settings,
   * which VS Code does not take from the user settings of a remote window (code-server's is one).
   */
  async function editWorkspaceSettings(settings) {
    const file = path.join(workspace, '.vscode', 'settings.json');
    // The palette's key goes to the workbench from the editor (focus may be in a view's webview).
    await page.locator('.part.editor .editor-instance .monaco-editor .view-lines').first().click();
    await runFromPalette('Preferences: Open Workspace Settings (JSON)');
    // It opens focused (in a modal editor in recent VS Code), the cursor in it.
    await poll(
      () =>
        fs.existsSync(file) &&
        page.locator('.modal-editor-part .monaco-editor.focused, .part.editor .monaco-editor.focused').count(),
      15_000,
    );
    await page.keyboard.press('Control+A');
    // One line (the editor indents after each typed newline); what the editor closed by itself (quotes, braces)
    // waits after the cursor, and goes.
    await page.keyboard.insertText(JSON.stringify(settings));
    await page.keyboard.press('Shift+Control+End');
    await page.keyboard.press('Delete');
    await page.keyboard.press('Control+S');
    const saved = await poll(
      () => JSON.stringify(JSON.parse(fs.readFileSync(file, 'utf8'))) === JSON.stringify(settings),
      10_000,
    );
    if (!saved)
      throw new Error(
        `the workspace settings were not saved: ${fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : 'no file'}`,
      );
    // Escape closes the modal editor (View: Close Modal Editor); a tab, View: Close Editor. On a busy machine an
    // Escape can arrive before the editor has the focus back from saving: then its title bar's close button.
    const modal = page.locator('.modal-editor-part');
    const modalOpen = () => modal.isVisible().catch(() => false);
    if (await modalOpen()) await page.keyboard.press('Escape');
    else await runFromPalette('View: Close Editor');
    if (!(await poll(async () => !(await modalOpen()), 5_000)))
      await modal
        .locator('.codicon-close, [aria-label^="Close"]')
        .first()
        .click()
        .catch(() => undefined);
    if (!(await poll(async () => !(await modalOpen()), 10_000))) throw new Error('the settings editor did not close');
  }

  /** Opens a workspace file with Quick Open and clicks the ▶ in the editor title. */
  async function runFileFromTitle(file) {
    await openFile(file);
    await runButton.click();
  }

  return {
    page,
    runButton,
    statusItem,
    screenshot,
    runFromPalette,
    resultsPane,
    explorerPane,
    treeRows,
    resultsFrames,
    resultCards,
    newestCard,
    outputText,
    typeLineAtEnd,
    selectLastLine,
    openFile,
    runFileFromTitle,
    editWorkspaceSettings,
  };
}
