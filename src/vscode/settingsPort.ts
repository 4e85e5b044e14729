import { settingsOf, type SettingKey, type SettingsPort, type SettingValue, type UserSettings } from '../engine/userSettings';
import type { EngineHost } from './engineHost';
import { updateSetting } from './settings';

/** `configure` keys as VS Code settings, so a change made by an agent shows in the Settings editor. */
const SETTING_NAMES: Record<SettingKey, string> = {
  default_backend: 'defaultBackend',
  timeout_s: 'timeoutSeconds',
  output_cap_kb: 'outputCapKB',
  auto_install: 'pyodide.autoInstall',
  python_path: 'pythonPath',
};

/** In the extension, `configure` writes VS Code settings; the settings listener applies them to the engine. */
export class VscodeSettingsPort implements SettingsPort {
  constructor(private readonly host: EngineHost) {}

  values(): UserSettings {
    const { engine, pythonPath } = this.host.currentSettings;
    return settingsOf(engine, pythonPath);
  }

  async set(change: SettingValue): Promise<void> {
    await updateSetting(SETTING_NAMES[change.key], change.value);
    await this.host.settingsApplied();
  }
}
