// The documentation's links work: every relative link and `#anchor` in README.md, SECURITY.md, CHANGELOG.md and
// docs/*.md leads to a file of this repository, and an anchor to a heading of its file, slugged as GitHub slugs
// headings. Text such as <package> written outside backticks is taken for an HTML tag on the extension's details
// page (and on GitHub) and vanishes, so such placeholders must be in backticks.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../..');
const required = ['README.md', 'SECURITY.md', 'CHANGELOG.md'];
const docs = [
  ...required.filter((file) => fs.existsSync(path.join(root, file))),
  ...(fs.existsSync(path.join(root, 'docs')) ? fs.readdirSync(path.join(root, 'docs'), { withFileTypes: true }) : [])
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => `docs/${entry.name}`),
];

/** The file's lines outside fenced code blocks, with their line numbers; code spans blanked out. */
function prose(file: string): { line: number; text: string }[] {
  const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  lines.forEach((text, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return;
    }
    if (marker) {
      fence = marker;
      return;
    }
    out.push({ line: index + 1, text: text.replace(/(`+)(?:(?!\1).)+?\1/g, (span) => ' '.repeat(span.length)) });
  });
  return out;
}

/** GitHub's heading slug: lower case, punctuation and symbols dropped (but - and _), spaces as hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/`([^`]*)`/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors a file's headings get, numbered as GitHub numbers repeats (x, x-1, x-2). */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const raw = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
  for (const { line } of prose(file)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw[line - 1]);
    if (!heading) continue;
    const base = slug(heading[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count ? `${base}-${count}` : base);
  }
  return result;
}

/** Every inline link and image target outside code: `[text](target)`, `![alt](target "title")`. */
function links(file: string): { line: number; target: string }[] {
  const found: { line: number; target: string }[] = [];
  for (const { line, text } of prose(file)) {
    for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      found.push({ line, target: match[1] });
    for (const match of text.matchAll(/<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"/g))
      found.push({ line, target: match[1] });
  }
  return found;
}

test('the documents this test reads are there', () => {
  for (const file of required) assert.ok(docs.includes(file), `${file} exists`);
  assert.ok(docs.length > 5, 'docs/ holds the documentation');
});

test('GitHub slugs headings as this test does', () => {
  assert.equal(
    slug('Platforms: bubblewrap, or Deno where bubblewrap cannot run'),
    'platforms-bubblewrap-or-deno-where-bubblewrap-cannot-run',
  );
  assert.equal(slug('Packaging and trying the .vsix'), 'packaging-and-trying-the-vsix');
  assert.equal(slug('`run_python` and its results'), 'run_python-and-its-results');
  assert.equal(slug('Tests in a real VS Code'), 'tests-in-a-real-vs-code');
  assert.equal(slug('What the sandbox can never write'), 'what-the-sandbox-can-never-write');
});

test('every relative link leads to a file of this repository, and every anchor to a heading', () => {
  const problems: string[] = [];
  let checked = 0;
  for (const file of docs) {
    for (const { line, target } of links(file)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and the like
      checked++;
      const where = `${file}:${line}: ${target}`;
      const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
      const resolved = pathPart
        ? path.resolve(root, path.dirname(file), decodeURIComponent(pathPart))
        : path.join(root, file);
      if (path.relative(root, resolved).startsWith('..')) {
        problems.push(`${where} leads out of the repository`);
        continue;
      }
      if (!fs.existsSync(resolved)) {
        problems.push(`${where}: no such file`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md') && !anchors(path.relative(root, resolved)).has(anchor))
        problems.push(`${where}: no heading with that anchor in ${path.relative(root, resolved)}`);
    }
  }
  assert.ok(checked > 20, `the documents link to each other (${checked} links checked)`);
  assert.deepEqual(problems, []);
});

test('placeholders such as <package> are in backticks, not eaten as HTML tags', () => {
  // Tags a document may really use; anything else in angle brackets outside code is a placeholder.
  const html = new Set([
    'a',
    'img',
    'br',
    'details',
    'summary',
    'sup',
    'sub',
    'kbd',
    'b',
    'i',
    'em',
    'p',
    'div',
    'picture',
    'source',
  ]);
  const problems: string[] = [];
  for (const file of docs) {
    for (const { line, text } of prose(file)) {
      for (const match of text.matchAll(/<\/?([A-Za-z][\w.:-]*)(?:\s[^<>]*)?\/?>/g)) {
        if (!html.has(match[1].toLowerCase())) problems.push(`${file}:${line}: ${match[0]}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});
