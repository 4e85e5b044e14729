import * as vscode from 'vscode';
import {
  isApprovalMode,
  parseToolPatterns,
  type ApprovalPolicy,
  type BridgePolicy,
  type EngineConfig,
  type BackendKind,
  type SettingNames,
} from '../engine/index';
import { DEFAULT_SESSION_IDLE_MINUTES } from '../mcp/index';
import { readBackendSettings, type BackendSettings } from './backends';

export type McpTransport = 'http' | 'stdio';

/** How a person's own runs (commands, the explorer, the results view) differ from agents' runs. */
export interface PersonRunSettings {
  /** Seconds; 0 for no limit. */
  timeoutS: number;
  /** Where Run File and Run Selection run: the file's folder, or the workspace folder that holds it. */
  cwd: 'file' | 'workspace';
  /** Which backend runs them (the workspace interpreter only where the workspace is trusted). */
  backend: 'python' | 'pyodide' | 'jupyter' | 'same-as-agents';
  /** Which session they share: one of their own, one per file, or the agents' default one. */
  session: 'own' | 'per-file' | 'shared-with-agents';
  /** Open the runs output channel for every run, even while the results view shows it. */
  showRunsChannel: boolean;
}

export interface ExtensionSettings {
  engine: EngineConfig;
  /** `{name: {command, args, env} | {type: 'http', url}}`, as in mcp_servers.json. */
  mcpServers: Record<string, unknown>;
  bridgePolicy: BridgePolicy;
  /** Which tool calls from Python ask first (codeMode.tools.approval, autoApprove, approvePersonRuns). */
  approvalPolicy: ApprovalPolicy;
  exposeVscodeTools: boolean;
  pythonPath: string;
  /** Each backend's own settings (backends.ts reads them). */
  backends: BackendSettings;
  personRun: PersonRunSettings;
  mcpTransport: McpTransport;
  /** An MCP session of the loopback endpoint without a request for this long ends (the client starts a new one). */
  mcpHttpSessionIdleMinutes: number;
  /** Keep a spare Pyodide interpreter started ahead of need (codeMode.pyodide.warmSpare; pyodideSpare.ts). */
  pyodideWarmSpare: boolean;
}

const SECTION = 'codeMode';

/** How the engine's messages tell a person in VS Code to change a setting. */
const VSCODE_SETTING_NAMES: SettingNames = {
  timeout: 'setting codeMode.timeoutSeconds',
  wheelhouse: 'setting codeMode.wheelhouse',
  maxSessions: 'setting codeMode.maxSessions',
  jupyterUrl: 'setting codeMode.jupyter.url',
  jupyterKernel: 'setting codeMode.jupyter.kernel',
  pyodideNetwork: 'setting codeMode.pyodide.network',
};

/** The settings as one validated snapshot; VS Code's schema already bounds the numbers. */
export function readSettings(base: EngineConfig): ExtensionSettings {
  const c = vscode.workspace.getConfiguration(SECTION);
  const strings = (key: string) => c.get<string[]>(key, []).filter((s) => typeof s === 'string' && s.trim() !== '');
  return {
    engine: {
      ...base,
      defaultBackend: oneOf<BackendKind>(c.get<string>('defaultBackend', 'pyodide'), ['pyodide', 'python', 'jupyter']),
      timeoutS: c.get<number>('timeoutSeconds', 30),
      settingNames: VSCODE_SETTING_NAMES,
      outputCapBytes: Math.round(c.get<number>('outputCapKB', 64) * 1024),
      autoInstall: c.get<boolean>('pyodide.autoInstall', true),
      wheelhouse: c.get<string>('wheelhouse', '').trim() || undefined,
      maxSessions: c.get<number>('maxSessions', base.maxSessions),
      policy: {
        maxCodeBytes: Math.round(c.get<number>('guardrails.maxCodeKB', 256) * 1024),
        maxCodeLines: c.get<number>('guardrails.maxCodeLines', 0),
        allowImports: strings('guardrails.allowImports'),
        denyImports: strings('guardrails.denyImports'),
        deniedTokens: strings('guardrails.deniedTokens'),
      },
    },
    mcpServers: c.get<Record<string, unknown>>('mcpServers', {}),
    bridgePolicy: { allowServers: strings('tools.allowServers'), allowTools: strings('tools.allowTools') },
    approvalPolicy: readApprovalPolicy(c),
    exposeVscodeTools: c.get<boolean>('tools.vscodeTools', true),
    pythonPath: c.get<string>('pythonPath', '').trim(),
    backends: readBackendSettings(c),
    personRun: {
      timeoutS: Math.max(0, c.get<number>('run.timeoutSeconds', 0)),
      cwd: c.get<string>('run.cwd', 'file') === 'workspace' ? 'workspace' : 'file',
      backend: oneOf(c.get<string>('run.backend', 'python'), [
        'python',
        'pyodide',
        'jupyter',
        'same-as-agents',
      ] as const),
      session: oneOf(c.get<string>('run.session', 'own'), ['own', 'per-file', 'shared-with-agents'] as const),
      showRunsChannel: c.get<boolean>('run.showRunsChannel', false),
    },
    mcpTransport: c.get<McpTransport>('mcp.transport', 'http') === 'stdio' ? 'stdio' : 'http',
    mcpHttpSessionIdleMinutes: c.get<number>('mcp.httpSessionIdleMinutes', DEFAULT_SESSION_IDLE_MINUTES),
    pyodideWarmSpare: c.get<boolean>('pyodide.warmSpare', true),
  };
}

/** The tool-approval settings; a malformed mode is the default "ask", and a malformed rule is left out. */
function readApprovalPolicy(c: vscode.WorkspaceConfiguration): ApprovalPolicy {
  const mode = c.get<string>('tools.approval', 'ask');
  const rules = c.get<unknown[]>('tools.autoApprove', []).filter((rule): rule is string => typeof rule === 'string');
  const autoApprove = rules.flatMap((rule) => {
    const parsed = parseToolPatterns(rule);
    return 'error' in parsed ? [] : parsed;
  });
  return {
    mode: isApprovalMode(mode) ? mode : 'ask',
    autoApprove,
    approvePersonRuns: c.get<boolean>('tools.approvePersonRuns', true),
    names: { mode: 'setting codeMode.tools.approval', autoApprove: 'setting codeMode.tools.autoApprove' },
  };
}

/** Where the results of runs show: the sidebar view (the editor keeps its width), or a panel beside the editor. */
export function resultsLocation(): 'sidebar' | 'beside' {
  return oneOf(vscode.workspace.getConfiguration(SECTION).get<string>('results.location', 'sidebar'), [
    'sidebar',
    'beside',
  ] as const);
}

/** `value` if it is one of `allowed`, else the first of them (the default). */
function oneOf<T extends string>(value: string, allowed: readonly T[]): T {
  return (allowed as readonly string[]).includes(value) ? (value as T) : allowed[0]!;
}

export function onSettingsChange(listener: (event: vscode.ConfigurationChangeEvent) => void): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((event) => {
    if (event.affectsConfiguration(SECTION)) listener(event);
  });
}

export async function updateSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration(SECTION).update(key, value, vscode.ConfigurationTarget.Global);
}
