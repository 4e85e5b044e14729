// The agent plugin the extension contributes (contributes.chatPlugins, plugin/): VS Code loads it where Copilot's
// agent host runs, and its own server then serves run_python beside the provider's. The agent host cannot run here
// (code-server has no agent-host runtime and no signed-in Copilot), so the test sets the context key the agent host
// sets, `agentHostEnabled`, and clears it after. Numbered to run after the provider's suite (see 01-activation).
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { api, sleep, until } from '../extensionApi';
import { toolText, untrusted } from '../suiteSetup';

const runPythonTools = () => vscode.lm.tools.filter((t) => /run_python$/.test(t.name)).map((t) => t.name);

/** Starts every MCP server VS Code knows of until `count` run_python tools are live. */
function runPythonToolsLive(count: number): Promise<string[]> {
  return until(
    `${count} run_python tools in vscode.lm.tools`,
    async () => {
      await Promise.race([
        vscode.commands.executeCommand('workbench.mcp.startServer', '*', {
          waitForLiveTools: true,
          autoTrustChanges: true,
        }),
        sleep(5000),
      ]);
      const names = runPythonTools();
      return names.length === count ? names : undefined;
    },
    120_000,
  );
}

(untrusted ? describe.skip : describe)('The agent plugin', function () {
  this.timeout(180_000);

  it("loads where the agent host runs, and its server runs Python beside the provider's", async () => {
    const codeMode = await api();
    /** Runs Python through `tool`; whether the run is the window's (the provider's server shares its engine). */
    const runThrough = async (tool: string, marker: string) => {
      const result = await vscode.lm.invokeTool(tool, {
        input: { code: `import sys\nprint("${marker} on", sys.platform)` },
        toolInvocationToken: undefined,
      });
      assert.match(toolText(result), new RegExp(`${marker} on emscripten`));
      return codeMode.history.all().some((r) => r.stdout.includes(`${marker} on`));
    };
    await runPythonToolsLive(1);
    try {
      await vscode.commands.executeCommand('setContext', 'agentHostEnabled', true);
      const both = await runPythonToolsLive(2);
      const inTheWindow = [];
      for (const [i, tool] of both.entries()) inTheWindow.push(await runThrough(tool, `plugin-probe-${i}`));
      // One is the provider's; the other is the plugin's own server, a process with an engine of its own.
      assert.deepEqual(inTheWindow.sort(), [false, true]);
    } finally {
      await vscode.commands.executeCommand('setContext', 'agentHostEnabled', false);
    }
    // Elsewhere the provider is the one server: no tool listed twice.
    const [left] = await runPythonToolsLive(1);
    assert.equal(await runThrough(left!, 'provider-after'), true, "the tool left is the provider's");
  });
});
