import type * as vscode from 'vscode';

/**
 * Jupyter Server tokens in VS Code's secret storage (the OS keychain where there is one), never in settings.json.
 * Each is kept for its server's URL, so pointing the setting at another server never sends it the old token.
 */
export class JupyterTokens {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  private key(url: string): string {
    return `codeMode.jupyter.token:${url}`;
  }

  async get(url: string | undefined): Promise<string | undefined> {
    return url ? this.secrets.get(this.key(url)) : undefined;
  }

  /** An empty or missing token removes the stored one. */
  async set(url: string, token: string | undefined): Promise<void> {
    if (token) await this.secrets.store(this.key(url), token);
    else await this.secrets.delete(this.key(url));
  }
}
