// Where the output of your runs goes: the Results view (shown on the first run, a badge afterwards), its cards,
// the runs channel, and Recent Runs. Runs after 01-activation.test.ts (see there why the numbered files keep their
// order): its first case is the window's first run of yours.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RunResult } from '../../../src/engine/types';
import { api, until } from '../extensionApi';
import type { ExplorerNode } from '../../../src/vscode/views/toolExplorer';
import { openPython, untrusted } from '../suiteSetup';

(untrusted ? describe.skip : describe)("Your runs' results: the Results view and the runs channel", function () {
  this.timeout(120_000);

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
});
