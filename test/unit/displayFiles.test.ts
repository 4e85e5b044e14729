import { after, afterEach, before, describe, mock, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  displaysForPrintedFiles,
  MAX_FILES_PER_RUN,
  MAX_IMAGE_BYTES,
  MAX_TEXT_BYTES,
  printedPaths,
} from '../../src/engine/displayFiles';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

describe('printedPaths', () => {
  test('finds bare, quoted and repr-wrapped paths with a shown extension, first occurrence first, once each', () => {
    const text = [
      'saved the chart to out/chart.png.',
      "PosixPath('/data/my report.csv')",
      'see "notes with spaces.md", (logs/run.log) and out/chart.png again',
      'C:\\work\\plot.JPG; ignored: model.pkl archive.tar.gz README',
    ].join('\n');
    assert.deepEqual(printedPaths(text), [
      'out/chart.png',
      '/data/my report.csv',
      'notes with spaces.md',
      'logs/run.log',
      'C:\\work\\plot.JPG',
    ]);
  });

  test('looks at a bounded number of candidates', () => {
    const text = Array.from({ length: 100 }, (_, i) => `f${i}.txt`).join(' ');
    assert.equal(printedPaths(text).length, 32);
  });
});

describe('displaysForPrintedFiles', () => {
  let base: string;
  let workspace: string;
  let scratch: string;
  let outside: string;

  before(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-files-')));
    workspace = path.join(base, 'workspace');
    scratch = path.join(base, 'storage', 'scratch');
    outside = path.join(base, 'outside');
    for (const dir of [workspace, scratch, outside]) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(workspace, 'chart.png'), PNG);
    fs.writeFileSync(path.join(workspace, 'notes.txt'), 'hello\n');
    fs.writeFileSync(path.join(scratch, 'data.json'), '{"a": 1}');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    fs.writeFileSync(path.join(base, 'storage', 'beside.txt'), 'secret');
  });
  after(() => fs.rmSync(base, { recursive: true, force: true }));
  afterEach(() => mock.restoreAll());

  const roots = () => [workspace, scratch];
  /** Every path the module opens, recorded while the real open still runs. */
  function spyOnOpen(): string[] {
    const opened: string[] = [];
    const real = fs.promises.open;
    mock.method(fs.promises, 'open', (file: fs.PathLike, ...rest: [string | number | undefined]) => {
      opened.push(String(file));
      return real(file, ...rest);
    });
    return opened;
  }

  test('images and text files under the roots, absolute or relative to a root, with the printed path as title', async () => {
    const text = `wrote chart.png and ${path.join(scratch, 'data.json')}\nnotes: "notes.txt"`;
    assert.deepEqual(await displaysForPrintedFiles(text, roots()), [
      { mime: 'image/png', data: PNG.toString('base64'), title: 'chart.png' },
      { mime: 'application/json', data: '{"a": 1}', title: path.join(scratch, 'data.json') },
      { mime: 'text/plain', data: 'hello\n', title: 'notes.txt' },
    ]);
  });

  test('outside the roots nothing is opened: absolute paths, "..", symlinks out, hidden folders', async () => {
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(scratch, 'link.txt'));
    fs.symlinkSync(outside, path.join(workspace, 'linked-dir'));
    fs.mkdirSync(path.join(workspace, '.ssh'));
    fs.writeFileSync(path.join(workspace, '.ssh', 'key.txt'), 'secret');
    const opened = spyOnOpen();
    const text = [
      path.join(outside, 'secret.txt'),
      `${scratch}/../beside.txt`,
      '../outside/secret.txt',
      path.join(scratch, 'link.txt'),
      'linked-dir/secret.txt',
      '.ssh/key.txt',
      '/etc/hostname.txt',
    ].join('\n');
    assert.deepEqual(await displaysForPrintedFiles(text, roots()), []);
    assert.deepEqual(opened, []);
  });

  test('a symlink inside the roots to a file inside the roots is followed', async () => {
    fs.symlinkSync(path.join(workspace, 'notes.txt'), path.join(scratch, 'alias.txt'));
    const opened = spyOnOpen();
    const displays = await displaysForPrintedFiles('alias.txt', roots());
    assert.deepEqual(displays, [{ mime: 'text/plain', data: 'hello\n', title: 'alias.txt' }]);
    assert.deepEqual(
      opened,
      [path.join(workspace, 'notes.txt')],
      'the real path is what is opened (and the spy sees opens)',
    );
  });

  test('a file-system root given as a root is ignored', async () => {
    const opened = spyOnOpen();
    assert.deepEqual(await displaysForPrintedFiles(path.join(outside, 'secret.txt'), ['/']), []);
    assert.deepEqual(opened, []);
  });

  test('text is capped at 64 KB without splitting a character; too large an image becomes a note', async () => {
    fs.writeFileSync(path.join(workspace, 'big.txt'), `${'x'.repeat(MAX_TEXT_BYTES - 1)}é and more`);
    const [text] = await displaysForPrintedFiles('big.txt', roots());
    assert.equal(text.data, `${'x'.repeat(MAX_TEXT_BYTES - 1)}\n… [11 more bytes not shown]`);
    fs.writeFileSync(path.join(workspace, 'huge.png'), Buffer.concat([PNG, Buffer.alloc(MAX_IMAGE_BYTES)]));
    assert.deepEqual(await displaysForPrintedFiles('huge.png', roots()), [
      { mime: 'text/plain', data: 'huge.png: 4.2 MB image not shown (at most 4 MB)', title: 'huge.png' },
    ]);
  });

  test('folders and FIFOs named like files are skipped without blocking; each file is shown once; at most a few per run', async () => {
    fs.mkdirSync(path.join(workspace, 'folder.png'));
    if (process.platform !== 'win32') execFileSync('mkfifo', [path.join(workspace, 'pipe.txt')]);
    for (let i = 0; i < 6; i++) fs.writeFileSync(path.join(scratch, `f${i}.txt`), String(i));
    const text = [
      'folder.png',
      'pipe.txt',
      'f0.txt',
      path.join(scratch, 'f0.txt'),
      'f1.txt f2.txt f3.txt f4.txt f5.txt',
    ].join('\n');
    const displays = await displaysForPrintedFiles(text, roots());
    assert.equal(displays.length, MAX_FILES_PER_RUN);
    assert.deepEqual(
      displays.map((d) => d.data),
      ['0', '1', '2', '3'],
    );
  });
});
