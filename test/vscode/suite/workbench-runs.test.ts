// A person's runs in a real VS Code never hang without a way out: a local Jupyter Server answers, a run still
// waiting for its backend stops from the command and the status bar, a run behind another shows a queued card at
// once and can be cancelled, a missing module offers its install (or says why pip will not), and the small
// questions that have one answer are not asked.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PackagesResult, RunResult } from '../../../src/engine/types';
import { acceptWhenShown, api, until } from '../extensionApi';
import { backendChoices } from '../../../src/vscode/features/runCommands';
import { installFailureText } from '../../../src/vscode/features/installCommand';
import * as commandsApis from '../../../src/vscode/common/commands.apis';
import * as workspaceApis from '../../../src/vscode/common/workspace.apis';
import { missingModuleOffer } from '../../../src/vscode/missingModule';
import type { ExplorerNode } from '../../../src/vscode/views/toolExplorer';
import { openSetting } from '../../../src/vscode/openSetting';
import { settingsCommandFor } from '../../../src/vscode/settingsCommand';

/** Debian's interpreter, with jupyter_server and ipykernel (scripts/system-deps.mjs), and EXTERNALLY-MANAGED (PEP 668). */
const SYSTEM_PYTHON = '/usr/bin/python3';
/** What the offer looks at: this VS Code's workspace folders and commands. */
const OFFER_APIS = { workspace: workspaceApis, commands: commandsApis };

const config = () => vscode.workspace.getConfiguration('codeMode');

async function setting(key: string, value: unknown): Promise<void> {
  await config().update(key, value, vscode.ConfigurationTarget.Global);
}

/** A file in the workspace's script folder, written fresh. */
function scriptFile(name: string, content: string): vscode.Uri {
  const file = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, 'script', name);
  fs.writeFileSync(file.fsPath, content);
  return file;
}

/** A "Jupyter Server" that accepts every connection and never answers: a backend that never starts. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe("a person's runs have a way out", () => {
  it('a run on a local Jupyter Server (codeMode.jupyter.url: local) started from the workspace interpreter', async function () {
    this.timeout(180_000);
    const codeMode = await api();
    try {
      await setting('pythonPath', SYSTEM_PYTHON);
      await setting('jupyter.url', 'local');
      assert.equal(await vscode.commands.executeCommand('codeMode.chooseBackend', 'jupyter'), 'jupyter');
      await until(
        'your runs to use Jupyter',
        () => codeMode.container.settings.current.personRun.backend === 'jupyter',
      );
      const file = scriptFile('on_local_jupyter.py', 'import sys\nprint("local kernel", sys.executable)\n');
      const result = (await vscode.commands.executeCommand('codeMode.runFile', file)) as RunResult;
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.equal(result.backend, 'jupyter');
      assert.equal(result.stdout, `local kernel ${SYSTEM_PYTHON}\n`);
      await until('its card', async () =>
        (await codeMode.results.probe()).find((c) => c.runId === result.run_id && c.status === 'ok'),
      );
    } finally {
      await vscode.commands.executeCommand('codeMode.chooseBackend', 'python');
      await setting('jupyter.url', undefined);
      await setting('pythonPath', undefined);
    }
  });

  it('a run waiting for a backend that never starts shows as running, and Stop (command, status bar) ends it', async function () {
    this.timeout(120_000);
    const codeMode = await api();
    const server = await silentServer();
    try {
      await setting('jupyter.url', server.url);
      await vscode.commands.executeCommand('codeMode.chooseBackend', 'jupyter');
      await until(
        'your runs to use Jupyter',
        () => codeMode.container.settings.current.personRun.backend === 'jupyter',
      );
      const file = scriptFile('never_starts.py', 'print("never")\n');
      for (const stop of ['command', 'status bar'] as const) {
        const pending = vscode.commands.executeCommand('codeMode.runFile', file) as Thenable<RunResult>;
        const record = await until('the waiting run in the history', () =>
          codeMode.history.all().find((r) => r.run.backend === 'jupyter' && !r.result),
        );
        await until('its running card', async () =>
          (await codeMode.results.probe()).find((c) => c.runId === record.run.runId && c.status === 'running'),
        );
        assert.equal(codeMode.runStatus().busy, true, 'the status bar says a run is busy');
        if (stop === 'command') {
          assert.equal(await vscode.commands.executeCommand('codeMode.interrupt'), true, 'Stop found the run');
        } else {
          const menu = vscode.commands.executeCommand('codeMode.statusMenu');
          assert.equal(await acceptWhenShown(menu), true, "the status bar's Stop found the run");
        }
        const result = await pending;
        assert.equal(result.diagnostics?.error_type, 'CANCELLED', `${stop}: ${JSON.stringify(result.diagnostics)}`);
        await until('the status bar to be idle', () => !codeMode.runStatus().busy);
      }
    } finally {
      await vscode.commands.executeCommand('codeMode.chooseBackend', 'python');
      await setting('jupyter.url', undefined);
      await server.close();
    }
  });

  it('a second run while one runs shows a queued card at once ("waiting for slow.py"), which runs after it or is cancelled', async function () {
    this.timeout(120_000);
    const codeMode = await api();
    await vscode.commands.executeCommand('codeMode.chooseBackend', 'python');
    // One session for both files, so the second waits for the first.
    await setting('run.session', 'own');
    const flag = path.join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, 'script', 'go.flag');
    fs.rmSync(flag, { force: true });
    const slow = scriptFile(
      'slow.py',
      `import os, time\nprint("slow started", flush=True)\nwhile not os.path.exists(${JSON.stringify(flag)}):\n    time.sleep(0.05)\nprint("slow done")\n`,
    );
    const next = scriptFile('next.py', 'print("next ran")\n');
    try {
      const queuedCard = async () => {
        const record = await until('the queued run in the history', () =>
          codeMode.history.all().find((r) => r.run.waitingFor && !r.result),
        );
        const card = await until('the queued card', async () =>
          (await codeMode.results.probe()).find((c) => c.runId === record.run.runId && c.status === 'queued'),
        );
        // Its Cancel button (a label or, in a narrow side bar, an icon with a tooltip) is checked by try-vsix.
        assert.match(card.text, /waiting for slow\.py/);
        return record.run.runId;
      };
      // It runs once the run ahead of it is done.
      let first = vscode.commands.executeCommand('codeMode.runFile', slow) as Thenable<RunResult>;
      await until('slow.py to start', () =>
        codeMode.history.all().some((r) => !r.result && r.stdout.includes('slow started')),
      );
      let second = vscode.commands.executeCommand('codeMode.runFile', next) as Thenable<RunResult>;
      const queuedId = await queuedCard();
      fs.writeFileSync(flag, '');
      assert.equal((await first).stdout, 'slow started\nslow done\n');
      const ran = await second;
      assert.equal(ran.run_id, queuedId);
      assert.equal(ran.stdout, 'next ran\n');
      await until('the card to turn ok', async () =>
        (await codeMode.results.probe()).find((c) => c.runId === queuedId && c.status === 'ok'),
      );

      // Stop stops everything the person sees running: the run and the one queued behind it.
      fs.rmSync(flag, { force: true });
      first = vscode.commands.executeCommand('codeMode.runFile', slow) as Thenable<RunResult>;
      await until('slow.py to start again', () =>
        codeMode.history.all().some((r) => !r.result && r.stdout.includes('slow started')),
      );
      second = vscode.commands.executeCommand('codeMode.runFile', next) as Thenable<RunResult>;
      const cancelledId = await queuedCard();
      assert.equal(await vscode.commands.executeCommand('codeMode.interrupt'), true);
      const cancelled = await second;
      assert.equal(cancelled.diagnostics?.error_type, 'CANCELLED');
      assert.match(cancelled.diagnostics?.message ?? '', /while it waited for slow\.py; it did not run/);
      assert.equal((await first).diagnostics?.error_type, 'CANCELLED');
      await until('the queued card to say it was cancelled', async () =>
        (await codeMode.results.probe()).find(
          (c) => c.runId === cancelledId && c.status === 'error' && /Cancelled/.test(c.text),
        ),
      );
    } finally {
      fs.writeFileSync(flag, '');
      await setting('run.session', undefined);
    }
  });

  it('a missing module on the workspace interpreter offers its install; on an externally managed one it says PEP 668', async function () {
    this.timeout(180_000);
    await vscode.commands.executeCommand('codeMode.chooseBackend', 'python');
    const file = scriptFile('needs_module.py', 'import cm_missing_module_qq\n');
    try {
      // Debian's python3 is externally managed: pip would refuse, so the offer is a virtual environment.
      await setting('pythonPath', SYSTEM_PYTHON);
      const codeMode = await api();
      await until(
        'the interpreter to follow the setting',
        () => codeMode.container.interpreter.inUse?.path === SYSTEM_PYTHON,
      );
      const managed = (await vscode.commands.executeCommand('codeMode.runFile', file)) as RunResult;
      assert.equal(managed.diagnostics?.exception, 'ModuleNotFoundError', JSON.stringify(managed.diagnostics));
      const managedOffer = await missingModuleOffer(
        managed,
        'python',
        SYSTEM_PYTHON,
        { path: file.fsPath, firstLine: 1 },
        OFFER_APIS,
      );
      assert.ok(managedOffer, 'an offer is made');
      assert.match(
        managedOffer.message,
        /No module named 'cm_missing_module_qq'\. \/usr\/bin\/python3 is managed by the operating system \(PEP 668\)/,
      );
      assert.ok(
        ['Create Environment', 'Select Interpreter'].includes(managedOffer.action.title),
        managedOffer.action.title,
      );
      // Installing there anyway: the notification leads with pip's own headline.
      const refused = (await vscode.commands.executeCommand(
        'codeMode.installPackages',
        ['cm_missing_module_qq'],
        'python',
      )) as PackagesResult;
      assert.equal(refused.success, false);
      assert.match(
        installFailureText(refused),
        /^Code Mode: error: externally-managed-environment \(This environment is externally managed\) — cm_missing_module_qq was not installed$/,
      );

      // An interpreter pip installs into: the offer is the install, and accepting it runs Install Packages there.
      await setting('pythonPath', undefined);
      await until(
        'the interpreter to follow the setting',
        () => codeMode.container.interpreter.inUse?.path !== SYSTEM_PYTHON,
      );
      const missing = (await vscode.commands.executeCommand('codeMode.runFile', file)) as RunResult;
      const offer = await missingModuleOffer(
        missing,
        'python',
        codeMode.container.interpreter.inUse?.path,
        { path: file.fsPath, firstLine: 1 },
        OFFER_APIS,
      );
      assert.ok(offer, 'an offer is made');
      assert.equal(offer.action.title, 'Install cm_missing_module_qq');
      const installed = (await vscode.commands.executeCommand(
        offer.action.command,
        ...offer.action.args,
      )) as PackagesResult;
      // No such package exists (and this machine may be offline): pip's first line leads, never a fragment.
      assert.equal(installed.success, false);
      assert.match(installFailureText(installed), /^Code Mode: (ERROR: |no network|error: )/);
      // The person's own module is a path problem, not a package to install.
      fs.mkdirSync(path.join(path.dirname(file.fsPath), 'lib'), { recursive: true });
      fs.writeFileSync(path.join(path.dirname(file.fsPath), 'lib', 'own_module_qq.py'), 'VALUE = 1\n');
      const own = scriptFile('uses_own.py', 'import own_module_qq\n');
      const ownMissing = (await vscode.commands.executeCommand('codeMode.runFile', own)) as RunResult;
      assert.equal(ownMissing.diagnostics?.exception, 'ModuleNotFoundError');
      assert.equal(
        await missingModuleOffer(ownMissing, 'python', undefined, { path: own.fsPath, firstLine: 1 }, OFFER_APIS),
        undefined,
      );
    } finally {
      await setting('pythonPath', undefined);
    }
  });

  it("every place that starts your run follows it up alike: Run File, the explorer's Run and its Re-run each open the runs channel when codeMode.run.showRunsChannel asks", async () => {
    const codeMode = await api();
    const code = 'print("followed up")\n';
    const file = scriptFile('follow_up.py', code);
    await codeMode.container.stores.codeFiles.write('follow_up_agent.py', code, 'create');
    /** How often `start` brought the runs channel into view; its run must have printed the line. */
    const revealsBy = async (start: () => Thenable<unknown>): Promise<number> => {
      const before = codeMode.runsChannelReveals();
      const result = (await start()) as RunResult;
      assert.equal(result.stdout, 'followed up\n', JSON.stringify(result.diagnostics));
      return codeMode.runsChannelReveals() - before;
    };
    try {
      await setting('run.showRunsChannel', true);
      await until('the setting read', () => codeMode.container.settings.current.personRun.showRunsChannel);
      assert.equal(await revealsBy(() => vscode.commands.executeCommand('codeMode.runFile', file)), 1, 'Run File');
      const { explorer } = codeMode;
      const sections = await explorer.getChildren();
      const files = await explorer.getChildren(sections.find((n) => n.kind === 'section' && n.section === 'files'));
      const agentScript = files.find((n) => n.kind === 'codeFile' && n.file.name === 'follow_up_agent.py');
      assert.ok(agentScript, 'the agent script is listed');
      assert.equal(
        await revealsBy(() => vscode.commands.executeCommand('codeMode.explorer.runCodeFile', agentScript)),
        1,
        "the explorer's Run",
      );
      const ran = codeMode.history
        .all()
        .filter((record) => record.run.origin === 'explorer')
        .pop();
      assert.ok(ran, "the explorer's run is in the history");
      const runNode: ExplorerNode = { kind: 'run', record: ran };
      assert.equal(
        await revealsBy(() => vscode.commands.executeCommand('codeMode.explorer.rerun', runNode)),
        1,
        'Re-run',
      );
    } finally {
      await setting('run.showRunsChannel', undefined);
      await vscode.commands.executeCommand('workbench.action.closePanel');
    }
  });

  it('Restart Session restarts the one live session without asking which', async () => {
    const codeMode = await api();
    const engine = await codeMode.container.engine.get();
    for (const session of engine.describeSessions()) await engine.resetSession(session.name, session.backend);
    await vscode.commands.executeCommand('codeMode.chooseBackend', 'python');
    const file = scriptFile('keeps.py', 'kept = 1\n');
    await vscode.commands.executeCommand('codeMode.runFile', file);
    assert.equal(engine.describeSessions().length, 1, 'one live session');
    const restarted = vscode.commands.executeCommand('codeMode.restartSession') as Thenable<boolean>;
    let answered: boolean | undefined;
    void restarted.then((value) => (answered = value));
    try {
      // A question would leave the command waiting for an answer.
      await until('the restart without a question', () => answered !== undefined, 15_000);
    } finally {
      if (answered === undefined) await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    }
    assert.equal(answered, true);
    assert.equal(engine.describeSessions().length, 0, 'the session was restarted (its next run starts afresh)');
  });

  it('Choose Backend offers Jupyter without a server, saying to set one first', async () => {
    const codeMode = await api();
    const settings = codeMode.container.settings.current;
    const unset = { ...settings, backends: { ...settings.backends, jupyter: { url: '', kernelName: '' } } };
    const jupyter = backendChoices(unset, true, 'Workspace Python', 'python3').find((item) => item.value === 'jupyter');
    assert.equal(jupyter?.description, 'set a server first (codeMode.jupyter.url)');
    const local = { ...settings, backends: { ...settings.backends, jupyter: { url: 'local', kernelName: '' } } };
    assert.equal(
      backendChoices(local, true, 'Workspace Python', 'python3').find((item) => item.value === 'jupyter')?.description,
      'a local Jupyter Server',
    );
    assert.equal(
      backendChoices(unset, false, 'Workspace Python', 'python3').find((item) => item.value === 'jupyter'),
      undefined,
      'not in Restricted Mode',
    );
  });

  it("a machine-scoped setting opens in this remote window's Remote tab (the User tab would say No Settings Found)", async () => {
    assert.ok(vscode.env.remoteName, 'code-server is a remote window');
    const command = settingsCommandFor('machine-overridable', vscode.env.remoteName);
    assert.equal(command, 'workbench.action.openRemoteSettings');
    assert.ok((await vscode.commands.getCommands(true)).includes(command));
    await openSetting('codeMode.jupyter.url');
    await until(
      'the Settings editor',
      () => vscode.window.tabGroups.activeTabGroup.activeTab?.label.includes('Settings') || undefined,
    );
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });
});
