// Tools called from Python inside VS Code: a server from .vscode/mcp.json and VS Code's own tools, an agent's
// write asking you first, and the external server's tools in the Tool Explorer. Its cases run in order: the first
// creates the memory entity the others read. Numbered to keep its place in the run order (see 01-activation.test.ts).
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RunResult, ToolApprovalAnswer } from '../../../src/engine/types';
import type { ApprovalQuestion } from '../../../src/vscode/toolApproval';
import { api, until } from '../extensionApi';
import type { ExplorerNode } from '../../../src/vscode/views/toolExplorer';
import { codeModeLmTools, toolText, untrusted } from '../suiteSetup';

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
