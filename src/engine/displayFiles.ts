// Files a run printed the path of, shown as displays: `plt.savefig("out/chart.png"); print("out/chart.png")`
// puts the chart in the result. Only files inside the allowed roots (the workspace folders and the scratch
// folder) are ever opened, judged by their real path after every symlink and `..` is resolved, and the file
// opened is checked to be that same file, so a link swapped in meanwhile reads nothing outside.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Display } from './types';

const IMAGE_MIMES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
};
const TEXT_MIMES: Record<string, string> = {
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.md': 'text/markdown',
};

/** A necessary sign of a showable path, checked first: most runs print none, and scanning their text costs every run. */
const KNOWN_EXTENSION = new RegExp(
  `\\.(?:${[...Object.keys(IMAGE_MIMES), ...Object.keys(TEXT_MIMES)].map((extension) => extension.slice(1)).join('|')})`,
  'i',
);

/** Files shown per run: a run that lists a folder should not turn into a slideshow. */
export const MAX_FILES_PER_RUN = 4;
/** Printed paths looked at per run, so a flood of file names costs a bounded number of file-system calls. */
const MAX_CANDIDATES = 32;
/** As for display() in Python: the MCP client and the results view keep every display in memory. */
export const MAX_IMAGE_BYTES = 4 * 1024 * 1024;
export const MAX_TEXT_BYTES = 64 * 1024;

/** Characters that end a bare path in printed text (quotes are handled separately, so names with spaces work). */
const BARE_TOKEN = /[^\s"'`<>|]+/g;
const QUOTED = /(["'`])([^"'`\n]+)\1/g;
/** Punctuation around a bare path in prose: "saved to (out/a.png)." */
const LEADING_PUNCTUATION = /^[([{]+/;
const TRAILING_PUNCTUATION = /[)\]},;:.!?]+$/;

interface Root {
  real: string;
}

/**
 * The displays for files under `roots` whose paths appear in `text` (absolute, or relative to a root),
 * in the order they were printed. Paths outside the roots, hidden files and anything but regular files are
 * skipped without being opened.
 */
export async function displaysForPrintedFiles(text: string, roots: readonly string[]): Promise<Display[]> {
  const candidates = printedPaths(text);
  if (candidates.length === 0) return [];
  const realRoots = await resolveRoots(roots);
  if (realRoots.length === 0) return [];
  const displays: Display[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    if (displays.length >= MAX_FILES_PER_RUN) break;
    const real = await locate(candidate, realRoots);
    if (!real || seen.has(real)) continue;
    seen.add(real);
    const display = await readDisplay(candidate, real, realRoots);
    if (display) displays.push(display);
  }
  return displays;
}

/** Strings in `text` that look like paths of files this module can show, first occurrence first. */
export function printedPaths(text: string): string[] {
  if (!KNOWN_EXTENSION.test(text)) return [];
  const found: { at: number; value: string }[] = [];
  const quoted: [number, number][] = [];
  for (const match of text.matchAll(QUOTED)) {
    found.push({ at: match.index, value: match[2] });
    quoted.push([match.index, match.index + match[0].length]);
  }
  for (const match of text.matchAll(BARE_TOKEN)) {
    // Words of a quoted name ("my report.csv") are not names of their own.
    if (quoted.some(([start, end]) => match.index >= start && match.index < end)) continue;
    found.push({ at: match.index, value: match[0].replace(LEADING_PUNCTUATION, '').replace(TRAILING_PUNCTUATION, '') });
  }
  found.sort((a, b) => a.at - b.at);
  const paths: string[] = [];
  for (const { value } of found) {
    if (paths.length >= MAX_CANDIDATES) break;
    if (mimeFor(value) && !paths.includes(value)) paths.push(value);
  }
  return paths;
}

function mimeFor(file: string): { mime: string; image: boolean } | undefined {
  const extension = path.extname(file).toLowerCase();
  if (IMAGE_MIMES[extension]) return { mime: IMAGE_MIMES[extension], image: true };
  if (TEXT_MIMES[extension]) return { mime: TEXT_MIMES[extension], image: false };
  return undefined;
}

async function resolveRoots(roots: readonly string[]): Promise<Root[]> {
  const resolved: Root[] = [];
  for (const root of roots) {
    const real = await fs.promises.realpath(root).catch(() => undefined);
    // A file-system root as "workspace" (a server started from /) would open every file on the machine.
    if (real && path.dirname(real) !== real) resolved.push({ real });
  }
  return resolved;
}

/** The real path of `candidate` if it lies inside a root and is not hidden; relative paths try each root. */
async function locate(candidate: string, roots: Root[]): Promise<string | undefined> {
  const tries = path.isAbsolute(candidate) ? [candidate] : roots.map((root) => path.resolve(root.real, candidate));
  for (const attempt of tries) {
    const real = await fs.promises.realpath(attempt).catch(() => undefined);
    if (real && allowed(real, roots)) return real;
  }
  return undefined;
}

function allowed(real: string, roots: Root[]): boolean {
  return roots.some((root) => {
    const relative = path.relative(root.real, real);
    if (!relative || relative.startsWith('..') || path.isAbsolute(relative)) return false;
    // Dot-folders hold credentials and tool state (.ssh, .git, .env, .docker): never shown, even inside a root.
    return !relative.split(path.sep).some((part) => part.startsWith('.'));
  });
}

async function readDisplay(printed: string, real: string, roots: Root[]): Promise<Display | undefined> {
  const type = mimeFor(real);
  if (!type) return undefined;
  const limit = type.image ? MAX_IMAGE_BYTES : MAX_TEXT_BYTES;
  // No following a link in the last step, and no waiting on a FIFO someone put in place of the file.
  const flags = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(real, flags);
  } catch {
    return undefined;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return undefined;
    // A folder on the way may have been swapped for a link since `real` was resolved: only a file that is
    // still the one inside the roots is read.
    const again = await fs.promises.realpath(real).catch(() => undefined);
    if (!again || !allowed(again, roots)) return undefined;
    const current = await fs.promises.stat(again).catch(() => undefined);
    if (!current || current.ino !== stat.ino || current.dev !== stat.dev) return undefined;
    if (type.image && stat.size > limit) {
      return {
        mime: 'text/plain',
        data: `${printed}: ${(stat.size / 1e6).toFixed(1)} MB image not shown (at most ${limit / (1024 * 1024)} MB)`,
        title: printed,
      };
    }
    const buffer = Buffer.alloc(Math.min(stat.size, limit));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const bytes = buffer.subarray(0, bytesRead);
    if (type.image) return { mime: type.mime, data: bytes.toString('base64'), title: printed };
    // write() without end() leaves out a character cut in half at the limit.
    let data = new StringDecoder('utf8').write(bytes);
    const shown = Buffer.byteLength(data);
    if (stat.size > shown) data += `\n… [${stat.size - shown} more bytes not shown]`;
    return { mime: type.mime, data, title: printed };
  } finally {
    await handle.close();
  }
}
