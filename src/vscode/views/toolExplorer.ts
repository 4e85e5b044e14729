import type { Tool } from '@modelcontextprotocol/client';
import * as vscode from 'vscode';
import {
  type RunHistory,
  type RunRecord,
  type CodeFileInfo,
  type CodeFiles,
  type ConfigProblem,
  type ProviderStatus,
  type ToolProvider,
  type ToolSpec,
  type BackendInfo,
  type BackendKind,
  type BackendState,
  errorText,
} from '../../engine/index';
import type { EngineService } from '../services/engineService';
import { UNTRUSTED_REASONS } from '../services/trustService';
import type { ToolName } from '../../mcp/index';
import { VSCODE_PROVIDER } from '../vscodeTools';
import { backendLabel, originLabel, statusLabel } from '../../webview/labels';
import { droppedText } from '../../webview/protocol';

export const EXPLORER_VIEW_ID = 'codeMode.explorer';

type Section = 'backends' | 'tools' | 'vscodeTools' | 'servers' | 'files' | 'runs';

export type ExplorerNode =
  | { kind: 'section'; section: Section }
  | { kind: 'backend'; backend: BackendKind; info: BackendInfo; disabledReason?: string }
  | { kind: 'kernel'; id: string; name: string; state: string; ours: boolean }
  | { kind: 'tool'; tool: Tool }
  | { kind: 'server'; status: ProviderStatus; description?: string }
  | { kind: 'externalTool'; tool: ToolSpec }
  | { kind: 'message'; text: string; tooltip?: string }
  | { kind: 'run'; record: RunRecord }
  | { kind: 'codeFile'; file: CodeFileInfo; path: string };

const SECTION_LABELS: Record<Section, string> = {
  backends: 'Backends',
  tools: 'Tools',
  vscodeTools: "VS Code's Tools",
  servers: 'External Servers',
  files: 'Agent Scripts',
  runs: 'Recent Runs',
};

/** What a section holds, beside its name. */
const SECTION_DESCRIPTIONS: Partial<Record<Section, string>> = {
  tools: 'what agents call',
  vscodeTools: 'tools.vscode in Python',
  files: 'files agents write, then run',
};

const SECTION_TOOLTIPS: Partial<Record<Section, string>> = {
  tools:
    'The MCP tools of this extension, as Copilot agent mode and other MCP clients see them. Select one to call it from a form.',
  vscodeTools:
    "VS Code's own language-model tools (and the MCP servers VS Code runs), which Python code can call as tools.vscode.<tool>() (setting codeMode.tools.vscodeTools). Nothing to configure.",
  servers:
    'MCP servers you configured (mcp_servers.json or .vscode/mcp.json at the workspace root, or the codeMode.mcpServers setting), which Python code can call as tools.<server>.<tool>().',
  files: `Programs agents build over several calls with the ${'code_file' satisfies ToolName} tool and run with ${'run_python' satisfies ToolName}. Open one to read it, or run it yourself.`,
};

const BACKEND_LABELS: Record<BackendKind, string> = {
  pyodide: 'Pyodide (WebAssembly)',
  python: 'Workspace Python',
  jupyter: 'Jupyter kernel',
};

const STATE_LABELS: Record<BackendInfo['state'], string> = {
  'not-loaded': 'not loaded',
  loading: 'loading',
  ready: 'ready',
  busy: 'busy',
  dead: 'stopped',
};

/** Which session's state stands for its backend's: the most alive one. */
const STATE_RANK: Record<BackendState, number> = { busy: 4, loading: 3, ready: 2, dead: 1, 'not-loaded': 0 };

export interface ToolSource {
  listTools(): Promise<Tool[]>;
}

/** External tool providers (the code-mode bridge), listed without connecting to any of them. */
export interface ServerSource {
  providers(): ToolProvider[];
  problems(): ConfigProblem[];
}

/** What the explorer lists, each read when a section is expanded or refreshed. */
export interface ToolExplorerSources {
  engine: Pick<EngineService, 'ifCreated'>;
  /** The workspace interpreter in use, if one was chosen yet. */
  /** The workspace interpreter as a person reads it (path, or the default's path and version). */
  interpreterLabel: () => string;
  history: Pick<RunHistory, 'all'>;
  tools: () => Promise<ToolSource>;
  servers: () => Promise<ServerSource>;
  codeFiles: Pick<CodeFiles, 'list' | 'path'>;
  /** codeMode.jupyter.url ('' when no Jupyter Server is set). */
  jupyterServer: () => string;
  /** codeMode.tools.vscodeTools: whether Python may call VS Code's tools. */
  vscodeToolsOn: () => boolean;
}

/**
 * The sidebar: backends with their state and interpreter, the MCP tools agents see, external servers, and
 * recent runs. Reading it never starts an interpreter.
 */
export class ToolExplorer implements vscode.TreeDataProvider<ExplorerNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<ExplorerNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private refreshTimer: NodeJS.Timeout | undefined;

  constructor(private readonly sources: ToolExplorerSources) {}

  /** Coalesces bursts (a streaming run changes history many times a second). */
  refresh(): void {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      this.changed.fire(undefined);
    }, 100);
  }

  getTreeItem(node: ExplorerNode): vscode.TreeItem {
    switch (node.kind) {
      case 'section': {
        // Tools matter to agents more than to people: folded until someone looks.
        const folded = node.section === 'tools' || node.section === 'vscodeTools';
        const item = new vscode.TreeItem(
          SECTION_LABELS[node.section],
          folded ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.Expanded,
        );
        item.id = `section:${node.section}`;
        item.description = SECTION_DESCRIPTIONS[node.section];
        item.tooltip = SECTION_TOOLTIPS[node.section];
        item.contextValue = `section-${node.section}`;
        return item;
      }
      case 'backend': {
        // The Jupyter Server's kernels are listed under it.
        const expandable =
          node.backend === 'jupyter' && !node.disabledReason
            ? vscode.TreeItemCollapsibleState.Collapsed
            : vscode.TreeItemCollapsibleState.None;
        const item = new vscode.TreeItem(BACKEND_LABELS[node.backend], expandable);
        item.id = `backend:${node.backend}`;
        const server = node.backend === 'jupyter' ? this.sources.jupyterServer() : undefined;
        item.description = `${node.disabledReason ? 'disabled' : STATE_LABELS[node.info.state]}${server ? ` · ${server === 'local' ? 'local server' : server}` : ''}`;
        const details = [
          node.info.pythonVersion && `Python ${node.info.pythonVersion}`,
          node.info.pyodideVersion && `Pyodide ${node.info.pyodideVersion}`,
          node.info.executable && `Interpreter: ${node.info.executable}`,
          node.info.kernel && `Kernel ${node.info.kernel.name} (${node.info.kernel.id}) on ${node.info.kernel.server}`,
          node.disabledReason,
        ].filter(Boolean);
        item.tooltip = details.join('\n') || 'Starts on first use.';
        item.iconPath = new vscode.ThemeIcon(
          node.disabledReason
            ? 'circle-slash'
            : node.info.state === 'busy'
              ? 'sync~spin'
              : node.info.state === 'ready'
                ? 'pass'
                : 'circle-outline',
        );
        item.contextValue = 'backend';
        return item;
      }
      case 'kernel': {
        const item = new vscode.TreeItem(`${node.name} kernel`);
        item.id = `kernel:${node.id}`;
        item.description = `${node.state}${node.ours ? ' · a session of Code Mode' : ''}`;
        item.tooltip = `Kernel ${node.id}`;
        item.iconPath = new vscode.ThemeIcon(
          node.state === 'busy' ? 'sync~spin' : node.state === 'idle' ? 'pass' : 'circle-outline',
        );
        item.contextValue = 'kernel';
        return item;
      }
      case 'tool':
        return invokableItem(
          node,
          `tool:${node.tool.name}`,
          node.tool.name,
          node.tool.description,
          'tools',
          node.tool.title ?? node.tool.annotations?.title,
        );
      case 'server': {
        const { status } = node;
        const item = new vscode.TreeItem(status.name, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `server:${status.name}`;
        item.description = `${status.state}${status.toolCount !== undefined ? ` · ${status.toolCount} tools` : ''}`;
        item.tooltip = [
          node.description,
          status.command,
          status.source && `from ${status.source}`,
          status.error && `Error: ${status.error}`,
          status.stderrTail && `stderr:\n${status.stderrTail}`,
        ]
          .filter(Boolean)
          .join('\n');
        item.iconPath = new vscode.ThemeIcon(
          status.state === 'failed' ? 'error' : status.state === 'connected' ? 'plug' : 'debug-disconnect',
        );
        item.contextValue = 'server';
        return item;
      }
      case 'externalTool':
        return invokableItem(
          node,
          `external:${node.tool.server}:${node.tool.name}`,
          node.tool.name,
          node.tool.description,
          'symbol-method',
        );
      case 'message': {
        const item = new vscode.TreeItem(node.text);
        item.tooltip = node.tooltip;
        item.iconPath = new vscode.ThemeIcon('info');
        return item;
      }
      case 'codeFile': {
        const item = new vscode.TreeItem(node.file.name);
        item.id = `file:${node.file.name}`;
        item.description = `${Math.max(1, Math.round(node.file.size / 1024))} KB`;
        item.tooltip = `${node.path}\nmodified ${new Date(node.file.mtime).toLocaleString()}`;
        item.resourceUri = vscode.Uri.file(node.path);
        item.contextValue = node.file.name.endsWith('.py') ? 'codeFile.python' : 'codeFile';
        item.command = { command: 'vscode.open', title: 'Open', arguments: [vscode.Uri.file(node.path)] };
        return item;
      }
      case 'run': {
        const { run, result } = node.record;
        const firstLine = run.code.split('\n').find((l) => l.trim()) ?? '';
        // A run of yours is known by its file and line; an agent's by its first line of code.
        const where = run.location && `${run.location.file.split(/[\\/]/).pop()}:${run.location.line}`;
        const code = firstLine.trim().slice(0, 60) || '(empty)';
        const item = new vscode.TreeItem(
          where ?? (run.origin === 'explorer' && run.tool ? `${run.tool}: ${code}` : code),
        );
        item.id = `run:${run.runId}`;
        const waiting = !result && run.waitingFor ? `waiting for ${run.waitingFor}` : undefined;
        item.description = `${waiting ?? statusLabel(result)} · ${backendLabel(run.backend)}${result ? ` · ${formatDuration(result.duration_ms)}` : ''}`;
        const dropped = node.record.displaysDropped ? `\n\n${droppedText(node.record.displaysDropped)}` : '';
        item.tooltip = `${run.code.slice(0, 500)}\n\n${originLabel(run)} · session "${run.session}" · ${new Date(run.startedAt).toLocaleString()}${dropped}`;
        item.iconPath = new vscode.ThemeIcon(
          !result ? (waiting ? 'watch' : 'sync~spin') : result.success ? 'pass' : 'error',
        );
        item.contextValue = 'run';
        item.command = { command: 'codeMode.explorer.openRun', title: 'Open Run Result', arguments: [run.runId] };
        return item;
      }
    }
  }

  async getChildren(node?: ExplorerNode): Promise<ExplorerNode[]> {
    if (!node) {
      // VS Code's tools have a section only while Python may call them (codeMode.tools.vscodeTools).
      return (
        [
          'backends',
          'tools',
          ...(this.sources.vscodeToolsOn() ? ['vscodeTools' as const] : []),
          'servers',
          'files',
          'runs',
        ] as Section[]
      ).map((section) => ({ kind: 'section', section }));
    }
    if (node.kind === 'server') return this.serverTools(node.status.name);
    if (node.kind === 'backend' && node.backend === 'jupyter') return this.kernelNodes();
    if (node.kind !== 'section') return [];
    switch (node.section) {
      case 'backends':
        return this.backendNodes();
      case 'tools': {
        const tools = await (await this.sources.tools()).listTools();
        return tools.map((tool) => ({ kind: 'tool', tool }));
      }
      case 'vscodeTools':
        return this.serverTools(VSCODE_PROVIDER);
      case 'servers': {
        const source = await this.sources.servers();
        // VS Code's own tools are no server of yours: they have their own section.
        const nodes: ExplorerNode[] = source
          .providers()
          .filter((p) => p.name !== VSCODE_PROVIDER)
          .map((p) => ({ kind: 'server', status: p.status(), description: p.description }));
        for (const problem of source.problems()) {
          nodes.push({
            kind: 'message',
            text: `${problem.server ?? problem.source}: config problem`,
            tooltip: `${problem.source}: ${problem.message}`,
          });
        }
        return nodes.length
          ? nodes
          : [
              {
                kind: 'message',
                text: 'No external MCP servers configured',
                tooltip:
                  'Add servers in mcp_servers.json or .vscode/mcp.json at the workspace root, or the codeMode.mcpServers setting.',
              },
            ];
      }
      case 'files': {
        const files = await this.sources.codeFiles.list();
        return files.length
          ? files.map((file) => ({ kind: 'codeFile', file, path: this.sources.codeFiles.path(file.name) }))
          : [
              {
                kind: 'message',
                text: 'No agent scripts yet',
                tooltip: `Agents build programs over several calls with ${'code_file' satisfies ToolName}, then run them with ${'run_python' satisfies ToolName}.`,
              },
            ];
      }
      case 'runs': {
        const runs = this.sources.history.all().reverse().slice(0, 20);
        return runs.length
          ? runs.map((record) => ({ kind: 'run', record }))
          : [
              {
                kind: 'message',
                text: 'No runs yet: Ctrl+Alt+Enter runs a line, ▶ runs a file',
                tooltip:
                  'In a Python file, Ctrl+Alt+Enter (Cmd+Alt+Enter on macOS) runs the selection or the current line; ▶ in the editor title runs the whole file. Agents run code through the run_python tool.',
              },
            ];
      }
    }
  }

  /** Expanding a server connects to it to list its tools; a failure shows as a message under it. */
  private async serverTools(name: string): Promise<ExplorerNode[]> {
    const provider = (await this.sources.servers()).providers().find((p) => p.name === name);
    if (!provider) return [];
    try {
      const tools = await provider.listTools();
      return tools.length
        ? tools.map((tool) => ({ kind: 'externalTool', tool }))
        : [{ kind: 'message', text: 'No tools' }];
    } catch (error) {
      return [{ kind: 'message', text: 'Could not connect', tooltip: errorText(error) }];
    } finally {
      this.refresh();
    }
  }

  /** The Jupyter Server's kernels, as the server reports them (asked when the node is expanded). */
  private async kernelNodes(): Promise<ExplorerNode[]> {
    const engine = await this.sources.engine.ifCreated();
    const report = (await engine
      ?.describeBackend('jupyter')
      .catch((error: unknown) => ({ error: errorText(error) }))) as
      { kernels?: { id: string; name: string; state: string }[]; error?: string } | undefined;
    if (!report)
      return [
        {
          kind: 'message',
          text: 'The server starts on first use',
          tooltip: 'Run code on the Jupyter backend to start its first kernel.',
        },
      ];
    if (report.error) return [{ kind: 'message', text: 'Could not reach the server', tooltip: report.error }];
    const ours = new Set(engine?.describeSessions().flatMap((s) => (s.info.kernel ? [s.info.kernel.id] : [])));
    const kernels = report.kernels ?? [];
    return kernels.length
      ? kernels.map((k) => ({ kind: 'kernel', ...k, ours: ours.has(k.id) }))
      : [{ kind: 'message', text: 'No kernels running' }];
  }

  private async backendNodes(): Promise<ExplorerNode[]> {
    const engine = await this.sources.engine.ifCreated();
    const kinds: BackendKind[] = [
      'pyodide',
      'python',
      ...(engine?.backendKinds.includes('jupyter') || this.sources.jupyterServer() ? (['jupyter'] as const) : []),
    ];
    const sessions = engine?.describeSessions() ?? [];
    return kinds.map((backend) => {
      // Your runs and the agents' use different sessions: the backend is as alive as its liveliest one.
      const live = sessions.filter((s) => s.backend === backend).map((s) => s.info);
      const info = live.sort((a, b) => STATE_RANK[b.state] - STATE_RANK[a.state])[0] ?? {
        kind: backend,
        state: 'not-loaded',
      };
      // Before its first start, the python backend still shows which interpreter it will use.
      if (backend === 'python' && !info.executable) info.executable = this.sources.interpreterLabel();
      const disabledReason =
        engine?.disabledReason(backend) ?? (vscode.workspace.isTrusted ? undefined : UNTRUSTED_REASONS[backend]);
      return { kind: 'backend', backend, info, disabledReason };
    });
  }

  dispose(): void {
    clearTimeout(this.refreshTimer);
    this.changed.dispose();
  }
}

function formatDuration(ms: number): string {
  if (ms >= 1000) return `${(ms / 1000).toFixed(1)} s`;
  return `${ms >= 10 ? Math.round(ms) : ms.toFixed(1)} ms`;
}

/** A tool of ours or of an external server: selecting it opens its form in the results view. */
function invokableItem(
  node: ExplorerNode & { kind: 'tool' | 'externalTool' },
  id: string,
  label: string,
  tooltip: string | undefined,
  icon: string,
  description?: string,
): vscode.TreeItem {
  const item = new vscode.TreeItem(label);
  item.id = id;
  item.description = description ?? '';
  item.tooltip = tooltip;
  item.iconPath = new vscode.ThemeIcon(icon);
  item.contextValue = node.kind;
  item.command = { command: 'codeMode.explorer.invokeTool', title: 'Invoke Tool…', arguments: [node] };
  return item;
}
