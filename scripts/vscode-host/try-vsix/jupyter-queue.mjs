// Step 7: your runs on a local Jupyter Server from the workspace interpreter, and a run queued behind a slow one.
import * as fs from 'node:fs';
import { poll } from './checks.mjs';
import { goFlag } from './workspace.mjs';

export async function localJupyterAndQueue({
  check,
  workspace,
  statusItem,
  screenshot,
  runFileFromTitle,
  editWorkspaceSettings,
  resultsFrames,
  resultCards,
}) {
  // As a person would set it: the interpreter with jupyter_server and ipykernel, a local server, your runs there.
  await editWorkspaceSettings({
    'codeMode.pythonPath': '/usr/bin/python3',
    'codeMode.jupyter.url': 'local',
    'codeMode.run.backend': 'jupyter',
  });
  check(
    'the status bar follows the setting to Jupyter',
    await poll(async () => /Code Mode: Jupyter/.test((await statusItem.textContent()) ?? ''), 30_000),
  );
  const before = new Set((await resultCards()).map((c) => c.id));
  const newCards = async () => (await resultCards()).filter((c) => !before.has(c.id));
  await runFileFromTitle('slow.py');
  const slow = await poll(async () => (await newCards()).find((c) => c.text.includes('slow started')), 90_000);
  check(
    'the ▶ on slow.py runs it on a local Jupyter Server (it prints while it runs)',
    slow && /jupyter/i.test(slow.backend) && /running/.test(slow.status),
    slow
      ? `${slow.status} ${slow.backend}${/running/.test(slow.status) ? '' : `: ${slow.text.slice(-300)}`}`
      : JSON.stringify((await newCards()).map((c) => `${c.status}: ${c.text.slice(0, 200)}`)),
  );
  await runFileFromTitle('next.py');
  const queued = await poll(async () => (await newCards()).find((c) => c.status === 'queued'), 15_000);
  const [frame] = await resultsFrames();
  const cancel = frame?.locator(`.run-card[data-run-id="${queued?.id}"] .card-button.interrupt`);
  // In a narrow side bar the button shows its icon and says what it does in its tooltip.
  const cancelTitle = queued && (await cancel.getAttribute('title').catch(() => ''));
  check(
    'the ▶ on next.py while slow.py runs shows a queued card at once: "waiting for slow.py", with Cancel',
    queued && queued.text.includes('waiting for slow.py') && /^Cancel/.test(cancelTitle ?? ''),
    queued ? `${queued.text.slice(0, 120)} · button "${cancelTitle}"` : 'no queued card',
  );
  await screenshot('queued-card');
  if (queued) {
    await cancel.click();
    const cancelled = await poll(
      async () => (await newCards()).find((c) => c.id === queued.id && c.status !== 'queued'),
      15_000,
    );
    check(
      "the queued card's Cancel cancels it: it never runs",
      cancelled && /Cancelled/.test(cancelled.status) && /it did not run/.test(cancelled.text),
      cancelled ? `${cancelled.status}` : 'still queued',
    );
  }
  fs.writeFileSync(goFlag(workspace), '');
  const done = await poll(
    async () => (await newCards()).find((c) => c.id === slow?.id && c.status !== 'running'),
    30_000,
  );
  check(
    'slow.py then finishes on the kernel',
    done && /ok/.test(done.status) && done.text.includes('slow done'),
    done ? done.status : 'still running',
  );
  // Back to the walkthrough's settings, so the screenshots that follow show the workspace interpreter.
  await editWorkspaceSettings({});
  await poll(async () => /Code Mode: Python/.test((await statusItem.textContent()) ?? ''), 30_000);
}
