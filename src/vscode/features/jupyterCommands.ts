import * as vscode from 'vscode';
import { jupyterTokenKey } from '../backends';
import type { EngineService } from '../services/engineService';
import type { JupyterTokens } from '../services/jupyterTokens';
import type { SettingsService } from '../settings';
import { openSetting } from '../openSetting';

export interface JupyterCommandDeps {
  settings: Pick<SettingsService, 'current'>;
  tokens: JupyterTokens;
  engine: Pick<EngineService, 'jupyterTokenChanged'>;
}

/** The Jupyter Server's token: asked in a password box (or given by a caller), kept in secret storage. */
export function registerJupyterCommands({ settings, tokens, engine }: JupyterCommandDeps): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('codeMode.setJupyterToken', async (given?: string): Promise<boolean> => {
      const url = jupyterTokenKey(settings.current.backends);
      if (!url) {
        const open = await vscode.window.showInformationMessage(
          'Code Mode: set codeMode.jupyter.url to your Jupyter Server first (a local server needs no token).',
          'Open Setting',
        );
        if (open) await openSetting('codeMode.jupyter.url');
        return false;
      }
      const token =
        typeof given === 'string'
          ? given
          : await vscode.window.showInputBox({
              title: `Code Mode: token of the Jupyter Server at ${url}`,
              prompt: "Kept in VS Code's secret storage, sent only to this server. Leave empty to remove it.",
              password: true,
              ignoreFocusOut: true,
            });
      if (token === undefined) return false;
      await tokens.set(url, token.trim() || undefined);
      await engine.jupyterTokenChanged();
      void vscode.window.showInformationMessage(
        token.trim() ? `Code Mode: token saved for ${url}.` : `Code Mode: token removed for ${url}.`,
      );
      return true;
    }),
  ];
}
