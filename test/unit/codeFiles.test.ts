// The code files store: names, the size limit, and refusing traversal, links, FIFOs and a linked folder.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CodeFiles, codeFileNameProblem, StoreError } from '../../src/engine/stores/index';
import { freshDirs } from '../support/storeFixtures';

const freshDir = freshDirs();

describe('code file names', () => {
  const refused: [string, RegExp][] = [
    ['../../etc/passwd', /path separators/],
    ['/etc/passwd', /path separators/],
    ['sub/file.py', /path separators/],
    ['sub\\file.py', /path separators/],
    ['..py', /must not contain "\.\."/],
    ['a..b.py', /must not contain "\.\."/],
    ['.hidden.py', /must not start with "\."/],
    ['evil\0.py', /NUL/],
    ['run.sh', /must end in one of \.py, \.txt, \.json, \.csv, \.md/],
    ['noext', /must end in one of/],
    ['', /non-empty/],
    ['with space.py', /only letters, digits/],
    ['naïve.py', /only letters, digits/],
    ['CON.py', /reserved device name/],
    [`${'a'.repeat(130)}.py`, /at most 128 characters/],
  ];
  for (const [name, message] of refused) {
    test(`refuses ${JSON.stringify(name.length > 40 ? `${name.slice(0, 20)}…` : name)}`, () => {
      assert.match(codeFileNameProblem(name) ?? '', message);
    });
  }
  test('accepts plain names with the allowed extensions', () => {
    for (const name of ['analysis.py', 'DATA.CSV', 'notes.md', 'a-b_c.1.txt', 'config.json', 'console.py']) {
      assert.equal(codeFileNameProblem(name), undefined, name);
    }
  });
});

describe('code files', () => {
  test('create, append over several calls, read and list', async () => {
    const files = new CodeFiles(path.join(freshDir(), 'code-files'));
    const first = await files.write('prog.py', 'x = 1\n', 'create');
    assert.equal(first.bytes_written, 6);
    await files.write('prog.py', 'x += 1\n', 'append');
    const last = await files.write('prog.py', 'print(x)\n', 'append');
    assert.equal(last.size, 22);
    assert.equal((await files.read('prog.py')).content, 'x = 1\nx += 1\nprint(x)\n');
    await files.write('prog.py', 'print("fresh")\n');
    assert.equal((await files.read('prog.py')).content, 'print("fresh")\n', 'create replaces');
    await files.write('notes.md', 'é', 'append');
    assert.equal((await files.read('notes.md')).size, 2, 'sizes are UTF-8 bytes');
    const listed = await files.list();
    assert.deepEqual(
      listed.map((f) => f.name),
      ['notes.md', 'prog.py'],
    );
    assert.ok(!Number.isNaN(Date.parse(listed[0].mtime)));
    assert.equal(files.path('prog.py'), path.join(files.dir, 'prog.py'));
  });

  test('the size limit is enforced on create and on append, leaving the file as it was', async () => {
    const files = new CodeFiles(path.join(freshDir(), 'code-files'), 100);
    await assert.rejects(
      files.write('big.py', 'x'.repeat(101)),
      (e: Error) => e instanceof StoreError && /at most 100 bytes/.test(e.message),
    );
    await files.write('grow.py', 'y'.repeat(60));
    await assert.rejects(
      files.write('grow.py', 'z'.repeat(41), 'append'),
      /would make "grow.py" 101 bytes; a code file holds at most 100 bytes/,
    );
    assert.equal((await files.read('grow.py')).content, 'y'.repeat(60));
    await files.write('grow.py', 'z'.repeat(40), 'append');
    assert.equal((await files.read('grow.py')).size, 100);
  });

  test('traversal and absolute names are refused before touching the disk', async () => {
    const dir = freshDir();
    const files = new CodeFiles(path.join(dir, 'code-files'));
    for (const name of ['../../etc/passwd', '../escape.py', '/tmp/abs.py', path.join(dir, 'abs.py')]) {
      await assert.rejects(files.write(name, 'print(1)'), (e: Error) => e instanceof StoreError, name);
      await assert.rejects(files.read(name), (e: Error) => e instanceof StoreError, name);
      assert.throws(() => files.path(name), StoreError);
    }
    assert.deepEqual(fs.readdirSync(dir), [], 'nothing was created, not even the folder');
  });

  test('a planted symlink is never followed: create, append and read are refused and the target is untouched', async () => {
    const dir = freshDir();
    const outside = path.join(dir, 'outside.txt');
    fs.writeFileSync(outside, 'secret\n');
    const files = new CodeFiles(path.join(dir, 'code-files'));
    await files.write('ok.py', 'pass\n');
    fs.symlinkSync(outside, path.join(files.dir, 'link.py'));
    await assert.rejects(files.read('link.py'), /symbolic link.*refusing to follow/);
    await assert.rejects(files.write('link.py', 'pwned\n', 'append'), /symbolic link/);
    await assert.rejects(files.write('link.py', 'pwned\n', 'create'), /symbolic link/);
    assert.equal(fs.readFileSync(outside, 'utf8'), 'secret\n');
    assert.deepEqual(
      (await files.list()).map((f) => f.name),
      ['ok.py'],
      'links are not listed',
    );
  });

  test('a planted hard link and a FIFO are refused without blocking', async () => {
    const dir = freshDir();
    const outside = path.join(dir, 'outside.txt');
    fs.writeFileSync(outside, 'secret\n');
    const files = new CodeFiles(path.join(dir, 'code-files'));
    await files.write('ok.py', 'pass\n');
    fs.linkSync(outside, path.join(files.dir, 'hard.py'));
    await assert.rejects(files.read('hard.py'), /hard link/);
    await assert.rejects(files.write('hard.py', 'pwned\n', 'append'), /hard link/);
    assert.equal(fs.readFileSync(outside, 'utf8'), 'secret\n');
    execFileSync('mkfifo', [path.join(files.dir, 'pipe.py')]);
    await assert.rejects(files.read('pipe.py'), /not a regular file/);
    await assert.rejects(files.write('pipe.py', 'x', 'append'), /not a regular file/);
  });

  test('a code-files folder that is itself a symlink is not written through', async () => {
    const dir = freshDir();
    const elsewhere = path.join(dir, 'elsewhere');
    fs.mkdirSync(elsewhere);
    fs.symlinkSync(elsewhere, path.join(dir, 'code-files'));
    const files = new CodeFiles(path.join(dir, 'code-files'));
    await assert.rejects(files.write('a.py', 'pass'), /not a plain folder/);
    assert.deepEqual(fs.readdirSync(elsewhere), []);
  });

  test('reading a missing file names the files there are', async () => {
    const files = new CodeFiles(path.join(freshDir(), 'code-files'));
    await assert.rejects(
      files.read('none.py'),
      /no code file named "none.py" \(there are no code files yet\); write it with code_file first/,
    );
    await files.write('b.py', '');
    await files.write('a.py', '');
    await assert.rejects(files.read('none.py'), /the code files are: a\.py, b\.py/);
  });

  test('concurrent appends all land, in call order', async () => {
    const files = new CodeFiles(path.join(freshDir(), 'code-files'));
    await Promise.all(Array.from({ length: 20 }, (_, i) => files.write('many.py', `print(${i})\n`, 'append')));
    const expected = Array.from({ length: 20 }, (_, i) => `print(${i})\n`).join('');
    assert.equal((await files.read('many.py')).content, expected);
  });
});
