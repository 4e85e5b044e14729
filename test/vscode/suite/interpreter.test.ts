// The workspace interpreter as a person sees and chooses it without the Python extension: the default is named with
// its full path and version (a pyenv shim says which Python it runs), and Select Interpreter… (given a path here;
// a person picks from what is found) keeps the choice in codeMode.pythonPath, which the backend then uses.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { api, until } from '../extensionApi';

describe('the workspace interpreter, without the Python extension', function () {
  this.timeout(120_000);

  it('the default is named with its path and version; Select Interpreter… sets codeMode.pythonPath', async () => {
    assert.equal(
      vscode.extensions.getExtension('ms-python.python'),
      undefined,
      'the Python extension is not installed',
    );
    const codeMode = await api();
    await codeMode.container.interpreter.current();
    const config = vscode.workspace.getConfiguration('codeMode');
    const before = config.inspect<string>('pythonPath');
    const chosen = '/usr/bin/python3';
    try {
      assert.equal(await vscode.commands.executeCommand('codeMode.selectInterpreter', chosen), true);
      await until(
        'the chosen interpreter in use',
        () => codeMode.container.interpreter.label() === chosen || undefined,
      );
      assert.equal(vscode.workspace.getConfiguration('codeMode').get('pythonPath'), chosen);
      const engine = await codeMode.container.engine.get();
      const result = await engine.run({ code: 'import sys\nprint(sys.executable)', backend: 'python' });
      assert.equal(result.stdout.trim(), chosen, JSON.stringify(result.diagnostics));
    } finally {
      await config.update('pythonPath', before?.workspaceValue, vscode.ConfigurationTarget.Workspace);
    }
    if (!before?.workspaceValue && !before?.globalValue) {
      const label = await until('the default described', () => {
        const now = codeMode.container.interpreter.label();
        return /\(Python \d+\.\d+\.\d+[^)]*; the default, found on PATH\)$/.test(now) ? now : undefined;
      });
      assert.match(label, /^\//, 'a full path');
    }
  });
});
