// Settings for the VS Code edge's unit tests, outside VS Code: a SettingsService over a stand-in workspace.
import type * as vscode from 'vscode';
import { SettingsService } from '../../src/vscode/settings';

/** The settings `values` (keys without the `codeMode.` section) make; changing `values` and re-reading changes them. */
export function settingsWith(values: Record<string, unknown>): SettingsService {
  const get = (key: string, fallback?: unknown) => (key in values ? values[key] : fallback);
  return new SettingsService({
    getConfiguration: () => ({ get }) as vscode.WorkspaceConfiguration,
    onDidChangeConfiguration: () => ({ dispose: () => undefined }),
    updateUserSetting: async () => undefined,
  });
}
