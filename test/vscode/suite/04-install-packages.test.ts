// Install Packages: a local wheel into the Pyodide session your runs use, a refused spec, and the whole error of a
// failed install on its card and in the runs channel. Numbered to keep its place in the run order (see
// 01-activation.test.ts).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { buildWheel } from '../../support/wheel';
import type { PackagesResult } from '../../../src/engine/types';
import { api, until } from '../extensionApi';
import { untrusted } from '../suiteSetup';

(untrusted ? describe.skip : describe)('Install Packages', function () {
  this.timeout(120_000);

  it('Install Packages installs a local wheel into the Pyodide session your runs use', async () => {
    const codeMode = await api();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-wheel-'));
    const wheel = buildWheel(dir, {
      name: 'cm_vscode_pkg',
      version: '1.2.3',
      init: 'VALUE = "installed from a wheel"\n',
    });
    const installed = (await vscode.commands.executeCommand(
      'codeMode.installPackages',
      [wheel],
      'pyodide',
    )) as PackagesResult;
    assert.equal(installed.success, true, JSON.stringify(installed));
    assert.equal(installed.packages[0].version, '1.2.3');
    assert.equal(installed.session, 'interactive');
    const engine = await codeMode.container.engine.get();
    const result = await engine.run({
      code: 'import cm_vscode_pkg\nprint(cm_vscode_pkg.VALUE)',
      backend: 'pyodide',
      session: 'interactive',
    });
    assert.equal(result.stdout, 'installed from a wheel\n');
    const refused = (await vscode.commands.executeCommand(
      'codeMode.installPackages',
      ['numpy; rm -rf ~'],
      'pyodide',
    )) as PackagesResult;
    assert.equal(refused.success, false);
    // Offline, the advice names the VS Code setting, not the CLI's flag.
    const offline = (await vscode.commands.executeCommand(
      'codeMode.installPackages',
      ['six'],
      'pyodide',
    )) as PackagesResult;
    assert.match(offline.packages[0]?.error ?? '', /wheelhouse folder \(setting codeMode\.wheelhouse\)/);
    // An install is a run of `%pip install …`: its card and the runs channel hold the whole error (the
    // notification shows its first line).
    const install = codeMode.history
      .all()
      .reverse()
      .find((record) => record.run.code === '%pip install six');
    assert.ok(install?.result, 'the install is in the history as a run');
    assert.equal(install.result.success, false);
    assert.ok(install.result.stderr.includes(offline.packages[0]!.error!), install.result.stderr.slice(0, 500));
    const channel = codeMode.runsChannelText();
    assert.ok(
      channel.slice(channel.lastIndexOf(`── run ${install.run.runId}`)).includes(offline.packages[0]!.error!),
      'the runs channel has the whole error',
    );
    const card = await until('the install card in the results view', async () =>
      (await codeMode.results.probe()).find((c) => c.runId === install.run.runId),
    );
    assert.ok(card.text.includes('wheelhouse folder (setting codeMode.wheelhouse)'), card.text.slice(0, 500));
    // pip's error (workspace Python) is shown from its start: no leading cut.
    const pip = (await vscode.commands.executeCommand(
      'codeMode.installPackages',
      ['cm-no-such-package-anywhere'],
      'python',
    )) as PackagesResult;
    assert.equal(pip.success, false);
    const pipError = pip.packages[0]?.error ?? '';
    assert.match(pipError, /^(ERROR|no network|pip)/, pipError.slice(0, 300));
    if (/no network/.test(pipError)) assert.match(pipError, /wheelhouse folder \(setting codeMode\.wheelhouse\)/);
    assert.ok(codeMode.runsChannelText().includes(pipError), 'the whole pip error is in the runs channel');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
