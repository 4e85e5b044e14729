// The engine-process half of a Pyodide install: turns specs into steps the worker can carry out without
// trusting anything it downloads. Local and URL wheels are read (and checked against #sha256=) here;
// packages of the Pyodide distribution are fetched from its CDN into a package cache and checked against
// the sha256 in pyodide-lock.json, because Pyodide in Node checks nothing. The worker then loads them from
// that cache (loadPyodide's packageCacheDir).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assetsDir } from '../../paths';
import { settingNote } from '../../config';
import { summarize } from '../../packages/report';
import { distributionOf, meetsSpecifier, normalizeName, type PackageSpec, type WheelName } from '../../packages/spec';
import {
  checkSha256,
  download,
  findInWheelhouse,
  NetworkUnavailable,
  readWheel,
  sha256Hex,
} from '../../packages/wheels';
import type { InstallOptions, PackageReport, PackageStatus } from '../../types';
import type { InstallStep, PackagesReply } from './protocol';
import { errorText } from '../../errorText';

interface LockPackage {
  name: string;
  version: string;
  file_name: string;
  sha256: string;
  depends: string[];
}

interface Lockfile {
  info: { python: string; abi_version: string; platform: string };
  packages: Record<string, LockPackage>;
}

export interface PyodideDistribution {
  version: string;
  lock: Lockfile;
}

let distribution: PyodideDistribution | undefined;

export function pyodideDistribution(): PyodideDistribution {
  if (!distribution) {
    const dir = path.join(assetsDir(), 'pyodide');
    const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string };
    const lock = JSON.parse(fs.readFileSync(path.join(dir, 'pyodide-lock.json'), 'utf8')) as Lockfile;
    distribution = { version, lock };
  }
  return distribution;
}

/** Where the distribution's wheels are cached, per Pyodide version (file names repeat across versions). */
export function packageCacheDir(cacheDir: string, pyodideVersion: string): string {
  return path.join(cacheDir, 'packages', pyodideVersion);
}

/** The official CDN of the Pyodide distribution's packages; npm's pyodide package ships none. */
export function distributionUrl(pyodideVersion: string): string {
  return `https://cdn.jsdelivr.net/pyodide/v${pyodideVersion}/full/`;
}

/** `wheelhouseSetting` says how a person names a wheelhouse where they are (a CLI flag, a VS Code setting). */
function offlineAdvice(wheelhouseSetting: string | undefined): string {
  return (
    'no network: Pyodide packages cannot be downloaded here; install from a local .whl path (pure-Python "none-any" wheels work), ' +
    `or put wheels in a wheelhouse folder${settingNote(wheelhouseSetting)}`
  );
}

/** Why `wheel` cannot run in this Pyodide, or undefined when it can. */
export function pyodideIncompatibility(wheel: WheelName, lock: Lockfile): string | undefined {
  const [major, minor] = lock.info.python.split('.').map(Number);
  const pythonOk = wheel.pythonTags.some((tag) => {
    const m = /^(py|cp)(\d)(\d*)$/.exec(tag);
    if (!m || Number(m[2]) !== major) return false;
    return m[3] === '' ? m[1] === 'py' : Number(m[3]) <= minor;
  });
  const abiOk = wheel.abiTags.some((tag) => tag === 'none' || tag === 'abi3' || tag === `cp${major}${minor}`);
  const abi = lock.info.abi_version;
  const platforms = ['any', `pyodide_${abi}_wasm32`, `pyemscripten_${abi}_wasm32`, `${lock.info.platform}_wasm32`];
  const platformOk = wheel.platformTags.some((tag) => platforms.includes(tag));
  if (pythonOk && abiOk && platformOk) return undefined;
  return (
    `${wheel.filename} is not built for Pyodide (Python ${major}.${minor}, WebAssembly): ` +
    `it needs a pure-Python wheel (...-py3-none-any.whl) or one tagged ${platforms[1]}`
  );
}

/** Files verified against the lock file in this process, by path, with the size and time they had then. */
const verified = new Map<string, string>();

function stamp(file: string): string | undefined {
  try {
    const stat = fs.statSync(file);
    return `${stat.size}:${stat.mtimeMs}`;
  } catch {
    return undefined;
  }
}

/** `names` and everything they depend on, from the lock file. */
function closure(lock: Lockfile, names: string[]): LockPackage[] {
  const found = new Map<string, LockPackage>();
  const visit = (name: string) => {
    const key = normalizeName(name);
    if (found.has(key)) return;
    const entry = lock.packages[key];
    if (!entry) throw new Error(`the Pyodide lock file names "${name}" but has no entry for it`);
    found.set(key, entry);
    entry.depends.forEach(visit);
  };
  names.forEach(visit);
  return [...found.values()];
}

/** Puts the files of `names` (with their dependencies) into the cache, each checked against the lock file. */
async function ensureCached(names: string[], cacheDir: string, dist: PyodideDistribution): Promise<void> {
  const dir = packageCacheDir(cacheDir, dist.version);
  fs.mkdirSync(dir, { recursive: true });
  await Promise.all(
    closure(dist.lock, names).map(async (entry) => {
      const file = path.join(dir, entry.file_name);
      const before = stamp(file);
      if (before !== undefined) {
        if (verified.get(file) === before) return;
        if (sha256Hex(fs.readFileSync(file)) === entry.sha256) {
          verified.set(file, before);
          return;
        }
        // Corrupt or tampered with: fetched again below.
        fs.rmSync(file, { force: true });
      }
      const bytes = await download(distributionUrl(dist.version) + entry.file_name);
      checkSha256(bytes, entry.sha256, entry.file_name);
      // Other sessions may fetch the same file at the same time: write aside, then rename into place.
      const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      fs.writeFileSync(temp, bytes);
      fs.renameSync(temp, file);
      verified.set(file, stamp(file) ?? '');
    }),
  );
}

/** Pyodide itself fetches what micropip pulls in from its distribution: those files are checked afterwards. */
export function checkCacheSince(cacheDir: string, since: number): string[] {
  const dist = pyodideDistribution();
  const dir = packageCacheDir(cacheDir, dist.version);
  const byFile = new Map(Object.values(dist.lock.packages).map((p) => [p.file_name, p]));
  const problems: string[] = [];
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const entry = byFile.get(name);
    const file = path.join(dir, name);
    if (!entry || fs.statSync(file).mtimeMs < since) continue;
    if (sha256Hex(fs.readFileSync(file)) !== entry.sha256) {
      fs.rmSync(file, { force: true });
      problems.push(
        `${name} downloaded by Pyodide did not match the lock file's sha256 and was deleted; reset the session to unload it`,
      );
    }
  }
  return problems;
}

interface Planned {
  spec: PackageSpec;
  name: string;
  source: NonNullable<PackageStatus['source']>;
  /** Index into `steps`; absent when preparing failed. */
  step?: number;
  error?: string;
}

export interface InstallPlan {
  planned: Planned[];
  steps: InstallStep[];
  usesMicropip: boolean;
}

function installErrorText(error: unknown, wheelhouseSetting: string | undefined): string {
  if (error instanceof NetworkUnavailable) return `${offlineAdvice(wheelhouseSetting)} (${error.message})`;
  return errorText(error);
}

/** Reads, checks and caches what each spec needs; a spec that cannot be prepared carries its error instead of a step. */
export async function planInstall(
  specs: PackageSpec[],
  cacheDir: string,
  options: InstallOptions,
): Promise<InstallPlan> {
  const { wheelhouse, wheelhouseSetting } = options;
  const dist = pyodideDistribution();
  const steps: InstallStep[] = [];
  const planned: Planned[] = [];
  for (const spec of specs) {
    const name = distributionOf(spec);
    let source: Planned['source'] = spec.kind === 'requirement' ? 'pyodide' : spec.kind;
    try {
      let step: InstallStep;
      if (spec.kind !== 'requirement') {
        const unfit = pyodideIncompatibility(spec.wheel, dist.lock);
        if (unfit) throw new Error(unfit);
        step = {
          kind: 'wheel',
          name,
          filename: spec.wheel.filename,
          base64: Buffer.from(await readWheel(spec)).toString('base64'),
        };
      } else {
        const local = wheelhouse
          ? findInWheelhouse(wheelhouse, spec.name, spec.specifier, (w) => !pyodideIncompatibility(w, dist.lock))
          : undefined;
        const shipped = dist.lock.packages[normalizeName(spec.name)];
        if (local) {
          source = 'wheelhouse';
          step = {
            kind: 'wheel',
            name,
            filename: local.wheel.filename,
            base64: fs.readFileSync(local.path).toString('base64'),
          };
        } else if (shipped && spec.extras.length === 0 && meetsSpecifier(shipped.version, spec.specifier)) {
          await ensureCached([shipped.name], cacheDir, dist);
          step = { kind: 'pyodide', name: shipped.name };
        } else {
          // Not in the distribution (or another version, or extras): micropip asks PyPI for a pure-Python wheel.
          source = 'micropip';
          await ensureCached(['micropip'], cacheDir, dist);
          step = { kind: 'micropip', name, requirement: spec.requirement };
        }
      }
      steps.push(step);
      planned.push({ spec, name, source, step: steps.length - 1 });
    } catch (error) {
      planned.push({ spec, name, source, error: installErrorText(error, wheelhouseSetting) });
    }
  }
  return { planned, steps, usesMicropip: steps.some((s) => s.kind === 'micropip') };
}

/** The report of an install: each spec's preparation error, its step's error, or its installed version. */
export function installReport(plan: InstallPlan, reply: PackagesReply, cacheProblems: string[]): PackageReport {
  const packages = plan.planned.map((p): PackageStatus => {
    const version = reply.versions[p.name] ?? undefined;
    const error =
      p.error ??
      reply.failed ??
      (p.step !== undefined ? reply.errors[p.step] : undefined) ??
      (version ? undefined : 'installed, but no version of it is visible to importlib.metadata');
    return {
      name: p.name,
      requested: p.spec.requested,
      installed: !error,
      ...(version ? { version } : {}),
      source: p.source,
      ...(error ? { error } : {}),
    };
  });
  const message = [summarize(packages, 'install'), ...cacheProblems].join('; ');
  return { packages, message };
}
