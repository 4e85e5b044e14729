import type { CallToolResult } from '@modelcontextprotocol/client';
import * as vscode from 'vscode';
import { type ProviderStatus, type ToolProvider, type ToolSpec, errorText } from '../engine/index';

/** The bridge's name for VS Code's own tools: `tools.vscode.<tool>(...)` in Python. */
export const VSCODE_PROVIDER = 'vscode';

/** Tools that work only inside a chat session: they end it, plan it, or ask its person (VS Code's names for them). */
const CHAT_SESSION_TOOLS = new Set([
  'inline_chat_exit',
  'task_complete',
  'runSubagent',
  'vscode_askQuestions',
  'vscode_reviewPlan',
  'manage_todo_list',
  'setup_tools_createNewWorkspace',
]);

/**
 * VS Code's internal tools, which its chat uses for itself (`vscode_editFile_internal`, the confirmation prompts,
 * the session tools above): nothing Python could call to any purpose, so neither listed nor callable.
 */
export function isInternalTool(name: string): boolean {
  return name.endsWith('_internal') || /confirmation/i.test(name) || CHAT_SESSION_TOOLS.has(name);
}

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

  /** VS Code's tools Python may call: neither ours nor VS Code's internal ones. */
  private callable(): vscode.LanguageModelToolInformation[] {
    return vscode.lm.tools.filter((t) => !this.isOwnTool(t.name) && !isInternalTool(t.name));
  }

  async listTools(): Promise<ToolSpec[]> {
    return this.callable().map((t) => ({
      server: VSCODE_PROVIDER,
      name: t.name,
      description: t.description,
      inputSchema: (t.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} },
    }));
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    if (this.isOwnTool(name))
      return {
        isError: true,
        content: [{ type: 'text', text: `${name} is this extension's own tool; call it directly` }],
      };
    if (isInternalTool(name))
      return {
        isError: true,
        content: [{ type: 'text', text: `${name} is internal to VS Code's chat and cannot be called from Python` }],
      };
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
    return { name: this.name, state: 'connected', error: this.lastError, toolCount: this.callable().length };
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
