import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileView, hostRunMetadata, writableIn } from '../../src/engine/sandbox/fileView';

describe('the sandbox file view', () => {
  let root: string;

  before(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-file-view-')));
    for (const dir of ['.git', 'src/lib', 'dist', 'cache/outbox'])
      fs.mkdirSync(path.join(root, dir), { recursive: true });
    fs.writeFileSync(path.join(root, 'notes.txt'), '');
    fs.symlinkSync('/etc', path.join(root, 'etc-link'));
  });

  after(() => fs.rmSync(root, { recursive: true, force: true }));

  test('a writable workspace folder: top level read-only, its entries writable but the protected ones, parents first', () => {
    const { mounts } = fileView({ readOnly: [], readWrite: [root], workspaceRoots: [root], protectedPaths: [] });
    assert.equal(mounts[0].path, root);
    assert.equal(writableIn(root, mounts), false);
    assert.equal(writableIn(path.join(root, 'new.txt'), mounts), false);
    assert.equal(writableIn(path.join(root, 'src', 'new.py'), mounts), true);
    assert.equal(writableIn(path.join(root, 'notes.txt'), mounts), true);
    assert.equal(writableIn(path.join(root, '.git', 'config'), mounts), false);
    // A symlink is never mounted: it would make its target writable at the link's path.
    assert.equal(
      mounts.some((mount) => mount.path.endsWith('etc-link')),
      false,
    );
    const depths = mounts.map((mount) => mount.path.split(path.sep).length);
    assert.deepEqual(
      depths,
      [...depths].sort((a, b) => a - b),
    );
  });

  test('what is asked for read-only stays read-only inside a writable workspace, and a writable folder inside it stays writable', () => {
    const { mounts } = fileView({
      readOnly: [path.join(root, 'dist'), path.join(root, 'cache')],
      readWrite: [root, path.join(root, 'cache', 'outbox')],
      workspaceRoots: [root],
      protectedPaths: [],
    });
    assert.equal(writableIn(path.join(root, 'dist', 'pyodide-host.cjs'), mounts), false);
    assert.equal(writableIn(path.join(root, 'cache', 'snapshot'), mounts), false);
    assert.equal(writableIn(path.join(root, 'cache', 'outbox', 'snapshot'), mounts), true);
  });

  test('a protected file that does not exist yet freezes the nearest existing folder above it, keeping its entries writable', () => {
    const { mounts } = fileView({
      readOnly: [],
      readWrite: [path.join(root, 'src')],
      workspaceRoots: [],
      protectedPaths: [path.join(root, 'src', 'conf', 'servers.json')],
    });
    assert.equal(writableIn(path.join(root, 'src', 'conf'), mounts), false);
    assert.equal(writableIn(path.join(root, 'src', 'other.py'), mounts), false);
    assert.equal(writableIn(path.join(root, 'src', 'lib', 'module.py'), mounts), true);
  });

  test('repositories and virtual environments at any depth stay read-only; a folder holding a link is not walked through it', () => {
    const deep = path.join(root, 'src', 'lib', 'vendor', 'pkg');
    fs.mkdirSync(path.join(deep, '.git', 'hooks'), { recursive: true });
    fs.writeFileSync(path.join(root, 'src', 'lib', '.git'), 'gitdir: ../../.git/modules/lib\n');
    fs.mkdirSync(path.join(root, 'dist', 'tools', 'env', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(root, 'dist', 'tools', 'env', 'pyvenv.cfg'), 'home = /usr/bin\n');
    try {
      const { mounts, closed } = fileView({
        readOnly: [],
        readWrite: [root],
        workspaceRoots: [root],
        protectedPaths: [],
      });
      assert.deepEqual(closed, []);
      assert.equal(writableIn(path.join(deep, '.git', 'hooks', 'pre-commit'), mounts), false);
      assert.equal(writableIn(path.join(deep, 'module.py'), mounts), true);
      assert.equal(writableIn(path.join(root, 'src', 'lib', '.git'), mounts), false);
      assert.equal(writableIn(path.join(root, 'dist', 'tools', 'env', 'bin', 'python'), mounts), false);
      assert.equal(writableIn(path.join(root, 'dist', 'tools', 'other.py'), mounts), true);
      // The walk follows no link: /etc behind etc-link is never looked through.
      assert.deepEqual(
        (hostRunMetadata(root, 1000) as string[]).filter((found) => !found.startsWith(root)),
        [],
      );
    } finally {
      fs.rmSync(path.join(root, 'src', 'lib', 'vendor'), { recursive: true });
      fs.rmSync(path.join(root, 'src', 'lib', '.git'));
      fs.rmSync(path.join(root, 'dist', 'tools'), { recursive: true });
    }
  });

  test('a workspace folder too large to look through is not writable at all, and the others keep their grants', () => {
    const other = path.join(root, 'cache');
    const { mounts, closed } = fileView({
      readOnly: [],
      readWrite: [root, other],
      workspaceRoots: [root],
      protectedPaths: [],
      maxMetadataWalk: 3,
    });
    assert.deepEqual(closed, [root]);
    assert.equal(writableIn(path.join(root, 'src', 'new.py'), mounts), false);
    assert.equal(writableIn(path.join(root, 'notes.txt'), mounts), false);
    assert.equal(writableIn(path.join(other, 'outbox', 'snapshot'), mounts), true);
    assert.equal(hostRunMetadata(root, 3), 'too many');
  });
});
