// Wheel bytes from the places a person can point at: a local file, an http(s) URL, or a wheelhouse folder.
// Checksums are verified here, in the engine's process, before anything reaches an interpreter.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { normalizeName, parseWheelFilename, type WheelName, type WheelFileSpec, type WheelUrlSpec } from './spec';
import { maxSatisfying } from '@renovatebot/pep440';
import { errorText } from '../errorText';

/** Larger downloads are refused rather than held in memory. */
const MAX_WHEEL_BYTES = 512 * 1024 * 1024;

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function checkSha256(bytes: Uint8Array, expected: string | undefined, what: string): void {
  if (expected === undefined) return;
  const actual = sha256Hex(bytes);
  if (actual !== expected)
    throw new Error(`sha256 mismatch for ${what}: expected ${expected}, got ${actual}; nothing was installed from it`);
}

/** A download that receives nothing for this long is given up, so an offline or black-holed network fails fast. */
const STALL_TIMEOUT_MS = 15_000;
/** A slow but steady download of a large wheel may take its time, up to this. */
const DOWNLOAD_TIME_LIMIT_MS = 10 * 60_000;
const NETWORK_ERRORS = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNREFUSED',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ECONNRESET',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The server could not be reached at all: most likely this machine is offline (or firewalled). */
export class NetworkUnavailable extends Error {}

/** Downloads `url`, refusing more than MAX_WHEEL_BYTES; fails with a plain reason, NetworkUnavailable when offline. */
export async function download(url: string): Promise<Uint8Array> {
  const host = new URL(url).host;
  const controller = new AbortController();
  let why: Error | undefined;
  const abort = (reason: Error) => {
    why = reason;
    controller.abort();
  };
  let stall = setTimeout(
    () => abort(new NetworkUnavailable(`no answer from ${host} within ${STALL_TIMEOUT_MS / 1000} s`)),
    STALL_TIMEOUT_MS,
  );
  const progress = () => {
    clearTimeout(stall);
    stall = setTimeout(
      () => abort(new Error(`the download from ${host} stalled for ${STALL_TIMEOUT_MS / 1000} s`)),
      STALL_TIMEOUT_MS,
    );
  };
  const overall = setTimeout(
    () => abort(new Error(`the download from ${host} took longer than ${DOWNLOAD_TIME_LIMIT_MS / 60_000} minutes`)),
    DOWNLOAD_TIME_LIMIT_MS,
  );
  try {
    const response = await fetch(url, { signal: controller.signal, redirect: 'follow' });
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
    if (Number(response.headers.get('content-length') ?? 0) > MAX_WHEEL_BYTES)
      throw new Error(`larger than ${MAX_WHEEL_BYTES} bytes`);
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = response.body.getReader();
    for (;;) {
      progress();
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > MAX_WHEEL_BYTES) {
        await reader.cancel();
        throw new Error(`larger than ${MAX_WHEEL_BYTES} bytes`);
      }
      chunks.push(value);
    }
    return new Uint8Array(Buffer.concat(chunks));
  } catch (error) {
    if (why) throw why;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code && NETWORK_ERRORS.has(cause.code))
      throw new NetworkUnavailable(`cannot reach ${host} (${cause.code})`);
    throw new Error(`could not download ${url}: ${cause?.message ?? errorText(error)}`);
  } finally {
    clearTimeout(stall);
    clearTimeout(overall);
  }
}

/** The bytes of a wheel the person named by path or URL, checked against its `#sha256=` when given. */
export async function readWheel(spec: WheelFileSpec | WheelUrlSpec): Promise<Uint8Array> {
  let bytes: Uint8Array;
  if (spec.kind === 'file') {
    const size = fs.statSync(spec.path).size;
    if (size > MAX_WHEEL_BYTES) throw new Error(`${spec.path} is larger than ${MAX_WHEEL_BYTES} bytes`);
    bytes = new Uint8Array(fs.readFileSync(spec.path));
  } else {
    bytes = await download(spec.url);
  }
  checkSha256(bytes, spec.sha256, spec.wheel.filename);
  return bytes;
}

/**
 * The best wheel for `name` in a wheelhouse folder: the highest version that meets `specifier` (a PEP 440
 * specifier set, '' for any) among wheels `compatible` accepts; final releases win over pre-releases unless
 * the request names a pre-release or nothing else meets it (@renovatebot/pep440's maxSatisfying).
 */
export function findInWheelhouse(
  dir: string,
  name: string,
  specifier: string,
  compatible: (wheel: WheelName) => boolean,
): { path: string; wheel: WheelName } | undefined {
  let entries: string[];
  try {
    entries = fs.readdirSync(dir);
  } catch {
    return undefined;
  }
  const wanted = normalizeName(name);
  const candidates = entries
    .map((file) => parseWheelFilename(file))
    .filter((w): w is WheelName => w !== undefined && normalizeName(w.name) === wanted && compatible(w));
  const version = maxSatisfying(
    candidates.map((w) => w.version),
    specifier,
  );
  const best = candidates.find((w) => w.version === version);
  return best && { path: path.join(dir, best.filename), wheel: best };
}
