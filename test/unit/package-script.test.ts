// `npm run package` takes the https base of the README's images from one place (scripts/package.mjs).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const script = path.resolve(__dirname, '../../scripts/package.mjs');

function argsFor(manifest: object): { status: number | null; args?: string[]; stderr: string } {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-package-')), 'package.json');
  fs.writeFileSync(file, JSON.stringify(manifest));
  try {
    const run = spawnSync(process.execPath, [script, '--manifest', file, '--print-args'], { encoding: 'utf8' });
    return {
      status: run.status,
      stderr: run.stderr,
      ...(run.status === 0 ? { args: JSON.parse(run.stdout) as string[] } : {}),
    };
  } finally {
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

const base = ['package', '--no-dependencies', '-o', 'code-mode-python.vsix'];

test('config.imagesBaseUrl is the base of the images, with or without a repository', () => {
  const url = 'https://raw.githubusercontent.com/owner/code-mode-python/main/';
  assert.deepEqual(argsFor({ config: { imagesBaseUrl: url } }).args, [
    ...base,
    '--baseImagesUrl',
    url,
    '--allow-missing-repository',
  ]);
  assert.deepEqual(
    argsFor({ config: { imagesBaseUrl: url }, repository: 'https://github.com/owner/code-mode-python' }).args,
    [...base, '--baseImagesUrl', url],
  );
});

test('without it, a repository lets vsce derive the base; with neither, links stay relative', () => {
  assert.deepEqual(
    argsFor({
      config: { imagesBaseUrl: '' },
      repository: { type: 'git', url: 'https://github.com/owner/code-mode-python.git' },
    }).args,
    base,
  );
  assert.deepEqual(argsFor({ config: { imagesBaseUrl: '' } }).args, [
    ...base,
    '--allow-missing-repository',
    '--no-rewrite-relative-links',
  ]);
});

test('a base that is not https is refused with what to fix, since the details page would drop its images', () => {
  for (const bad of ['http://example.org/', 'media/', 'data:image/png;base64,']) {
    const run = argsFor({ config: { imagesBaseUrl: bad } });
    assert.equal(run.status, 2, bad);
    assert.match(run.stderr, /config\.imagesBaseUrl .* must be an https URL/);
  }
});

test("the repository's own package.json packages (its base is empty until the project has a public https home)", () => {
  const run = spawnSync(process.execPath, [script, '--print-args'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as {
    scripts: Record<string, string>;
    config: { imagesBaseUrl: string };
  };
  assert.equal(manifest.scripts.package, 'node scripts/package.mjs');
  assert.equal(typeof manifest.config.imagesBaseUrl, 'string');
});
