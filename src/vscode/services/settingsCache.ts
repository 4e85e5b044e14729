import { defaultEngineConfig } from '../../engine/index';
import { readSettings, type ExtensionSettings } from '../settings';

/** The `codeMode` settings as last read: read once at start, again on every change (and after `configure` writes). */
export class SettingsCache {
  private settings = readSettings(defaultEngineConfig);

  get current(): ExtensionSettings {
    return this.settings;
  }

  /** Reads the settings again; returns the ones they replace. */
  reread(): ExtensionSettings {
    const before = this.settings;
    this.settings = readSettings(defaultEngineConfig);
    return before;
  }
}
