// The agent plugin (plugin/: Claude Code's layout) and the skill VS Code's chat loads from it
// (contributes.chatSkills): the skill is found where both look, named as VS Code requires (its frontmatter name is
// its folder's name), and the plugin's server is the bundled one beside it, or the published package when the
// plugin is copied on its own. Claude Code validating the plugin and connecting to its server both ways:
// test/mcp/npm-package.test.ts.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  name: string;
  bin: Record<string, string>;
  contributes: { chatSkills: { path: string }[] };
};

function frontmatter(file: string): Record<string, string> {
  const text = fs.readFileSync(file, 'utf8');
  const match = /^---\n([^]*?)\n---\n/.exec(text);
  assert.ok(match, `${file} starts with a frontmatter block`);
  return Object.fromEntries(
    match[1]!.split('\n').map((line) => {
      const at = line.indexOf(':');
      return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
    }),
  );
}

test("VS Code's skills are the plugin's, each named after its folder and saying when to use it", () => {
  const skills = manifest.contributes.chatSkills;
  assert.ok(skills.length > 0);
  for (const { path: skillPath } of skills) {
    const file = path.join(root, skillPath);
    assert.ok(fs.existsSync(file), skillPath);
    assert.equal(path.basename(file), 'SKILL.md');
    assert.ok(file.startsWith(path.join(root, 'plugin', 'skills') + path.sep), `${skillPath} is the plugin's`);
    const { name, description } = frontmatter(file);
    assert.equal(name, path.basename(path.dirname(file)), 'VS Code loads a skill only when its name is its folder');
    assert.ok((description ?? '').length > 40, 'a description says when to use it');
  }
  // vsce ships only what .vscodeignore lets through; npm packs the whole plugin (.npmignore).
  assert.match(fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8'), /^!plugin\/skills\/\*\*$/m);
  assert.match(fs.readFileSync(path.join(root, '.npmignore'), 'utf8'), /^!\/plugin\/$/m);
});

test("the plugin's server is started by its launcher, from the plugin's own folder", () => {
  const plugin = JSON.parse(fs.readFileSync(path.join(root, 'plugin', '.claude-plugin', 'plugin.json'), 'utf8')) as {
    name: string;
  };
  assert.equal(plugin.name, manifest.name);
  const servers = JSON.parse(fs.readFileSync(path.join(root, 'plugin', '.mcp.json'), 'utf8')) as {
    mcpServers: Record<string, { command: string; args: string[] }>;
  };
  // VS Code and Claude Code both put the plugin's folder for this token.
  assert.deepEqual(servers.mcpServers[manifest.name], { command: 'node', args: ['${CLAUDE_PLUGIN_ROOT}/server.mjs'] });
  // Which server it starts, both ways, is shown through Claude Code in test/mcp/npm-package.test.ts; npx -y
  // <package> runs the package's only bin.
  assert.equal(Object.keys(manifest.bin).length, 1);
});
