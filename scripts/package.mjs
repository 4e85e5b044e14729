#!/usr/bin/env node
// Packages the extension as code-mode-python.vsix with vsce (`npm run package`).
//
// The installed extension's details page shows README.md with only https image sources (VS Code's sanitizer
// drops relative paths and data: URIs, and the page's policy allows only https), so the README's images need an
// https base. It comes from one place: `config.imagesBaseUrl` in package.json (e.g.
// "https://raw.githubusercontent.com/owner/code-mode-python/main/"), else a GitHub or GitLab `repository`, from
// which vsce derives it itself. With neither, the images stay relative and the page shows their alt text; the
// README is written to read well that way.
//
//   --target T        a platform-specific package (vsce's --target; scripts/package-targets.mjs uses it)
//   --out FILE        the package's file name (default code-mode-python.vsix)
//   --manifest FILE   read this package.json instead of the repository's (tests)
//   --print-args      print vsce's arguments as JSON and package nothing
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: opt } = parseArgs({
  options: {
    target: { type: 'string' },
    out: { type: 'string' },
    manifest: { type: 'string' },
    'print-args': { type: 'boolean' },
  },
  strict: true,
});
if (opt.manifest && !opt['print-args']) {
  process.stderr.write('[package] --manifest only goes with --print-args: vsce packages the repository itself\n');
  process.exit(2);
}
const manifestPath = path.resolve(opt.manifest ?? path.join(root, 'package.json'));
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));

/** vsce's arguments for `manifest`; throws with what to fix when the image base is not an https URL. */
function vsceArgs() {
  const args = [
    'package',
    '--no-dependencies',
    '-o',
    opt.out ?? 'code-mode-python.vsix',
    ...(opt.target ? ['--target', opt.target] : []),
  ];
  const base = typeof manifest.config?.imagesBaseUrl === 'string' ? manifest.config.imagesBaseUrl.trim() : '';
  const repository = typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url;
  if (base) {
    let url;
    try {
      url = new URL(base);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== 'https:')
      throw new Error(
        `config.imagesBaseUrl in ${manifestPath} must be an https URL (the details page shows no other images): ${JSON.stringify(base)}`,
      );
    return [...args, '--baseImagesUrl', base, ...(repository ? [] : ['--allow-missing-repository'])];
  }
  if (repository) return args;
  return [...args, '--allow-missing-repository', '--no-rewrite-relative-links'];
}

let args;
try {
  args = vsceArgs();
} catch (error) {
  process.stderr.write(`[package] ${error.message}\n`);
  process.exit(2);
}
if (opt['print-args']) {
  process.stdout.write(`${JSON.stringify(args)}\n`);
  process.exit(0);
}
if (args.includes('--no-rewrite-relative-links')) {
  process.stdout.write(
    '[package] no config.imagesBaseUrl or repository in package.json: README images stay relative, and the installed details page shows their alt text instead\n',
  );
}
const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
const run = spawnSync(process.execPath, [vsce, ...args], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
