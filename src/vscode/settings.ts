// This extension's settings, the one module that reads, caches, watches and writes them: the `codeMode` section as
// one validated snapshot, read at start and again on every change, and the port through which `configure` (an
// agent's tool) writes them as VS Code settings.
import type * as vscode from 'vscode';
import {
  defaultEngineConfig,
  isApprovalMode,
  parseToolPatterns,
  settingsOf,
  type ApprovalPolicy,
  type BridgePolicy,
  type EngineConfig,
  type BackendKind,
  type SettingKey,
  type SettingNames,
  type SettingsPort,
} from '../engine/index';
import { DEFAULT_SESSION_IDLE_MINUTES } from '../mcp/index';
import { readBackendSettings, type BackendSettings } from './backends';
import type * as workspaceApis from './common/workspace.apis';
import type { EngineService } from './services/engineService';

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

/** `configure` keys as VS Code settings, so a change made by an agent shows in the Settings editor. */
const CONFIGURE_KEYS: Record<SettingKey, string> = {
  default_backend: 'defaultBackend',
  timeout_s: 'timeoutSeconds',
  output_cap_kb: 'outputCapKB',
  auto_install: 'pyodide.autoInstall',
  python_path: 'pythonPath',
};

/** What of vscode.workspace the settings use. */
export type SettingsWorkspace = Pick<
  typeof workspaceApis,
  'getConfiguration' | 'onDidChangeConfiguration' | 'updateUserSetting'
>;

/** The `codeMode` settings as last read: read once at start, again on every change (and after `configure` writes). */
export class SettingsService {
  private settings: ExtensionSettings;

  constructor(private readonly workspace: SettingsWorkspace) {
    this.settings = this.read();
  }

  get current(): ExtensionSettings {
    return this.settings;
  }

  /** Reads the settings again; returns the ones they replace. */
  reread(): ExtensionSettings {
    const before = this.settings;
    this.settings = this.read();
    return before;
  }

  /** Where the results of runs show: the sidebar view (the editor keeps its width), or a panel beside the editor. */
  resultsLocation(): 'sidebar' | 'beside' {
    return oneOf(this.workspace.getConfiguration(SECTION).get<string>('results.location', 'sidebar'), [
      'sidebar',
      'beside',
    ] as const);
  }

  /** Calls `listener` when a `codeMode` setting changes. */
  onDidChange(listener: (event: vscode.ConfigurationChangeEvent) => void): vscode.Disposable {
    return this.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SECTION)) listener(event);
    });
  }

  /** Writes `codeMode.<key>` in the user's settings. */
  update(key: string, value: unknown): Promise<void> {
    return this.workspace.updateUserSetting(SECTION, key, value);
  }

  /**
   * What `configure` reads and writes: VS Code settings, applied to `engine` at once (re-read here, so the engine
   * uses them before VS Code's change event arrives).
   */
  portFor(engine: Pick<EngineService, 'configure'>): SettingsPort {
    return {
      values: () => settingsOf(this.settings.engine, this.settings.pythonPath),
      set: async (change) => {
        await this.update(CONFIGURE_KEYS[change.key], change.value);
        this.reread();
        await engine.configure();
      },
    };
  }

  private read(): ExtensionSettings {
    return readSettings(this.workspace.getConfiguration(SECTION), defaultEngineConfig);
  }
}

/** The settings as one validated snapshot; VS Code's schema already bounds the numbers. */
function readSettings(c: Pick<vscode.WorkspaceConfiguration, 'get'>, base: EngineConfig): ExtensionSettings {
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
function readApprovalPolicy(c: Pick<vscode.WorkspaceConfiguration, 'get'>): ApprovalPolicy {
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

/** `value` if it is one of `allowed`, else the first of them (the default). */
function oneOf<T extends string>(value: string, allowed: readonly T[]): T {
  return (allowed as readonly string[]).includes(value) ? (value as T) : allowed[0]!;
}
