import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as vscode from 'vscode';
import type { ProviderStatus, ToolProvider, ToolSpec } from '../engine/codemode/toolProvider';
import { errorText } from '../engine/errorText';

/** The bridge's name for VS Code's own tools: `tools.vscode.<tool>(...)` in Python. */
export const VSCODE_PROVIDER = 'vscode';

/**
 * VS Code's language-model tools (`vscode.lm.tools`, which include the MCP tools VS Code itself runs) as a
 * code-mode provider, called through `vscode.lm.invokeTool`. Our own tools are left out: Python calling
 * run_python through VS Code would recurse into the engine.
 */
export class VscodeToolsProvider implements ToolProvider {
  readonly name = VSCODE_PROVIDER;
  readonly description = "VS Code's language-model tools, including MCP servers VS Code runs.";
  /** vscode.lm.invokeTool shows VS Code's own confirmation where the tool asks for one: code mode does not ask again. */
  readonly confirmsCalls = true;
  private lastError: string | undefined;

  constructor(private readonly isOwnTool: (name: string) => boolean) {}

  async listTools(): Promise<ToolSpec[]> {
    return vscode.lm.tools
      .filter((t) => !this.isOwnTool(t.name))
      .map((t) => ({
        server: VSCODE_PROVIDER,
        name: t.name,
        description: t.description,
        inputSchema: (t.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} },
      }));
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    if (this.isOwnTool(name)) return { isError: true, content: [{ type: 'text', text: `${name} is this extension's own tool; call it directly` }] };
    try {
      const result = await vscode.lm.invokeTool(name, { input: args, toolInvocationToken: undefined });
      this.lastError = undefined;
      return { content: result.content.map(toContentBlock) };
    } catch (error) {
      this.lastError = errorText(error);
      return { isError: true, content: [{ type: 'text', text: this.lastError }] };
    }
  }

  status(): ProviderStatus {
    return { name: this.name, state: 'connected', error: this.lastError, toolCount: vscode.lm.tools.filter((t) => !this.isOwnTool(t.name)).length };
  }

  async close(): Promise<void> {
    // Nothing to close: VS Code owns the tools.
  }
}

function toContentBlock(part: unknown): CallToolResult['content'][number] {
  if (part instanceof vscode.LanguageModelTextPart) return { type: 'text', text: part.value };
  if (part instanceof vscode.LanguageModelPromptTsxPart) return { type: 'text', text: JSON.stringify(part.value) };
  return { type: 'text', text: typeof part === 'string' ? part : JSON.stringify(part) };
}
