// `npm run package` takes the https base of the README's images from one place (scripts/package.mjs); without one
// it packages a copy of the README the details page shows without broken images, and it refuses placeholders in
// angle brackets, which the page would eat as HTML tags.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const script = path.resolve(__dirname, '../../scripts/package.mjs');

const README = [
  '# An extension',
  '',
  'It runs `<code>` in backticks, and `tools.<server>.<tool>()` too.',
  '',
  '![The side bar](media/shot.png)',
  '',
  'More in [the guide](docs/guide.md#start), on [the web](https://example.org/) and [below](#more).',
  '',
  '```sh',
  'echo "<token>" > in/a/file.txt',
  '```',
  '',
  '## More',
  '',
].join('\n');

function argsFor(
  manifest: object,
  readme = README,
): { status: number | null; args?: string[]; stderr: string; copy?: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-package-'));
  const file = path.join(dir, 'package.json');
  fs.writeFileSync(file, JSON.stringify(manifest));
  fs.writeFileSync(path.join(dir, 'README.md'), readme);
  try {
    const run = spawnSync(process.execPath, [script, '--manifest', file, '--print-args'], { encoding: 'utf8' });
    const copy = path.join(dir, 'out', 'package', 'README.md');
    return {
      status: run.status,
      stderr: run.stderr,
      ...(run.status === 0 ? { args: JSON.parse(run.stdout) as string[] } : {}),
      ...(fs.existsSync(copy) ? { copy: fs.readFileSync(copy, 'utf8') } : {}),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const base = ['package', '--no-dependencies', '-o', 'code-mode-python.vsix'];

test('config.imagesBaseUrl is the base of the images, with or without a repository', () => {
  const url = 'https://raw.githubusercontent.com/owner/code-mode-python/main/';
  // Without a repository the same base serves the links (to docs/), which would otherwise lead nowhere.
  assert.deepEqual(argsFor({ config: { imagesBaseUrl: url } }).args, [
    ...base,
    '--baseImagesUrl',
    url,
    '--baseContentUrl',
    url,
    '--allow-missing-repository',
  ]);
  assert.deepEqual(
    argsFor({ config: { imagesBaseUrl: url }, repository: 'https://github.com/owner/code-mode-python' }).args,
    [...base, '--baseImagesUrl', url],
  );
});

test('without it, a repository lets vsce derive the base, and the README is packaged as it is', () => {
  const run = argsFor({
    config: { imagesBaseUrl: '' },
    repository: { type: 'git', url: 'https://github.com/owner/code-mode-python.git' },
  });
  assert.deepEqual(run.args, base);
  assert.equal(run.copy, undefined);
});

test('with neither, a copy of the README without relative images or links is packaged, and the log says so', () => {
  const run = argsFor({ config: { imagesBaseUrl: '' } });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(run.args, [...base, '--allow-missing-repository', '--readme-path', 'out/package/README.md']);
  assert.match(
    run.stderr,
    /cannot show the README's images: packaging out\/package\/README\.md.*media\/shot\.png.*config\.imagesBaseUrl/,
  );
  const copy = run.copy ?? '';
  assert.doesNotMatch(copy, /media\/shot\.png|\]\(docs\//, 'no relative image or link is left');
  assert.match(
    copy,
    /More in the guide \(`docs\/guide\.md`\), on \[the web\]\(https:\/\/example\.org\/\) and \[below\]\(#more\)\./,
  );
  // (vsce itself reads links even in code blocks, and refuses a relative one there with its own message.)
  assert.match(copy, /echo "<token>" > in\/a\/file\.txt/, 'code blocks are left alone');
  assert.match(copy, /`tools\.<server>\.<tool>\(\)`/, 'code spans are left alone');
});

test('text in angle brackets outside code is refused, since the details page takes it for an HTML tag', () => {
  const run = argsFor({ config: { imagesBaseUrl: '' } }, `${README}\nOffers **Install <package>** and <br> a line.\n`);
  assert.equal(run.status, 2);
  assert.match(run.stderr, /angle brackets outside backticks/);
  assert.match(run.stderr, /README\.md:15: <package>/);
  assert.doesNotMatch(run.stderr, /<br>|<code>|<token>/);
});

test("vsce packages the copy: the package's details page has no relative image", (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-package-vsce-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const manifest = {
    name: 'fixture',
    publisher: 'code-mode',
    version: '0.0.1',
    license: 'MIT',
    engines: { vscode: '^1.101.0' },
    config: { imagesBaseUrl: '' },
  };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest));
  fs.writeFileSync(path.join(dir, 'README.md'), README);
  fs.writeFileSync(path.join(dir, 'LICENSE'), 'MIT');
  fs.writeFileSync(path.join(dir, '.vscodeignore'), '**\n!media/*\n!LICENSE\n');
  fs.mkdirSync(path.join(dir, 'media'));
  fs.writeFileSync(path.join(dir, 'media', 'shot.png'), 'png');
  const printed = spawnSync(process.execPath, [script, '--manifest', path.join(dir, 'package.json'), '--print-args'], {
    encoding: 'utf8',
  });
  assert.equal(printed.status, 0, printed.stderr);
  const vsce = path.resolve(__dirname, '../../node_modules/@vscode/vsce/vsce');
  const args = (JSON.parse(printed.stdout) as string[]).map((arg) =>
    arg === 'code-mode-python.vsix' ? 'fixture.vsix' : arg,
  );
  const packed = spawnSync(process.execPath, [vsce, ...args], { cwd: dir, encoding: 'utf8' });
  assert.equal(packed.status, 0, packed.stdout + packed.stderr);
  const listing = spawnSync('unzip', ['-Z1', path.join(dir, 'fixture.vsix')], { encoding: 'utf8' }).stdout;
  assert.match(listing, /^extension\/readme\.md$/m);
  assert.doesNotMatch(listing, /^extension\/README\.md$|out\/package/m, 'only the copy, as the details page');
  const page = spawnSync('unzip', ['-p', path.join(dir, 'fixture.vsix'), 'extension/readme.md'], {
    encoding: 'utf8',
  }).stdout;
  assert.doesNotMatch(page, /media\/shot\.png/);
  assert.match(page, /the guide \(`docs\/guide\.md`\)/);
});

test('a base that is not https is refused with what to fix, since the details page would drop its images', () => {
  for (const bad of ['http://example.org/', 'media/', 'data:image/png;base64,']) {
    const run = argsFor({ config: { imagesBaseUrl: bad } });
    assert.equal(run.status, 2, bad);
    assert.match(run.stderr, /config\.imagesBaseUrl .* must be an https URL/);
  }
});

test("the repository's own package.json packages (its base is empty until the project has a public https home)", () => {
  // Its README has no placeholder the details page would eat (the script refuses one with status 2).
  const run = spawnSync(process.execPath, [script, '--print-args'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as {
    scripts: Record<string, string>;
    config: { imagesBaseUrl: string };
  };
  assert.equal(manifest.scripts.package, 'node scripts/package.mjs');
  assert.equal(typeof manifest.config.imagesBaseUrl, 'string');
});
