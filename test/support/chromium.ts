// Debian's headless Chromium for the webview tests, through playwright-core (no browser download): quiet, offline.
import { chromium, type Browser } from 'playwright-core';
// The same flags as the real-VS-Code host's Chromium.
import chromiumArgs from '../../scripts/vscode-host/chromium-args.json';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', ...chromiumArgs] });
}
