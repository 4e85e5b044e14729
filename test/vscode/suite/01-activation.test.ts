// What a person meets once the extension has activated: no engine yet, the Tool Explorer's sections, the settings.
// The numbered files run first and in number order (index.ts loads suite files by name) because they share the
// window from its start, each meeting the state the ones before it left: this one needs the engine not created
// yet, 02 the window's first run of yours.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { api, EXTENSION_ID, until } from '../extensionApi';
import type { ExplorerNode } from '../../../src/vscode/views/toolExplorer';
import { untrusted } from '../suiteSetup';

(untrusted ? describe.skip : describe)('Code Mode as activated in a trusted workspace', function () {
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
});
