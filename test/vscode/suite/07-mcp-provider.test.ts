// The MCP server the extension provides to VS Code: run_python in vscode.lm.tools, the environment tool, the stdio
// transport, and the loopback endpoint's socket, token and protocol revisions. Numbered to keep its place in the
// run order (see 01-activation.test.ts).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { initializeBody, post } from '../../support/http';
import { loopbackUri } from '../../../src/vscode/loopbackSocket';
import { api, until } from '../extensionApi';
import { codeModeLmTools, toolText, untrusted } from '../suiteSetup';

(untrusted ? describe.skip : describe)('The MCP server provided to VS Code', function () {
  this.timeout(120_000);

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
