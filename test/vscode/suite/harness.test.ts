/// <reference types="mocha" />
// Proves the real-VS-Code harness itself, independent of the extension's features.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

const EXTENSION_ID = 'code-mode.code-mode-python';

describe('real VS Code test harness', () => {
  it('runs inside VS Code >= 1.101', () => {
    const [major, minor] = vscode.version.split('.').map(Number);
    assert.ok(major > 1 || (major === 1 && minor >= 101), `VS Code ${vscode.version} is older than 1.101`);
    console.log(
      `VS Code ${vscode.version}, Node ${process.version}, remoteName=${vscode.env.remoteName ?? '(local)'}, uiKind=${vscode.env.uiKind}`,
    );
  });

  it(`lists the extension under development as ${EXTENSION_ID}`, () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} not found by vscode.extensions.getExtension`);
    assert.equal(ext.packageJSON.name, 'code-mode-python');
    assert.equal(ext.packageJSON.publisher, 'code-mode');
    assert.ok(fs.existsSync(path.join(ext.extensionPath, 'package.json')), `no package.json at ${ext.extensionPath}`);
  });

  it('opens the workspace folder', () => {
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.equal(
      folders.length,
      1,
      `expected one workspace folder, got ${folders.map((f) => f.uri.toString()).join(', ') || 'none'}`,
    );
    const expected = process.env.CODE_MODE_TEST_WORKSPACE;
    if (expected) assert.equal(path.resolve(folders[0].uri.fsPath), path.resolve(expected));
    assert.ok(
      fs.existsSync(path.join(folders[0].uri.fsPath, 'hello.py')),
      'fixture file hello.py missing from the workspace',
    );
  });

  it('reports workspace trust as the runner requested', () => {
    // run.mjs sets CODE_MODE_TEST_EXPECT_TRUSTED to 1 (default) or 0 (--no-trust).
    const expected = process.env.CODE_MODE_TEST_EXPECT_TRUSTED;
    if (expected === undefined) return; // e.g. under @vscode/test-electron
    assert.equal(vscode.workspace.isTrusted, expected === '1');
  });

  it('can fail on purpose (CODE_MODE_TEST_EXPECT_FAIL=1) to prove failures give a non-zero exit', () => {
    if (process.env.CODE_MODE_TEST_EXPECT_FAIL === '1') assert.equal(1, 2, 'deliberate failure');
  });
});
