// The extension inside a real VS Code (code-server's workbench, Node extension host).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { buildWheel } from '../../support/wheel';
import { initializeBody, post } from '../../support/http';
import { loopbackUri } from '../../../src/vscode/loopbackSocket';
import type { PackagesResult, RunResult, ToolApprovalAnswer } from '../../../src/engine/types';
import type { ApprovalQuestion } from '../../../src/vscode/toolApproval';
import { api, EXTENSION_ID, sleep, until } from '../extensionApi';
import type { ExplorerNode } from '../../../src/vscode/views/toolExplorer';
import { startLocalJupyterServer } from '../../../src/engine/backends/jupyter/localServer';
import { silentLogger } from '../../../src/engine/types';

const untrusted = process.env.CODE_MODE_TEST_EXPECT_TRUSTED === '0';

async function openPython(content: string): Promise<vscode.TextEditor> {
  const document = await vscode.workspace.openTextDocument({ language: 'python', content });
  return vscode.window.showTextDocument(document);
}

/** Starts the provider's MCP server the way the reference recipe does and waits for its tools. */
async function codeModeLmTools(): Promise<readonly vscode.LanguageModelToolInformation[]> {
  return until(
    'Code Mode MCP tools in vscode.lm.tools',
    async () => {
      await Promise.race([
        vscode.commands.executeCommand('workbench.mcp.startServer', '*', {
          waitForLiveTools: true,
          autoTrustChanges: true,
        }),
        sleep(5000),
      ]);
      const tools = vscode.lm.tools.filter((t) => /run_python/.test(t.name));
      return tools.length ? tools : undefined;
    },
    90_000,
  );
}

function toolText(result: vscode.LanguageModelToolResult): string {
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
}

(untrusted ? describe.skip : describe)('Code Mode in a trusted workspace', function () {
  this.timeout(120_000);

  it('activates lazily and cheaply', async () => {
    const codeMode = await api();
    assert.equal(codeMode.container.engine.isCreated, false, 'no engine is created at activation');
    console.log(`[measure] activation took ${codeMode.activationMs.toFixed(1)} ms`);
  });

  it('the tool explorer lists backends, tools, servers and runs', async () => {
    const { explorer } = await api();
    const sections = await explorer.getChildren();
    const labels = sections.map((s) => explorer.getTreeItem(s).label);
    assert.deepEqual(labels, [
      'Backends',
      'Tools',
      "VS Code's Tools",
      'External Servers',
      'Agent Scripts',
      'Recent Runs',
    ]);
    const items = sections.map((s) => explorer.getTreeItem(s));
    // Tools are folded; VS Code's own are a section of their own, not a server the person configured.
    assert.deepEqual(
      items.filter((i) => i.collapsibleState === vscode.TreeItemCollapsibleState.Collapsed).map((i) => i.label),
      ['Tools', "VS Code's Tools"],
    );
    assert.match(String(items[4]!.description), /agents/);
    const servers = (await explorer.getChildren(sections[3])) as ExplorerNode[];
    assert.ok(
      !servers.some((n) => n.kind === 'server' && n.status.name === 'vscode'),
      `External Servers: ${servers.map((n) => explorer.getTreeItem(n).label).join(', ')}`,
    );
    const backends = await explorer.getChildren(sections[0]);
    assert.deepEqual(
      backends.map((b) => explorer.getTreeItem(b).label),
      ['Pyodide (WebAssembly)', 'Workspace Python'],
    );
    const tools = (await explorer.getChildren(sections[1])) as ExplorerNode[];
    assert.ok(
      tools.some((t) => t.kind === 'tool' && t.tool.name === 'run_python'),
      'run_python listed',
    );
    // VS Code's Tools are the ones Python can use: VS Code's chat-internal tools are left out. VS Code registers
    // its chat's tools as its chat contributions load, which may be after this suite starts: wait for them.
    const internalNames = (): string[] =>
      vscode.lm.tools
        .map((t) => t.name)
        .filter(
          (name) =>
            /_internal$|confirmation/.test(name) || ['task_complete', 'runSubagent', 'inline_chat_exit'].includes(name),
        );
    const internal = await until("VS Code's chat-internal tools in vscode.lm.tools", () =>
      internalNames().length > 0 ? internalNames() : undefined,
    );
    const listed = ((await explorer.getChildren(sections[2])) as ExplorerNode[]).map((n) =>
      String(explorer.getTreeItem(n).label),
    );
    assert.deepEqual(
      listed.filter((label) => internal.includes(label)),
      [],
      `listed: ${listed.join(', ')}`,
    );
    assert.ok(
      listed.length > 0 && listed.every((label) => vscode.lm.tools.some((t) => t.name === label)),
      `listed: ${listed.join(', ')}`,
    );
  });

  it("settings read right to a newcomer: your runs' first, the agents' saying so, Markdown with links, no language category", () => {
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as {
      categories: string[];
      contributes: {
        configuration: {
          title: string;
          order: number;
          properties: Record<string, { markdownDescription?: string; description?: string; order: number }>;
        }[];
      };
    };
    const sections = [...manifest.contributes.configuration].sort((a, b) => a.order - b.order);
    assert.deepEqual(
      sections.map((section) => section.title),
      ['Your Runs', "Agents' Runs (MCP)", 'Interpreters', 'Tools Python Code Can Call', 'Guardrails'],
    );
    const first = Object.entries(sections[0]!.properties).sort(([, a], [, b]) => a.order - b.order)[0]!;
    assert.equal(first[0], 'codeMode.run.backend');
    const agents = sections[1]!.properties['codeMode.defaultBackend']!;
    assert.match(
      agents.markdownDescription ?? '',
      /^Backend of agents' runs .* Your own runs use `#codeMode\.run\.backend#`\.$/,
    );
    const all = sections.flatMap((section) => Object.entries(section.properties));
    assert.deepEqual(
      all.filter(([, p]) => !p.markdownDescription || p.description !== undefined).map(([key]) => key),
      [],
      'every setting has a Markdown description',
    );
    // Every link names a setting there is.
    const keys = new Set(all.map(([key]) => key));
    const links = all.flatMap(([, p]) =>
      [...(p.markdownDescription ?? '').matchAll(/#(codeMode\.[\w.]+)#/g)].map((m) => m[1]!),
    );
    assert.ok(links.length >= 5 && links.every((link) => keys.has(link)), links.join(', '));
    assert.ok(!manifest.categories.includes('Programming Languages'));
    // VS Code registered them: the values resolve through the configuration API.
    assert.equal(vscode.workspace.getConfiguration('codeMode').inspect('run.backend')?.defaultValue, 'python');
  });

  it('the first run leaves the editor as it was: one group, the code editor active, results in the sidebar, no output panel', async () => {
    const codeMode = await api();
    const file = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, 'hello.py');
    const editor = await vscode.window.showTextDocument(file);
    const channelReveals = codeMode.runsChannelReveals();
    const result = (await vscode.commands.executeCommand('codeMode.runFile')) as RunResult;
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(vscode.window.tabGroups.all.length, 1, 'the editor area is not split');
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), editor.document.uri.toString());
    assert.equal(codeMode.results.isVisible(), true, 'the results view is shown');
    assert.equal(codeMode.runsChannelReveals(), channelReveals, 'the runs channel is written, not revealed');
    const newest = await until('the run in the results view', async () => (await codeMode.results.probe()).pop());
    assert.equal(newest.runId, result.run_id);
  });

  it('a later run leaves the person in the Explorer: a badge and the status bar say a result is there, no Output panel', async () => {
    const codeMode = await api();
    const file = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, 'hello.py');
    await vscode.window.showTextDocument(file);
    await vscode.commands.executeCommand('workbench.view.explorer');
    await until('the Results view out of sight', () => !codeMode.results.isVisible());
    const channelReveals = codeMode.runsChannelReveals();
    const result = (await vscode.commands.executeCommand('codeMode.runFile')) as RunResult;
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(codeMode.results.isVisible(), false, 'the side bar stays on the Explorer');
    assert.equal(codeMode.runsChannelReveals(), channelReveals, 'the Output panel does not open either');
    assert.equal(codeMode.results.unseenRuns, 1, 'the badge counts the result');
    assert.match(codeMode.runStatus().text, /1 new result/);
    assert.equal(codeMode.runStatus().visible, true);
    // Showing the results is seeing them: the badge and the status bar's note go.
    await vscode.commands.executeCommand('codeMode.openResults');
    await until('the results seen', () => codeMode.results.isVisible() && codeMode.results.unseenRuns === 0);
    assert.doesNotMatch(codeMode.runStatus().text, /new result/);
  });

  it("a person's run shows its output in program order and attaches no file it only names", async () => {
    const codeMode = await api();
    const folder = vscode.workspace.workspaceFolders![0]!.uri;
    await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(folder, 'data.csv'), Buffer.from('city,temp\nOslo,4\n'));
    const file = vscode.Uri.joinPath(folder, 'ordered.py');
    await vscode.workspace.fs.writeFile(
      file,
      Buffer.from('print("read from data.csv")\ndisplay("THE-TABLE")\nprint("done")\n'),
    );
    await vscode.window.showTextDocument(file);
    const result = (await vscode.commands.executeCommand('codeMode.runFile')) as RunResult;
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.deepEqual(
      result.displays,
      [{ mime: 'text/plain', data: 'THE-TABLE' }],
      'only what the code displayed, not data.csv',
    );
    await vscode.commands.executeCommand('codeMode.openResults');
    const card = await until('the ordered card', async () =>
      (await codeMode.results.probe()).find((c) => c.runId === result.run_id && c.status === 'ok'),
    );
    const at = (text: string) => card.text.indexOf(text);
    assert.ok(
      at('read from data.csv') >= 0 && at('read from data.csv') < at('THE-TABLE') && at('THE-TABLE') < at('done'),
      card.text,
    );
    assert.ok(!card.text.includes('Oslo'), 'the csv was not attached');
    // The runs channel follows the same order.
    const channel = codeMode.runsChannelText();
    const from = channel.lastIndexOf('read from data.csv');
    assert.ok(
      from >= 0 &&
        from < channel.indexOf('[display text/plain]', from) &&
        channel.indexOf('[display text/plain]', from) < channel.indexOf('done', from),
      channel.slice(-400),
    );
  });

  it('the runs channel writes a progress bar once, in its last state, and no colour codes', async () => {
    const codeMode = await api();
    const engine = await codeMode.container.engine.get();
    const result = await engine.run({
      code:
        'import sys\nprint("\\x1b[1;32mready\\x1b[0m")\n' +
        'for i in range(1, 41):\n    sys.stderr.write(f"\\r{i}/40 files"); sys.stderr.flush()\n' +
        'sys.stderr.write("\\n")\nprint("finished")',
      backend: 'pyodide',
    });
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    // The channel hears the run's events as the window does, after the run's result: wait for its footer.
    const run = await until('the run and its footer in the runs channel', () => {
      const channel = codeMode.runsChannelText();
      const from = channel.lastIndexOf(`── run ${result.run_id}`);
      return from >= 0 && /── ok in \d+ ms/.test(channel.slice(from)) ? channel.slice(from) : undefined;
    });
    const lines = run.split('\n');
    const at = (line: string) => lines.indexOf(line);
    assert.ok(at('ready') > 0 && at('ready') < at('40/40 files') && at('40/40 files') < at('finished'), run);
    assert.ok(!run.includes('\x1b') && !run.includes('\r') && !run.includes('39/40'), JSON.stringify(run));
  });

  it("a run from run_python's tool form is named after the tool, in the card and in Recent Runs", async () => {
    const codeMode = await api();
    const reply = await codeMode.results.invokeFromForm(undefined, 'run_python', { code: 'print("from the form")' });
    assert.equal(reply.ok, true, JSON.stringify(reply.content));
    const record = await until('the form run in the history', () =>
      codeMode.history.all().find((r) => r.run.code === 'print("from the form")' && r.result),
    );
    assert.deepEqual([record.run.origin, record.run.tool], ['explorer', 'run_python']);
    const { explorer } = codeMode;
    const runs = (await explorer.getChildren(
      (await explorer.getChildren()).find((n) => n.kind === 'section' && n.section === 'runs'),
    )) as ExplorerNode[];
    const node = runs.find((n) => n.kind === 'run' && n.record.run.runId === record.run.runId)!;
    assert.equal(explorer.getTreeItem(node).label, 'run_python: print("from the form")');
    await vscode.commands.executeCommand('codeMode.openResults');
    const card = await until('the form run card', async () =>
      (await codeMode.results.probe()).find((c) => c.runId === record.run.runId),
    );
    assert.match(card.text, /run_python form/);
  });

  it('the runs channel keeps the head and the tail of a capped output, and says how much is left out', async () => {
    const codeMode = await api();
    await openPython('for i in range(2000):\n    print(f"line {i:05d}", "x" * 90)\n');
    const result = (await vscode.commands.executeCommand('codeMode.runFile')) as RunResult;
    assert.equal(result.truncated, true, 'about 200 KB passes the 64 KB cap');
    const channel = await until('the run in the channel', () => {
      const text = codeMode.runsChannelText();
      const run = text.slice(text.lastIndexOf(`── run ${result.run_id}`));
      return run.includes('── ok in') ? run : undefined;
    });
    const first = channel.indexOf('line 00000 xxx');
    const leftOut = channel.search(/\n… \d+ KB of stdout left out; the first and the last part are kept/);
    const last = channel.indexOf('line 01999 xxx');
    assert.ok(
      first > 0 && leftOut > first && last > leftOut,
      `head, the left-out line, then the tail:\n${channel.slice(0, 300)}\n…\n${channel.slice(-300)}`,
    );
  });

  it('run selection streams into the output channel, the history and the results webview', async () => {
    const codeMode = await api();
    const editor = await openPython(
      'import sys\nfor i in range(3):\n    print("line", i)\nprint("to stderr", file=sys.stderr)\n',
    );
    editor.selection = new vscode.Selection(0, 0, 4, 0);
    const seen: string[] = [];
    const sub = codeMode.container.engine.onRunEvent((e) => {
      if (e.type === 'stdout') seen.push(e.text);
    });
    const result = (await vscode.commands.executeCommand('codeMode.runSelection')) as RunResult;
    sub.dispose();
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(result.stdout, 'line 0\nline 1\nline 2\n');
    assert.equal(result.stderr, 'to stderr\n');
    assert.match(seen.join(''), /line 0\nline 1\nline 2\n/);
    assert.equal(codeMode.history.get(result.run_id)?.result?.success, true);
    const runsText = await until('the run in the output channel', () => {
      const text = codeMode.runsChannelText();
      return text.includes('line 2') ? text : undefined;
    });
    // Your runs: the workspace interpreter, in a session of your own (the agents' is "default").
    assert.match(runsText, /── run .* Python · session "interactive" · command/);
    assert.match(runsText, /line 0\nline 1\nline 2\n/);
    assert.match(runsText, /── ok in [\d.]+ ms ──/);
    const shown = await until('the run card in the webview', async () => {
      const cards = await codeMode.results.probe();
      return cards.find((c) => c.runId === result.run_id && c.status === 'ok');
    });
    assert.match(shown.text, /line 0\s+line 1\s+line 2/);
  });

  it('code files are listed in the explorer, open in an editor and run; a past run re-runs', async () => {
    const codeMode = await api();
    await codeMode.container.stores.codeFiles.write('explorer_demo.py', 'print("from a code file", 6 * 7)\n', 'create');
    const { explorer } = codeMode;
    const sections = await explorer.getChildren();
    const files = (await explorer.getChildren(
      sections.find((n) => n.kind === 'section' && n.section === 'files'),
    )) as ExplorerNode[];
    const demo = files.find((n) => n.kind === 'codeFile' && n.file.name === 'explorer_demo.py');
    assert.ok(demo, 'the code file is listed');
    const item = explorer.getTreeItem(demo);
    await vscode.commands.executeCommand(item.command!.command, ...(item.command!.arguments ?? []));
    assert.match(vscode.window.activeTextEditor?.document.getText() ?? '', /from a code file/);
    const ran = (await vscode.commands.executeCommand('codeMode.explorer.runCodeFile', demo)) as RunResult;
    assert.equal(ran.stdout, 'from a code file 42\n');
    const runNode = (
      (await explorer.getChildren(sections.find((n) => n.kind === 'section' && n.section === 'runs'))) as ExplorerNode[]
    ).find((n) => n.kind === 'run' && n.record.run.runId === ran.run_id);
    assert.ok(runNode, 'the run is in Recent Runs');
    const again = (await vscode.commands.executeCommand('codeMode.explorer.rerun', runNode)) as RunResult;
    assert.equal(again.stdout, 'from a code file 42\n');
    assert.notEqual(again.run_id, ran.run_id);
  });

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

  it('opening a Python file keeps a spare Pyodide interpreter ready; codeMode.pyodide.warmSpare off ends it', async () => {
    const codeMode = await api();
    const engine = await codeMode.container.engine.get();
    await openPython('print("a spare is started for the runs to come")\n');
    const ready = () => (engine.spareInfo()?.state === 'ready' ? engine.spareInfo() : undefined);
    const spare = await until('a ready spare Pyodide interpreter', ready, 180_000);
    assert.ok(spare.pid, 'the spare is a running host process');
    const settings = vscode.workspace.getConfiguration('codeMode');
    await settings.update('pyodide.warmSpare', false, vscode.ConfigurationTarget.Global);
    try {
      await until('the spare to be ended', () => engine.spareInfo() === undefined || undefined);
    } finally {
      await settings.update('pyodide.warmSpare', undefined, vscode.ConfigurationTarget.Global);
    }
    const again = await until('a spare again once the setting is back on', ready, 180_000);
    assert.notEqual(again.pid, spare.pid);
  });

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
    const asking = () =>
      until('the question to be asked', () =>
        codeMode.history.all().some((r) => !r.result && r.stdout.includes('your name? ')),
      ).then(() => sleep(500));
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
      await sleep(500);
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      assert.equal(await menu, true, 'Stop found a run to interrupt');
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

  it('the MCP provider serves run_python to vscode.lm.tools on both backends', async () => {
    const codeMode = await api();
    const tools = await codeModeLmTools();
    const runPython = tools[0].name;
    for (const backend of ['pyodide', 'python']) {
      const result = await vscode.lm.invokeTool(runPython, {
        input: { code: `import sys\nprint("from the agent on", sys.platform)`, backend },
        toolInvocationToken: undefined,
      });
      assert.match(toolText(result), new RegExp(`from the agent on ${backend === 'pyodide' ? 'emscripten' : 'linux'}`));
    }
    // Agent runs land in the same history as the person's.
    assert.ok(codeMode.history.all().some((r) => r.run.origin === 'mcp' && r.stdout.includes('from the agent')));
  });

  it('a default changed by the agent shows up in VS Code settings, and the environment reports it', async () => {
    // On a fresh profile VS Code discovers extension MCP servers when chat asks; here the test activates us.
    await api();
    await codeModeLmTools();
    const environment = vscode.lm.tools.find((t) => /code-mode.*_environment$/.test(t.name));
    assert.ok(environment, 'environment is served');
    const config = () => vscode.workspace.getConfiguration('codeMode');
    try {
      // VS Code hands the model the structured content when a tool returns it.
      const changed = JSON.parse(
        toolText(
          await vscode.lm.invokeTool(environment.name, {
            input: { key: 'timeout_s', value: 12 },
            toolInvocationToken: undefined,
          }),
        ),
      );
      assert.equal(changed.settings.timeout_s, 12);
      assert.equal(config().get('timeoutSeconds'), 12);
      const env = JSON.parse(
        toolText(await vscode.lm.invokeTool(environment.name, { input: {}, toolInvocationToken: undefined })),
      );
      assert.equal(env.limits.timeout_s, 12);
      assert.ok(env.external_servers.some((s: { name: string }) => s.name === 'memory'));
    } finally {
      await config().update('timeoutSeconds', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('the stdio transport setting switches the provider to the bundled CLI', async () => {
    const codeMode = await api();
    const config = vscode.workspace.getConfiguration('codeMode');
    await config.update('mcp.transport', 'stdio', vscode.ConfigurationTarget.Global);
    try {
      const marker = `stdio-${Date.now()}`;
      const text = await until(
        'run_python served by the CLI',
        async () => {
          const [tool] = await codeModeLmTools();
          const result = await vscode.lm.invokeTool(tool.name, {
            input: { code: `import os\nprint("${marker}", os.getpid())` },
            toolInvocationToken: undefined,
          });
          const out = toolText(result);
          // Until VS Code restarts the server, the in-process endpoint may still answer: wait for the CLI.
          return out.includes(marker) && !codeMode.history.all().some((r) => r.run.code.includes(marker))
            ? out
            : undefined;
        },
        90_000,
      );
      assert.match(text, new RegExp(`${marker} \\d+`));
    } finally {
      await config.update('mcp.transport', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('the MCP endpoint is a socket only this user can reach (no port to forward), and refuses requests without the token or with a browser Origin', async () => {
    const codeMode = await api();
    const endpoint = await codeMode.container.mcp.loopback();
    const socketPath = endpoint.socketPath;
    assert.ok(socketPath, `a socket, not a TCP port: ${endpoint.url}`);
    assert.equal(fs.statSync(socketPath).isSocket(), true);
    assert.equal(fs.statSync(path.dirname(socketPath)).mode & 0o077, 0, 'its folder is private to this user');
    assert.equal(loopbackUri(endpoint).toString(true), `unix:${socketPath}#/mcp`, 'what VS Code is given');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal((await post(endpoint.url, {}, body, socketPath)).status, 401);
    const browser = await post(
      endpoint.url,
      { authorization: `Bearer ${endpoint.token}`, origin: 'https://example.com' },
      body,
      socketPath,
    );
    assert.equal(browser.status, 403);
  });

  it('the MCP endpoint serves both protocol revisions: a 2025 initialize and a 2026 server/discover', async () => {
    const endpoint = await (await api()).container.mcp.loopback();
    const auth = { authorization: `Bearer ${endpoint.token}` };
    const legacy = await post(endpoint.url, auth, initializeBody, endpoint.socketPath);
    assert.equal(legacy.status, 200, legacy.body);
    assert.match(legacy.body, /"serverInfo":\{"name":"code-mode-python"/);
    const discover = await post(
      endpoint.url,
      { ...auth, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'server/discover',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
      endpoint.socketPath,
    );
    assert.equal(discover.status, 200, discover.body);
    assert.match(discover.body, /"supportedVersions":\[[^\]]*"2026-07-28"/);
    assert.match(discover.body, /"resultType":"complete"/);
  });
});

(untrusted ? describe : describe.skip)('Code Mode in an untrusted workspace', function () {
  this.timeout(120_000);

  it('workspace Python is off, Pyodide still runs, and the UI says why', async () => {
    assert.equal(vscode.workspace.isTrusted, false, 'the runner opened an untrusted workspace');
    const codeMode = await api();
    const engine = await codeMode.container.engine.get();
    const refused = await engine.run({ code: 'print(1)', backend: 'python' });
    assert.equal(refused.success, false);
    assert.match(refused.diagnostics?.message ?? '', /not trusted/);
    const ok = await engine.run({ code: 'print(1)', backend: 'pyodide' });
    assert.equal(ok.stdout, '1\n');
    // Jupyter kernels are not sandboxed either: a server set in the settings stays unused.
    await vscode.workspace
      .getConfiguration('codeMode')
      .update('jupyter.url', 'local', vscode.ConfigurationTarget.Global);
    try {
      await until('the jupyter backend to be configured', () => engine.backendKinds.includes('jupyter'));
      const kernel = await engine.run({ code: 'print(1)', backend: 'jupyter' });
      assert.match(kernel.diagnostics?.message ?? '', /not trusted/);
    } finally {
      await vscode.workspace
        .getConfiguration('codeMode')
        .update('jupyter.url', undefined, vscode.ConfigurationTarget.Global);
    }
    await openPython('print("yours")\n');
    const yours = (await vscode.commands.executeCommand('codeMode.runSelection')) as RunResult;
    assert.deepEqual(
      [yours.backend, yours.session, yours.stdout],
      ['pyodide', 'interactive', 'yours\n'],
      'your runs fall back to Pyodide in Restricted Mode',
    );
    // The refused run has a card that says why, not a bare error code.
    const refusedCard = await until('the refused run in the results view', async () =>
      (await codeMode.results.probe()).find((c) => c.runId === refused.run_id),
    );
    assert.match(refusedCard.text, /Not run/);
    assert.match(refusedCard.text, /not trusted \(Restricted Mode\)/);
    assert.doesNotMatch(refusedCard.text, /INVALID_ARGUMENT/);
    const { explorer } = codeMode;
    const [backendsSection] = await explorer.getChildren();
    const python = (await explorer.getChildren(backendsSection))
      .map((n) => explorer.getTreeItem(n))
      .find((i) => i.label === 'Workspace Python');
    assert.equal(python?.description, 'disabled');
    assert.match(String(python?.tooltip), /not trusted/);
  });
});

(untrusted ? describe.skip : describe)('Code mode inside VS Code', function () {
  this.timeout(180_000);

  it('Python calls a server from .vscode/mcp.json and a VS Code tool through tools.vscode', async () => {
    const codeMode = await api();
    await codeModeLmTools();
    const memoryViaVscode = await until(
      'VS Code to run the memory server from .vscode/mcp.json',
      () => vscode.lm.tools.find((t) => /read_graph/.test(t.name))?.name,
    );
    const engine = await codeMode.container.engine.get();
    const result = await engine.run({
      code: [
        'from code_mode import tools',
        'tools.memory.create_entities(entities=[{"name": "FromVSCode", "entityType": "test", "observations": ["bridged"]}])',
        'print(sorted(e["name"] for e in tools.memory.read_graph()["entities"]))',
        `graph = tools.vscode.${memoryViaVscode.replace(/[^A-Za-z0-9_]/g, '_')}()`,
        'print("via vscode:", "FromVSCode" in str(graph))',
        'print("own tools hidden:", not any("code_mode" in n for n in dir(tools.vscode)))',
      ].join('\n'),
      backend: 'python',
      timeoutS: 60,
      // Your own run, as Run File starts it: its tool calls count as approved by you (codeMode.tools.approvePersonRuns).
      origin: 'command',
      toolApprovals: codeMode.container.toolApprovals.approvals,
    });
    assert.equal(result.success, true, `${JSON.stringify(result.diagnostics)}\n${result.stdout}`);
    assert.match(result.stdout, /\['FromVSCode'\]/);
    assert.match(result.stdout, /via vscode: True/);
    assert.match(result.stdout, /own tools hidden: True/);
    // VS Code's own tools keep VS Code's confirmation: code mode does not ask about them a second time.
    assert.deepEqual(
      result.tool_calls?.map(
        (c) => `${c.server}.${c.tool.startsWith('mcp_') ? 'mcp_…' : c.tool} ${c.ok} ${c.approval}`,
      ),
      [
        'memory.create_entities true policy-allow',
        'memory.read_graph true read-only',
        'vscode.mcp_… true policy-allow',
      ],
    );
  });

  it("an agent's write from Python waits for your answer, goes ahead only on a yes, and its card and the runs channel list the calls", async () => {
    const codeMode = await api();
    // VS Code refuses to show a modal dialog while extension tests run (its dialog service throws), so nobody can click
    // the real one here: the test hook answers in its place, and gets the exact text the modal would show.
    assert.ok(codeMode.testHooks, 'the test hooks exist while extension tests run');
    const runPython = (await codeModeLmTools())[0]!.name;
    const asked: ApprovalQuestion[] = [];
    const answers: ToolApprovalAnswer[] = ['deny', 'session'];
    codeMode.testHooks.answerToolApprovals(async (question) => {
      asked.push(question);
      return answers.shift() ?? 'deny';
    });
    const agentWrites = async (name: string) => {
      const code = [
        'from code_mode import tools',
        'try:',
        `    tools.memory.add_observations(observations=[{"entityName": "FromVSCode", "contents": [${JSON.stringify(name)}]}])`,
        'except PermissionError as e:',
        '    print("refused:", e)',
        'print("observed:", [o for e in tools.memory.read_graph()["entities"] for o in e["observations"]])',
      ].join('\n');
      const text = toolText(
        await vscode.lm.invokeTool(runPython, { input: { code, backend: 'python' }, toolInvocationToken: undefined }),
      );
      return JSON.parse(text.slice(text.indexOf('{"success"'))) as RunResult;
    };
    const approvals = (run: RunResult) => run.tool_calls?.map((c) => `${c.tool} ${c.ok} ${c.approval}`);
    try {
      const denied = await agentWrites('refused note');
      assert.match(
        denied.stdout,
        /refused: memory\.add_observations was not called: a person declined the call to memory\.add_observations/,
      );
      assert.doesNotMatch(denied.stdout, /observed: .*refused note/, 'nothing reached the tool');
      assert.equal(asked.length, 1);
      assert.equal(asked[0]!.message, 'Allow Python code to call memory.add_observations?');
      assert.match(asked[0]!.detail, /not marked read-only/);
      // The same rendering as over MCP (questionText.ts), whose hostile shapes the unit suite covers.
      assert.match(
        asked[0]!.detail,
        /\n"observations": \[\{"entityName": "FromVSCode", "contents": \["refused note"\]\}\]\n/,
      );
      assert.match(asked[0]!.detail, /From an agent \(MCP\): run [\w-]+, session default/);
      const allowed = await agentWrites('allowed note');
      assert.match(allowed.stdout, /observed: .*'allowed note'/);
      assert.deepEqual(approvals(allowed), ['add_observations true asked-allowed', 'read_graph true read-only']);
      const again = await agentWrites('second note');
      assert.match(again.stdout, /observed: .*'second note'/);
      assert.equal(asked.length, 2, '"Allow this tool for this session" is not asked again in this window');
      assert.deepEqual(approvals(again), ['add_observations true session-allowed', 'read_graph true read-only']);
      assert.deepEqual(approvals(denied), ['add_observations false denied', 'read_graph true read-only']);
      await codeMode.results.reveal(denied.run_id);
      const card = await until('the refused run on its card', async () =>
        (await codeMode.results.probe()).find((c) => c.runId === denied.run_id && c.status === 'ok'),
      );
      assert.match(card.text, /Tool calls · 2 · 1 refused/);
      assert.match(card.text, /memory\.add_observations\s*not called\s*denied/);
      assert.match(card.text, /memory\.read_graph\s*ok · \d+ ms\s*read-only/);
      const channel = await until('the calls in the runs channel', () =>
        codeMode.runsChannelText().includes('(session-allowed)') ? codeMode.runsChannelText() : undefined,
      );
      assert.match(channel, /\[tool\] memory\.add_observations refused \(denied\)/);
      assert.match(channel, /\[tool\] memory\.add_observations ok \d+ ms \(asked-allowed\)/);
    } finally {
      codeMode.testHooks.answerToolApprovals(undefined);
    }
  });

  it('the tool explorer lists the external server and invokes one of its tools', async () => {
    const { explorer, results } = await api();
    const sections = await explorer.getChildren();
    const servers = (await explorer.getChildren(
      sections.find((n) => n.kind === 'section' && n.section === 'servers'),
    )) as ExplorerNode[];
    const memory = servers.find((n) => n.kind === 'server' && n.status.name === 'memory');
    assert.ok(memory, `memory listed among ${servers.map((n) => explorer.getTreeItem(n).label).join(', ')}`);
    const tools = (await explorer.getChildren(memory)) as ExplorerNode[];
    const readGraph = tools.find((n) => n.kind === 'externalTool' && n.tool.name === 'read_graph');
    assert.ok(readGraph, 'read_graph listed under memory');
    const reply = await results.invokeFromForm(
      readGraph.kind === 'externalTool' ? readGraph.tool.server : undefined,
      'read_graph',
      {},
    );
    assert.equal(reply.ok, true);
    assert.match(JSON.stringify(reply.content), /FromVSCode/);
  });
});
