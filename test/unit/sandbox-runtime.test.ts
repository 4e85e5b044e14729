// What of the runtime bubblewrap shows inside the sandbox (src/engine/sandbox/bubblewrap.ts, runtimeBinds). Node
// and Electron placed under /tmp really run there in test/sandbox/runtime-location.test.ts; Electron cannot be
// installed on the test machine, so its layout is checked here from its arguments.
import { after, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runtimeBinds } from '../../src/engine/sandbox/bubblewrap';

describe('the runtime inside the sandbox', () => {
  const made: string[] = [];
  after(() => made.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

  test('Node is bound as one file at its own path, never its folder', () => {
    assert.deepEqual(runtimeBinds('/tmp/node', false), ['--ro-bind', '/tmp/node', '/tmp/node']);
    assert.deepEqual(runtimeBinds('/home/someone/.nvm/versions/node/v20.20.2/bin/node', false), [
      '--ro-bind',
      '/home/someone/.nvm/versions/node/v20.20.2/bin/node',
      '/home/someone/.nvm/versions/node/v20.20.2/bin/node',
    ]);
  });

  test('a runtime under /usr is already there', () => {
    assert.deepEqual(runtimeBinds('/usr/bin/node', false), []);
    assert.deepEqual(runtimeBinds('/usr/share/code/code', true), []);
  });

  test("Electron's folder is bound, less a portable VS Code's user data", () => {
    const install = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-electron-'));
    made.push(install);
    const code = path.join(install, 'code');
    fs.writeFileSync(code, '');
    assert.deepEqual(runtimeBinds(code, true), ['--ro-bind', install, install]);
    fs.mkdirSync(path.join(install, 'data', 'user-data'), { recursive: true });
    assert.deepEqual(runtimeBinds(code, true), ['--ro-bind', install, install, '--tmpfs', path.join(install, 'data')]);
  });
});
