// Step 3: the Code Mode view container and its Tool Explorer: the sections, both backends, our tools, the
// workspace's external server and its tools, and Recent Runs before any run.
import { poll } from './checks.mjs';
import { sectionChildren } from './workbench.mjs';

export async function toolExplorer({ page, check, screenshot, explorerPane, resultsPane, treeRows }) {
  const activity = page.locator('.part.activitybar .action-item .action-label[aria-label^="Code Mode"]');
  check(
    'the activity bar has a "Code Mode" entry',
    await poll(() => activity.count(), 30_000),
    await activity
      .first()
      .getAttribute('aria-label')
      .catch(() => 'missing'),
  );
  await activity.first().click();
  const header = explorerPane().locator('.pane-header');
  check('the sidebar shows the "Tool Explorer" view', await poll(() => header.isVisible(), 15_000));
  // The tree gets the room while it is read (the list draws only the rows in view); the first run opens
  // the Results view again.
  await resultsPane()
    .locator('.pane-header[aria-expanded="true"]')
    .click()
    .catch(() => {});
  const wanted = ['Backends', 'Tools', 'External Servers', 'Recent Runs'];
  let rows = await poll(async () => {
    const r = await treeRows();
    return wanted.every((w) => r.some((x) => x.level === 1 && x.label === w)) &&
      sectionChildren(r, 'Backends').length >= 2
      ? r
      : undefined;
  }, 30_000);
  const message = await explorerPane()
    .locator('.pane-body .message')
    .first()
    .textContent({ timeout: 1000 })
    .catch(() => '');
  await screenshot('tool-explorer');
  rows ??= await treeRows();
  check(
    'the Tool Explorer shows no "no data provider" message',
    !/no data provider/i.test(message ?? ''),
    message?.trim() ? `message: "${message.trim()}"` : 'no message',
  );
  check(
    'the tree has the sections Backends, Tools, External Servers, Recent Runs',
    wanted.every((w) => rows.some((x) => x.level === 1 && x.label === w)),
    rows
      .filter((r) => r.level === 1)
      .map((r) => r.label)
      .join(', ') || 'no rows',
  );
  const backends = sectionChildren(rows, 'Backends');
  check(
    'Backends lists Pyodide and Workspace Python, not loaded yet',
    backends.some((b) => b.label.startsWith('Pyodide')) && backends.some((b) => b.label.startsWith('Workspace Python')),
    backends.map((b) => `${b.label}: ${b.description}`).join('; '),
  );
  // Our own tools matter to agents more than to people: the section starts folded, so it is opened first.
  const toolsRow = explorerPane()
    .locator('.monaco-list-row[aria-level="1"]')
    .filter({ has: page.locator('.label-name', { hasText: /^Tools$/ }) })
    .first();
  if (await toolsRow.count()) await toolsRow.click();
  const tools = await poll(async () => {
    const t = sectionChildren(await treeRows(), 'Tools');
    return t.some((x) => x.label === 'run_python') ? t : undefined;
  }, 30_000);
  check(
    'Tools lists the MCP tools (run_python among them)',
    tools,
    (tools ?? sectionChildren(await treeRows(), 'Tools')).map((t) => t.label).join(', '),
  );
  const servers = sectionChildren(await treeRows(), 'External Servers');
  check(
    "External Servers lists the workspace's mcp_servers.json server",
    servers.some((s) => s.label === 'memory'),
    servers.map((s) => `${s.label} ${s.description}`.trim()).join('; '),
  );
  // Expanding a server connects to it (stdio) and lists its tools under it.
  const memoryRow = explorerPane().locator('.monaco-list-row[aria-level="2"]', { hasText: 'memory' }).first();
  if (await memoryRow.count()) {
    await memoryRow.click();
    const memoryTools = await poll(async () => {
      const r = await treeRows();
      const i = r.findIndex((x) => x.level === 2 && x.label === 'memory');
      const under = [];
      for (const x of r.slice(i + 1)) {
        if (x.level < 3) break;
        under.push(x.label);
      }
      return under.length && !under.includes('Could not connect') ? under : undefined;
    }, 30_000);
    check(
      'expanding "memory" connects to it and lists its tools',
      memoryTools?.includes('create_entities'),
      (memoryTools ?? []).join(', ') || 'nothing listed',
    );
  }
  check(
    'Recent Runs says "No runs yet" and how to start one',
    sectionChildren(await treeRows(), 'Recent Runs').some((r) => r.label.startsWith('No runs yet: Ctrl+Alt+Enter')),
  );
}
