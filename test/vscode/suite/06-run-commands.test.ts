// Running your code: Run Selection, Run File and the ▶ on each backend (a real Jupyter Server too), no time limit,
// a failure in Problems, input() in an input box, interrupt, and the status bar item. Numbered to keep its place
// in the run order (see 01-activation.test.ts).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { silentLogger, type RunResult } from '../../../src/engine/types';
import { acceptWhenShown, api, EXTENSION_ID, until } from '../extensionApi';
import type { ExplorerNode } from '../../../src/vscode/views/toolExplorer';
import { startLocalJupyterServer } from '../../../src/engine/backends/jupyter/localServer';
import { openPython, untrusted } from '../suiteSetup';

(untrusted ? describe.skip : describe)('Running your code', function () {
  this.timeout(120_000);

  it('a nested block selected from inside a function runs', async () => {
    const editor = await openPython('def f():\n    for i in range(2):\n        print("nested", i)\n');
    editor.selection = new vscode.Selection(1, 4, 2, 30);
    const result = (await vscode.commands.executeCommand('codeMode.runSelection')) as RunResult;
    assert.equal(result.stdout, 'nested 0\nnested 1\n');
  });

  it('the ▶ in the editor title runs the file; its drop-down and the context menu name Code Mode', async () => {
    const { packageJSON } = vscode.extensions.getExtension(EXTENSION_ID)!;
    type MenuItem = { command: string; when?: string; group?: string };
    const titleRun = (packageJSON.contributes.menus['editor/title/run'] as MenuItem[]).map((m) => m.command);
    assert.deepEqual(
      titleRun,
      ['codeMode.runFile', 'codeMode.runSelection'],
      'Run File is the button, Run Selection in its drop-down',
    );
    const titles = new Map(
      (packageJSON.contributes.commands as { command: string; title: string }[]).map((c) => [c.command, c.title]),
    );
    for (const item of packageJSON.contributes.menus['editor/context'] as MenuItem[])
      assert.match(titles.get(item.command) ?? '', /^Code Mode: /);
    const editor = await openPython('print("run by the title button", 6 * 7)\n');
    // VS Code hands an editor title action the editor's resource.
    const result = (await vscode.commands.executeCommand(titleRun[0]!, editor.document.uri)) as RunResult;
    assert.equal(result.stdout, 'run by the title button 42\n', JSON.stringify(result.diagnostics));
  });

  it('a run on the Jupyter backend: a kernel on a real Jupyter Server, its card, and the kernel in the explorer', async () => {
    const codeMode = await api();
    // Debian's jupyter-server and ipykernel (scripts/system-deps.mjs), reached by URL and a token in secret storage.
    const server = await startLocalJupyterServer({ python: '/usr/bin/python3', log: silentLogger, tcp: true });
    const config = vscode.workspace.getConfiguration('codeMode');
    try {
      await config.update('jupyter.url', server.endpoint.url, vscode.ConfigurationTarget.Global);
      assert.equal(await vscode.commands.executeCommand('codeMode.setJupyterToken', server.endpoint.token), true);
      assert.equal(await vscode.commands.executeCommand('codeMode.chooseBackend', 'jupyter'), 'jupyter');
      await until(
        'your runs to use Jupyter',
        () => codeMode.container.settings.current.personRun.backend === 'jupyter',
      );
      const editor = await openPython('import os\nprint("on the kernel", os.getpid() != 0)\n');
      editor.selection = new vscode.Selection(0, 0, editor.document.lineCount, 0);
      const result = (await vscode.commands.executeCommand('codeMode.runSelection')) as RunResult;
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.equal(result.backend, 'jupyter');
      assert.equal(result.stdout, 'on the kernel True\n');
      await until('the Jupyter run card in the webview', async () =>
        (await codeMode.results.probe()).find((c) => c.runId === result.run_id && c.status === 'ok'),
      );
      const { explorer } = codeMode;
      const [backendsSection] = await explorer.getChildren();
      const jupyter = (await explorer.getChildren(backendsSection)).find(
        (n) => n.kind === 'backend' && n.backend === 'jupyter',
      );
      assert.ok(jupyter, 'the explorer lists the Jupyter backend');
      assert.match(
        String(explorer.getTreeItem(jupyter).description),
        new RegExp(`ready · ${server.endpoint.url.replace(/[.]/g, '\\.')}`),
      );
      const kernels = (await explorer.getChildren(jupyter)).map((n) => explorer.getTreeItem(n));
      assert.ok(
        kernels.some(
          (k) => /python3 kernel/.test(String(k.label)) && /a session of Code Mode/.test(String(k.description)),
        ),
        `kernels: ${kernels.map((k) => `${k.label} ${k.description}`).join(', ')}`,
      );
    } finally {
      await vscode.commands.executeCommand('codeMode.chooseBackend', 'python');
      await config.update('jupyter.url', undefined, vscode.ConfigurationTarget.Global);
      await server.stop();
    }
  });

  it('run file on the workspace Python backend', async () => {
    await vscode.commands.executeCommand('codeMode.chooseBackend', 'python');
    try {
      await openPython('import sys\nprint(sys.implementation.name, sys.platform)\n');
      const result = (await vscode.commands.executeCommand('codeMode.runFile')) as RunResult;
      assert.equal(result.backend, 'python');
      assert.equal(result.stdout, 'cpython linux\n');
    } finally {
      await vscode.commands.executeCommand('codeMode.chooseBackend', 'python');
    }
  });

  it('Run File of a file in the workspace runs it as a script on both backends, and returns its result', async () => {
    const folder = vscode.workspace.workspaceFolders![0]!.uri;
    for (const backend of ['pyodide', 'python'] as const) {
      await vscode.commands.executeCommand('codeMode.chooseBackend', backend);
      try {
        const result = (await vscode.commands.executeCommand(
          'codeMode.runFile',
          vscode.Uri.joinPath(folder, 'script', 'main.py'),
        )) as RunResult;
        assert.equal(result.backend, backend);
        assert.equal(
          result.stdout,
          'data next to the script 55\nmain.py script __main__ True\n',
          JSON.stringify(result.diagnostics),
        );
        const { explorer } = await api();
        const runs = (await explorer.getChildren(
          (await explorer.getChildren()).find((n) => n.kind === 'section' && n.section === 'runs'),
        )) as ExplorerNode[];
        const listed = runs.find((n) => n.kind === 'run' && n.record.run.runId === result.run_id);
        assert.equal(listed && explorer.getTreeItem(listed).label, 'main.py:1', 'your run is listed by file and line');
        const failed = (await vscode.commands.executeCommand(
          'codeMode.runFile',
          vscode.Uri.joinPath(folder, 'script', 'fails.py'),
        )) as RunResult;
        assert.equal(failed.diagnostics?.exception, 'ZeroDivisionError');
        assert.match(failed.diagnostics?.traceback ?? '', /script\/fails\.py", line 1/);
      } finally {
        await vscode.commands.executeCommand('codeMode.chooseBackend', 'python');
      }
    }
  });

  it('a run of yours has no time limit: 40 one-second steps from Run File finish', async function () {
    this.timeout(120_000);
    await openPython('import time\nfor step in range(40):\n    time.sleep(1)\nprint("finished", step + 1, "steps")\n');
    const result = (await vscode.commands.executeCommand('codeMode.runFile')) as RunResult;
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(result.stdout, 'finished 40 steps\n');
  });

  it("a failing run of yours marks the failing line in Problems until the file's next good run", async () => {
    const file = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, 'script', 'problem.py');
    fs.writeFileSync(file.fsPath, 'total = 1\nratio = total / 0\n');
    const failed = (await vscode.commands.executeCommand('codeMode.runFile', file)) as RunResult;
    assert.equal(failed.diagnostics?.exception, 'ZeroDivisionError');
    const [problem] = vscode.languages.getDiagnostics(file);
    assert.ok(problem, 'a Problems entry appears');
    assert.equal(problem.range.start.line, 1);
    assert.equal(problem.code, 'ZeroDivisionError');
    assert.match(problem.message, /division by zero/);
    // The runs channel says the error once: the traceback's last line, not again above it.
    const codeMode = await api();
    const channel = await until('the failed run in the runs channel', () => {
      const text = codeMode.runsChannelText();
      const run = text.slice(text.lastIndexOf(`── run ${failed.run_id}`));
      return run.includes('── failed') ? run : undefined;
    });
    assert.equal(channel.split('ZeroDivisionError: division by zero').length - 1, 1, channel);
    assert.match(channel, /Traceback \(most recent call last\)/);
    const editor = await vscode.window.showTextDocument(file);
    await editor.edit((edit) => edit.replace(new vscode.Range(1, 0, 1, 100), 'ratio = total / 2'));
    const good = (await vscode.commands.executeCommand('codeMode.runFile', file)) as RunResult;
    assert.equal(good.success, true, JSON.stringify(good.diagnostics));
    assert.deepEqual(vscode.languages.getDiagnostics(file), [], 'it clears on the next good run');
  });

  it('input() in a run of yours asks in an input box on both backends: typed answers arrive, Escape is EOFError', async () => {
    const asks = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, 'script', 'asks.py');
    const codeMode = await api();
    // The box is asked for before the runner types or the test closes it; both reach the workbench after it.
    let asked = codeMode.inputBoxesAsked();
    const asking = () => {
      const wanted = ++asked;
      return until('the input box to be asked for', () => codeMode.inputBoxesAsked() >= wanted);
    };
    for (const backend of ['python', 'pyodide'] as const) {
      await vscode.commands.executeCommand('codeMode.chooseBackend', backend);
      try {
        const answered = vscode.commands.executeCommand('codeMode.runFile', asks) as Thenable<RunResult>;
        await asking();
        // The runner types this into the input box and presses Enter (scripts/vscode-host/run.mjs).
        console.log(`[code-mode-test] type: Ada on ${backend}`);
        const result = await answered;
        assert.equal(result.backend, backend);
        assert.equal(
          result.stdout,
          `your name? Ada on ${backend}\ngot 'Ada on ${backend}'\n`,
          JSON.stringify(result.diagnostics),
        );
        const dismissed = vscode.commands.executeCommand('codeMode.runFile', asks) as Thenable<RunResult>;
        await asking();
        await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
        const eof = await dismissed;
        assert.equal(eof.diagnostics?.exception, 'EOFError');
        assert.match(eof.diagnostics?.message ?? '', /input was cancelled/);
      } finally {
        await vscode.commands.executeCommand('codeMode.chooseBackend', 'python');
      }
    }
  });

  it('interrupt stops while True: pass', async () => {
    const codeMode = await api();
    await openPython('print("spinning", flush=True)\nwhile True: pass\n');
    const pending = vscode.commands.executeCommand('codeMode.runFile') as Thenable<RunResult>;
    await until('the loop to start', () =>
      codeMode.history.all().some((r) => !r.result && r.stdout.includes('spinning')),
    );
    assert.equal(await vscode.commands.executeCommand('codeMode.interrupt'), true);
    const result = await pending;
    assert.equal(result.success, false);
    assert.equal(result.diagnostics?.error_type, 'CANCELLED');
    const after = (await vscode.commands.executeCommand('codeMode.runSelection')) as RunResult;
    assert.ok(after, 'the next run works');
  });

  it('the status bar item shows the backend of your runs, turns busy during a run, and its Stop interrupts', async () => {
    const codeMode = await api();
    await vscode.commands.executeCommand('codeMode.chooseBackend', 'python');
    try {
      await openPython('print("spinning", flush=True)\nwhile True: pass\n');
      await until('the item beside Python code', () => codeMode.runStatus().visible);
      assert.equal(codeMode.runStatus().text, '$(play-circle) Code Mode: Python');
      assert.match(codeMode.runStatus().tooltip, /workspace interpreter/);
      const pending = vscode.commands.executeCommand('codeMode.runFile') as Thenable<RunResult>;
      await until('the loop to start', () =>
        codeMode.history.all().some((r) => !r.result && r.stdout.includes('spinning')),
      );
      assert.deepEqual(
        [codeMode.runStatus().text, codeMode.runStatus().busy],
        ['$(sync~spin) Code Mode: Python', true],
      );
      // The item's click offers Stop first; accepting it interrupts the loop.
      const menu = vscode.commands.executeCommand('codeMode.statusMenu');
      assert.equal(await acceptWhenShown(menu), true, 'Stop found a run to interrupt');
      const result = await pending;
      assert.equal(result.diagnostics?.error_type, 'CANCELLED');
      assert.equal(codeMode.runStatus().busy, false);
      await vscode.commands.executeCommand('codeMode.chooseBackend', 'pyodide');
      await until(
        'the item to follow the setting',
        () => codeMode.runStatus().text === '$(play-circle) Code Mode: Pyodide',
      );
    } finally {
      await vscode.commands.executeCommand('codeMode.chooseBackend', 'python');
    }
  });
});
