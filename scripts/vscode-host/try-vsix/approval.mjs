// Step 8: a tool call that writes, from a run of yours with codeMode.tools.approvePersonRuns off, asks first:
// the question names the server, the tool and its arguments; Allow once lets it through, and the card lists
// the run's tool calls (the write asked and allowed, the read read-only).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../common.mjs';
import { poll } from './checks.mjs';
import { APPROVAL_FILE } from './workspace.mjs';

export async function approvalQuestion({
  page,
  check,
  say,
  userData,
  readme,
  screenshot,
  runFileFromTitle,
  resultsFrames,
  resultCards,
}) {
  // The approval settings are machine-scoped (a workspace's settings cannot weaken them): in a remote window
  // such as code-server's, VS Code reads them from the Machine settings, which "Preferences: Open Remote
  // Settings (JSON)" edits; written here directly.
  fs.mkdirSync(path.join(userData, 'Machine'), { recursive: true });
  fs.writeFileSync(
    path.join(userData, 'Machine', 'settings.json'),
    JSON.stringify({ 'codeMode.tools.approvePersonRuns': false }, null, 2),
  );
  const before = new Set((await resultCards()).map((c) => c.id));
  await runFileFromTitle(APPROVAL_FILE);
  const dialog = page.locator('.monaco-dialog-box');
  const asked = await poll(() => dialog.isVisible(), 90_000);
  const question = asked ? ((await dialog.textContent()) ?? '') : '';
  check(
    'a write from your run (approvePersonRuns off) asks first, naming the server, the tool, its arguments and the run',
    asked &&
      /memory/.test(question) &&
      /create_entities/.test(question) &&
      /Ada/.test(question) &&
      /remember\.py/.test(question),
    question.replace(/\s+/g, ' ').slice(0, 300) || 'no question',
  );
  await screenshot('approval-question');
  if (asked && readme) {
    fs.mkdirSync(path.join(repoRoot, 'media', 'screenshots'), { recursive: true });
    await dialog.screenshot({ path: path.join(repoRoot, 'media', 'screenshots', 'approval.png') });
    say('saved media/screenshots/approval.png');
  }
  if (!asked) return;
  await dialog.locator('.monaco-button', { hasText: 'Allow once' }).first().click();
  const card = await poll(
    async () => (await resultCards()).find((c) => !before.has(c.id) && !/running/.test(c.status)),
    60_000,
  );
  const [frame] = await resultsFrames();
  const calls =
    card && frame
      ? ((await frame
          .locator(`.run-card[data-run-id="${card.id}"] .tool-calls`)
          .textContent()
          .catch(() => '')) ?? '')
      : '';
  check(
    'Allow once lets the write through, and the card lists the calls: the write asked-allowed, the read read-only',
    card &&
      /created Ada/.test(card.text) &&
      /memory\.create_entities/.test(calls) &&
      /asked-allowed/.test(calls) &&
      /memory\.read_graph/.test(calls) &&
      /read-only/.test(calls),
    card ? `${card.status}: ${calls.replace(/\s+/g, ' ')}` : 'no card',
  );
  await screenshot('approval-card');
}
