#!/usr/bin/env node
// Draws the extension's icon, media/icon.png (128×128, what the Extensions view and the details page show):
// the activity bar's mark (media/icon.svg: a Python's head over a terminal prompt) in Python's colours on a
// rounded tile, rasterized by headless Chromium (playwright-core, the browser the tests already use).
// The PNG is committed, so packaging needs no browser; run `npm run icon` after changing the drawing.
//   CHROMIUM   browser binary (default /usr/bin/chromium)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

const SIZE = 128;
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const mark = fs.readFileSync(path.join(root, 'media', 'icon.svg'), 'utf8');

// The mark's paths, coloured by part: the first three draw the head, the rest the terminal.
const parts = [...mark.matchAll(/<(path|circle|rect)\b[^>]*\/>/g)].map((m) => m[0]);
if (parts.length !== 6)
  throw new Error(`media/icon.svg changed shape (${parts.length} elements); update scripts/icon.mjs`);
const head = parts.slice(0, 3).join('\n    ').replace('fill="currentColor"', 'fill="#ffd43b"');
const terminal = parts.slice(3).join('\n    ');

const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}" viewBox="0 0 ${SIZE} ${SIZE}">
  <defs>
    <linearGradient id="tile" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#3572a5"/>
      <stop offset="1" stop-color="#1e3f66"/>
    </linearGradient>
  </defs>
  <rect width="${SIZE}" height="${SIZE}" rx="26" fill="url(#tile)"/>
  <svg x="12" y="12" width="104" height="104" viewBox="0 0 24 24" fill="none" stroke-width="1.6" stroke-linecap="round" stroke-linejoin="round">
    <g stroke="#ffd43b">
    ${head}
    </g>
    <g stroke="#ffffff" fill="none">
    ${terminal.replace('<rect ', '<rect fill="#15304f" ')}
    </g>
  </svg>
</svg>`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
try {
  const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE }, deviceScaleFactor: 1 });
  await page.setContent(`<!DOCTYPE html><html><body style="margin:0">${svg}</body></html>`);
  const out = path.join(root, 'media', 'icon.png');
  await page.screenshot({ path: out, omitBackground: true, clip: { x: 0, y: 0, width: SIZE, height: SIZE } });
  process.stdout.write(`wrote ${path.relative(root, out)} (${fs.statSync(out).size} bytes)\n`);
} finally {
  await browser.close();
}
