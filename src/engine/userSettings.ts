import * as fs from 'node:fs';
import * as path from 'node:path';
import { isBackendKind, MAX_TIMEOUT_S, type EngineConfig } from './config';
import { agentSettingRefusal } from './agentSettings';
import type { Engine } from './engine';
import { createPythonBackend, type PythonBackendConfig } from './backends/python/backend';
import { readJsonFile, writeJsonAtomic } from './stores/atomicJson';
import type { BackendKind, Logger } from './types';

/** What `configure` may change: the defaults a person or an agent may reasonably tune. */
export interface UserSettings {
  default_backend: BackendKind;
  timeout_s: number;
  output_cap_kb: number;
  auto_install: boolean;
  python_path: string;
}

export type SettingKey = keyof UserSettings;

export const SETTING_DESCRIPTIONS: Record<SettingKey, string> = {
  default_backend:
    '"pyodide", "python" or "jupyter" (when a Jupyter Server is set): the backend of runs that name none',
  timeout_s: `seconds a run may take unless it says otherwise (1-${MAX_TIMEOUT_S})`,
  output_cap_kb: 'cap on stdout and on stderr of one run, in KB (1-10240)',
  auto_install: 'true/false: on ModuleNotFoundError in Pyodide, install the package once and re-run',
  python_path: 'interpreter of the python backend ("" to search CODE_MODE_PYTHON, then PATH)',
};

export type SettingValue = { key: SettingKey; value: UserSettings[SettingKey] };

/** A checked value for `key`, or the reason it is refused. */
export function validateSetting(key: unknown, value: unknown): SettingValue | { error: string } {
  switch (key) {
    case 'default_backend':
      return isBackendKind(value)
        ? { key, value }
        : { error: 'default_backend must be "pyodide", "python" or "jupyter"' };
    case 'timeout_s':
      return typeof value === 'number' && Number.isFinite(value) && value >= 1 && value <= MAX_TIMEOUT_S
        ? { key, value }
        : { error: `timeout_s must be a number from 1 to ${MAX_TIMEOUT_S}` };
    case 'output_cap_kb':
      return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 10240
        ? { key, value }
        : { error: 'output_cap_kb must be a whole number from 1 to 10240' };
    case 'auto_install':
      return typeof value === 'boolean' ? { key, value } : { error: 'auto_install must be true or false' };
    case 'python_path': {
      if (typeof value !== 'string') return { error: 'python_path must be a string' };
      if (value !== '' && !isExecutable(value)) return { error: `python_path "${value}" is not an executable file` };
      return { key, value };
    }
    default:
      return {
        error: `unknown key ${JSON.stringify(key)}; known: ${Object.entries(SETTING_DESCRIPTIONS)
          .map(([name, what]) => `${name} (${what})`)
          .join('; ')}`,
      };
  }
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile() && path.isAbsolute(file);
  } catch {
    return false;
  }
}

/** Where settings live: the CLI keeps a JSON file, the extension maps them onto VS Code settings. */
export interface SettingsPort {
  values(): UserSettings;
  /** Validated already; persists the value and applies it to the running engine. */
  set(change: SettingValue): Promise<void>;
}

/** An engine configuration's values, as the environment tool names them. */
export function settingsOf(config: EngineConfig, pythonPath: string): UserSettings {
  return {
    default_backend: config.defaultBackend,
    timeout_s: config.timeoutS,
    output_cap_kb: Math.round(config.outputCapBytes / 1024),
    auto_install: config.autoInstall,
    python_path: pythonPath,
  };
}

/** Applies one setting to a running engine (the python path swaps the python backend, keeping its other settings). */
export async function applySetting(
  engine: Engine,
  change: SettingValue,
  log: Logger,
  python: Omit<PythonBackendConfig, 'pythonPath' | 'log'> = {},
): Promise<void> {
  switch (change.key) {
    case 'default_backend':
      engine.configure({ defaultBackend: change.value as BackendKind });
      return;
    case 'timeout_s':
      engine.configure({ timeoutS: change.value as number });
      return;
    case 'output_cap_kb':
      engine.configure({ outputCapBytes: (change.value as number) * 1024 });
      return;
    case 'auto_install':
      engine.configure({ autoInstall: change.value as boolean });
      return;
    case 'python_path':
      await engine.setBackendFactory(
        createPythonBackend({ ...python, pythonPath: (change.value as string) || undefined, log }),
        `python_path changed to ${(change.value as string) || '(search CODE_MODE_PYTHON, then PATH)'}`,
      );
      return;
  }
}

/** The CLI's settings: `<storage>/settings.json`, written atomically, applied at start and on change. */
export class FileSettings implements SettingsPort {
  private readonly file: string;
  private stored: Partial<UserSettings>;

  constructor(
    storageDir: string,
    private readonly engine: Engine,
    private readonly log: Logger,
    private pythonPath = '',
    /** What the command line set for the python backend besides its path, kept when the path changes. */
    private readonly python: Omit<PythonBackendConfig, 'pythonPath' | 'log'> = {},
  ) {
    this.file = path.join(storageDir, 'settings.json');
    this.stored = readJsonFile(this.file, acceptStored, log) ?? {};
  }

  /** Applies what was saved, except keys the command line set explicitly (the command line wins). */
  async load(explicit: ReadonlySet<SettingKey>): Promise<void> {
    for (const [key, value] of Object.entries(this.stored)) {
      if (explicit.has(key as SettingKey)) continue;
      const checked = validateSetting(key, value);
      // What is saved was set through the environment tool, by an agent: checked again against this server.
      const problem = 'error' in checked ? checked.error : agentSettingRefusal(this.engine, checked);
      if (problem || 'error' in checked) {
        this.log.warn(`ignoring saved setting ${key}: ${problem}`);
        continue;
      }
      await this.apply(checked);
    }
  }

  values(): UserSettings {
    return settingsOf(this.engine.config, this.pythonPath);
  }

  async set(change: SettingValue): Promise<void> {
    await this.apply(change);
    this.stored = { ...this.stored, [change.key]: change.value };
    writeJsonAtomic(this.file, this.stored);
  }

  private async apply(change: SettingValue): Promise<void> {
    await applySetting(this.engine, change, this.log, this.python);
    if (change.key === 'python_path') this.pythonPath = change.value as string;
  }
}

function acceptStored(value: unknown): Partial<UserSettings> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Partial<UserSettings>)
    : undefined;
}
