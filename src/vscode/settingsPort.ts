import { settingsOf, type SettingKey, type SettingsPort, type SettingValue, type UserSettings } from '../engine/index';
import { updateSetting, type ExtensionSettings } from './settings';

/** `configure` keys as VS Code settings, so a change made by an agent shows in the Settings editor. */
const SETTING_NAMES: Record<SettingKey, string> = {
  default_backend: 'defaultBackend',
  timeout_s: 'timeoutSeconds',
  output_cap_kb: 'outputCapKB',
  auto_install: 'pyodide.autoInstall',
  python_path: 'pythonPath',
};

/** What the port needs of the extension: the settings as last read, and a way to apply ones just written. */
export interface SettingsSource {
  current(): Pick<ExtensionSettings, 'engine' | 'pythonPath'>;
  /** Re-reads the settings so the engine uses them before VS Code's change event arrives. */
  applyWritten(): Promise<void>;
}

/** In the extension, `configure` writes VS Code settings; the settings listener applies them to the engine. */
export class VscodeSettingsPort implements SettingsPort {
  constructor(private readonly source: SettingsSource) {}

  values(): UserSettings {
    const { engine, pythonPath } = this.source.current();
    return settingsOf(engine, pythonPath);
  }

  async set(change: SettingValue): Promise<void> {
    await updateSetting(SETTING_NAMES[change.key], change.value);
    await this.source.applyWritten();
  }
}
