// The Pyodide sandbox with workspace write on, as the extension configures it from its settings (backends.ts):
// what the host later runs or installs stays read-only — the wheelhouse named by codeMode.wheelhouse, and
// repository metadata and virtual environments at any depth, existing or made while the session runs — while the rest of the workspace is writable.
// Changing these settings restarts Pyodide sessions; they are set back at the end.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { api } from '../extensionApi';

describe('Pyodide with codeMode.pyodide.workspaceWrite on, as the extension configures it', function () {
  this.timeout(180_000);

  it('the wheelhouse and repository metadata at any depth stay read-only; the rest of the workspace is writable', async () => {
    const codeMode = await api();
    const workspace = fs.realpathSync(vscode.workspace.workspaceFolders![0]!.uri.fsPath);
    const created = ['wheels', 'vendor'].map((name) => path.join(workspace, name));
    const wheels = created[0]!;
    const wheel = path.join(wheels, 'cmhonest-1.0.0-py3-none-any.whl');
    const hooks = path.join(workspace, 'vendor', 'lib', 'repo', '.git', 'hooks');
    const venv = path.join(workspace, 'vendor', 'tools', 'env');
    // Made before the settings change: the sessions it restarts see them.
    fs.mkdirSync(wheels, { recursive: true });
    fs.writeFileSync(wheel, 'PK honest');
    fs.mkdirSync(hooks, { recursive: true });
    fs.writeFileSync(path.join(path.dirname(hooks), 'config'), '[core]\n');
    fs.mkdirSync(path.join(venv, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(venv, 'pyvenv.cfg'), 'home = /usr/bin\n');
    const config = vscode.workspace.getConfiguration('codeMode');
    await config.update('wheelhouse', wheels, vscode.ConfigurationTarget.Global);
    await config.update('pyodide.workspaceWrite', true, vscode.ConfigurationTarget.Global);
    try {
      const engine = await codeMode.container.engine.get();
      const attempts = {
        'plant a wheel': path.join(wheels, 'cmhonest-9.0.0-py3-none-any.whl'),
        'change the wheel': wheel,
        'write a hook': path.join(hooks, 'pre-commit'),
        'change the repository config': path.join(path.dirname(hooks), 'config'),
        "replace the environment's python": path.join(venv, 'bin', 'python'),
        // Made while the session runs: no mount could cover these names, so each write is checked by name.
        'make a repository': path.join(workspace, 'vendor', 'lib', 'fresh', '.git', 'config'),
        'make a virtual environment': path.join(workspace, 'vendor', 'lib', 'newenv', 'pyvenv.cfg'),
        'write beside them': path.join(workspace, 'vendor', 'lib', 'notes.txt'),
      };
      const result = await engine.run({
        backend: 'pyodide',
        session: 'vscode-write',
        code: `import os
outcomes = {}
for name, target in ${JSON.stringify(attempts)}.items():
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, 'a') as f:
            f.write('written by the sandbox')
        outcomes[name] = 'written'
    except OSError:
        outcomes[name] = 'refused'
print(outcomes)`,
      });
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.equal(
        result.stdout,
        "{'plant a wheel': 'refused', 'change the wheel': 'refused', 'write a hook': 'refused', 'change the repository config': 'refused', \"replace the environment's python\": 'refused', 'make a repository': 'refused', 'make a virtual environment': 'refused', 'write beside them': 'written'}\n",
      );
      assert.equal(fs.readFileSync(wheel, 'utf8'), 'PK honest');
      assert.deepEqual(fs.readdirSync(wheels), [path.basename(wheel)]);
      assert.equal(fs.existsSync(path.join(hooks, 'pre-commit')), false);
      assert.equal(fs.existsSync(path.join(workspace, 'vendor', 'lib', 'fresh', '.git')), false);
      assert.equal(fs.existsSync(path.join(workspace, 'vendor', 'lib', 'newenv', 'pyvenv.cfg')), false);
      // Nothing is left unrefused, so the sandbox the environment tool reports stays complete.
      assert.deepEqual(engine.sandbox('pyodide'), {
        mechanism: 'bubblewrap',
        complete: true,
        network: 'off',
        gaps: [],
      });
    } finally {
      await config.update('pyodide.workspaceWrite', undefined, vscode.ConfigurationTarget.Global);
      await config.update('wheelhouse', undefined, vscode.ConfigurationTarget.Global);
      await (await codeMode.container.engine.get()).resetSession('vscode-write', 'pyodide');
      for (const folder of created) fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});
