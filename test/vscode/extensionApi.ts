// What the real-VS-Code suites share: the extension's API, and waiting for a state without a fixed sleep.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { CodeModeApi } from '../../src/extension';
import type { CodeModeTestApi } from '../../src/vscode/testApi';

export const EXTENSION_ID = 'code-mode.code-mode-python';

/** The extension's insides, which it exports only while extension tests run (ExtensionMode.Test). */
export async function api(): Promise<CodeModeTestApi> {
  const extension = vscode.extensions.getExtension<CodeModeApi>(EXTENSION_ID);
  assert.ok(extension, 'extension is installed');
  const exported = await extension.activate();
  assert.ok(exported.testing, 'the extension exports its test API while extension tests run');
  return exported.testing;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Accepts the selected item of the quick pick `shown` opens, once its items are there (the workbench fills a quick
 * pick after showing it; accepting before then does nothing), and gives what `shown` settles with.
 */
export async function acceptWhenShown<T>(shown: Thenable<T>): Promise<T> {
  let settled: { value: T } | undefined;
  const watched = Promise.resolve(shown).then((value) => (settled = { value }));
  await until('the quick pick to take its selection', async () => {
    if (!settled) await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    return settled;
  });
  return (await watched).value;
}

/** Polls `probe` until it gives a value; the bound is a guard against a hang, not a timing assertion. */
export async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
