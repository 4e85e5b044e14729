// What the feature suites share beyond extensionApi.ts: whether the runner opened the workspace untrusted, a
// Python editor to run from, and the provider's MCP tools as VS Code's language model API offers them.
import * as vscode from 'vscode';
import { sleep, until } from './extensionApi';

/** run.mjs --no-trust opened the workspace in Restricted Mode: the suites for a trusted one skip, and the other way round. */
export const untrusted = process.env.CODE_MODE_TEST_EXPECT_TRUSTED === '0';

export async function openPython(content: string): Promise<vscode.TextEditor> {
  const document = await vscode.workspace.openTextDocument({ language: 'python', content });
  return vscode.window.showTextDocument(document);
}

/** Starts the provider's MCP server the way the reference recipe does and waits for its tools. */
export async function codeModeLmTools(): Promise<readonly vscode.LanguageModelToolInformation[]> {
  return until(
    'Code Mode MCP tools in vscode.lm.tools',
    async () => {
      await Promise.race([
        vscode.commands.executeCommand('workbench.mcp.startServer', '*', {
          waitForLiveTools: true,
          autoTrustChanges: true,
        }),
        sleep(5000),
      ]);
      const tools = vscode.lm.tools.filter((t) => /run_python/.test(t.name));
      return tools.length ? tools : undefined;
    },
    90_000,
  );
}

export function toolText(result: vscode.LanguageModelToolResult): string {
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
}
