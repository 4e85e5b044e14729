// What the real-VS-Code suites share: the extension's API, and waiting for a state without a fixed sleep.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { CodeModeApi } from '../../src/extension';

export const EXTENSION_ID = 'code-mode.code-mode-python';

export async function api(): Promise<CodeModeApi> {
  const extension = vscode.extensions.getExtension<CodeModeApi>(EXTENSION_ID);
  assert.ok(extension, 'extension is installed');
  return extension.activate();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` until it gives a value; the bound is a guard against a hang, not a timing assertion. */
export async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
