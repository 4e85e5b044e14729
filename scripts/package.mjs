#!/usr/bin/env node
// Packages the extension as code-mode-python.vsix with vsce (`npm run package`).
//
// The package's README.md is the extension's details page (the Extensions view, the Marketplace). That page shows
// only https images (VS Code's sanitizer drops relative paths and data: URIs, and the page's policy allows only
// https), and a relative link there leads nowhere. So:
//   - with an https base, the README is packaged as it is and vsce rewrites its relative images and links. The base
//     comes from one place: `config.imagesBaseUrl` in package.json (e.g.
//     "https://raw.githubusercontent.com/owner/code-mode-python/main/"; links to docs/ then lead to the raw files),
//     else a GitHub or GitLab `repository`, from which vsce derives it itself;
//   - with neither, a copy is packaged instead (out/package/README.md, through vsce's --readme-path): relative
//     images left out, relative links written as their text and the path in the source, so the page shows no
//     broken image. vsce then checks that no relative image or link is left.
// Either way, text in angle brackets outside code (`Install <package>`) is refused: the page would take it for an
// HTML tag and show nothing.
//
//   --target T        a platform-specific package (vsce's --target; scripts/package-targets.mjs uses it)
//   --out FILE        the package's file name (default code-mode-python.vsix)
//   --manifest FILE   read this package.json, and the README.md beside it, instead of the repository's (tests)
//   --print-args      print vsce's arguments as JSON and package nothing (the README copy is still written)
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
const extensionDir = path.dirname(manifestPath);
const readmePath = path.join(extensionDir, 'README.md');
/** Where the details page's copy of the README goes when there is no https base (inside the extension folder). */
const readmeCopy = path.join(extensionDir, 'out', 'package', 'README.md');

/** HTML a README may really use; any other word in angle brackets outside code is a placeholder the page eats. */
const HTML_TAGS = new Set(['a', 'img', 'br', 'details', 'summary', 'sup', 'sub', 'kbd', 'b', 'i', 'em', 'p', 'div']);
const isRelative = (target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#');

/**
 * The README's lines, each with a function that rewrites its prose (outside fenced blocks and code spans) and
 * leaves its code alone.
 */
function proseLines(markdown) {
  let fence;
  return markdown.split('\n').map((line, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return { line: index + 1, text: '', map: () => line };
    }
    if (marker) {
      fence = marker;
      return { line: index + 1, text: '', map: () => line };
    }
    const parts = line.split(/(`+[^`]*?`+)/);
    return {
      line: index + 1,
      text: parts.map((part, i) => (i % 2 ? ' '.repeat(part.length) : part)).join(''),
      map: (rewrite) => parts.map((part, i) => (i % 2 ? part : rewrite(part))).join(''),
    };
  });
}

/** Text in angle brackets outside code that is no HTML tag: `file:line: <text>` for each. */
function placeholders(markdown, name = 'README.md') {
  const found = [];
  for (const { line, text } of proseLines(markdown)) {
    for (const match of text.matchAll(/<\/?([A-Za-z][\w.:-]*)(?:\s[^<>]*)?\/?>/g))
      if (!HTML_TAGS.has(match[1].toLowerCase())) found.push(`${name}:${line}: ${match[0]}`);
  }
  return found;
}

/**
 * The README as the details page can show it without an https base: relative images left out, relative links as
 * their text and the path. Returns the text and what was changed.
 */
function detailsPage(markdown) {
  const images = [];
  const links = [];
  const text = proseLines(markdown)
    .map(({ map }) =>
      map((prose) =>
        prose
          .replace(/!\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g, (all, alt, target) => {
            if (!isRelative(target)) return all;
            images.push(target);
            return '';
          })
          .replace(/<img\s[^>]*src=["']([^"']+)["'][^>]*>/g, (all, target) => {
            if (!isRelative(target)) return all;
            images.push(target);
            return '';
          })
          .replace(/\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g, (all, label, target) => {
            if (!isRelative(target)) return all;
            links.push(target);
            const file = target.split('#')[0];
            return `${label} (\`${file}\`)`;
          }),
      ),
    )
    .join('\n')
    .replace(/\n{3,}/g, '\n\n');
  return { text, images, links };
}

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
    return [
      ...args,
      '--baseImagesUrl',
      base,
      ...(repository ? [] : ['--baseContentUrl', base, '--allow-missing-repository']),
    ];
  }
  if (repository) return args;
  return [
    ...args,
    '--allow-missing-repository',
    '--readme-path',
    path.relative(extensionDir, readmeCopy).split(path.sep).join('/'),
  ];
}

/** Refuses placeholders; without a base, writes the details page's copy of the README. */
function prepareReadme(args) {
  const markdown = fs.readFileSync(readmePath, 'utf8');
  const eaten = placeholders(markdown);
  if (eaten.length)
    throw new Error(
      `text in angle brackets outside backticks is taken for an HTML tag on the details page and vanishes; put it in backticks (\`<package>\`) or write &lt;…&gt;:\n  ${eaten.join('\n  ')}`,
    );
  if (!args.includes('--readme-path')) return;
  const page = detailsPage(markdown);
  fs.mkdirSync(path.dirname(readmeCopy), { recursive: true });
  fs.writeFileSync(readmeCopy, page.text);
  process.stderr.write(
    `[package] no config.imagesBaseUrl or repository in package.json, so the details page cannot show the README's images: packaging ${path.relative(extensionDir, readmeCopy)}, a copy without its ${page.images.length} relative image(s) (${page.images.join(', ') || 'none'}) and with its ${page.links.length} relative link(s) written as text; set config.imagesBaseUrl to an https URL to keep them\n`,
  );
}

let args;
try {
  args = vsceArgs();
  prepareReadme(args);
} catch (error) {
  process.stderr.write(`[package] ${error.message}\n`);
  process.exit(2);
}
if (opt['print-args']) {
  process.stdout.write(`${JSON.stringify(args)}\n`);
  process.exit(0);
}
const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
const run = spawnSync(process.execPath, [vsce, ...args], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
