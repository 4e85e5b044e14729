// Settings open where they can be set (src/vscode/settingsCommand.ts): in a remote window a machine-scoped setting
// is in the Remote tab, so Choose Backend → Jupyter no longer opens a User tab that says "No Settings Found".
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { scopeIn, settingsCommandFor } from '../../src/vscode/settingsCommand';

const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8'));

test('machine-scoped settings open in the Remote tab of a remote window; the rest, and every local window, as before', () => {
  for (const key of ['codeMode.jupyter.url', 'codeMode.pythonPath', 'codeMode.wheelhouse'])
    assert.equal(
      settingsCommandFor(scopeIn(manifest, key), 'ssh-remote+box'),
      'workbench.action.openRemoteSettings',
      key,
    );
  assert.equal(scopeIn(manifest, 'codeMode.run.timeoutSeconds'), undefined);
  assert.equal(
    settingsCommandFor(scopeIn(manifest, 'codeMode.run.timeoutSeconds'), 'ssh-remote+box'),
    'workbench.action.openSettings',
  );
  assert.equal(
    settingsCommandFor(scopeIn(manifest, 'codeMode.jupyter.url'), undefined),
    'workbench.action.openSettings',
  );
});
