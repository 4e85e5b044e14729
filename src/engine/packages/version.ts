// PEP 440 versions and version specifiers: enough to validate what a person asks for, pick the best wheel
// of a local wheelhouse, and tell whether an installed version meets a request.

export interface Version {
  epoch: number;
  release: number[];
  /** a < b < rc; absent for final releases. */
  pre?: { rank: 0 | 1 | 2; n: number };
  post?: number;
  dev?: number;
  local?: string;
}

// The canonical pattern of PEP 440 (Appendix B), as `packaging` uses it.
const VERSION_PATTERN = new RegExp(
  '^\\s*v?(?:(?:(\\d+)!)?(\\d+(?:\\.\\d+)*)' +
    '(?:[-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?(\\d+)?)?' +
    '(?:-(\\d+)|[-_.]?(post|rev|r)[-_.]?(\\d+)?)?' +
    '(?:[-_.]?(dev)[-_.]?(\\d+)?)?)' +
    '(?:\\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?\\s*$',
  'i',
);

const PRE_RANK: Record<string, 0 | 1 | 2> = { alpha: 0, a: 0, beta: 1, b: 1, preview: 2, pre: 2, c: 2, rc: 2 };

export function parseVersion(text: string): Version | undefined {
  const m = VERSION_PATTERN.exec(text);
  if (!m) return undefined;
  const version: Version = { epoch: m[1] ? Number(m[1]) : 0, release: m[2].split('.').map(Number) };
  if (m[3]) version.pre = { rank: PRE_RANK[m[3].toLowerCase()], n: Number(m[4] ?? 0) };
  if (m[5] !== undefined) version.post = Number(m[5]);
  else if (m[6]) version.post = Number(m[7] ?? 0);
  if (m[8]) version.dev = Number(m[9] ?? 0);
  if (m[10]) version.local = m[10].toLowerCase().replace(/[-_]/g, '.');
  return version;
}

export function isPrerelease(version: Version): boolean {
  return version.pre !== undefined || version.dev !== undefined;
}

function compareNumbers(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareReleases(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const order = compareNumbers(a[i] ?? 0, b[i] ?? 0);
    if (order !== 0) return order;
  }
  return 0;
}

/** Sort keys as PEP 440 orders them: a dev release before its pre-releases, a post release after the final one. */
function preKey(v: Version): number[] {
  if (v.pre) return [v.pre.rank, v.pre.n];
  // 1.0.dev0 sorts before 1.0a0; a plain 1.0 (or 1.0.post1) after every pre-release.
  return v.post === undefined && v.dev !== undefined ? [-1] : [3];
}

export function compareVersions(a: Version, b: Version): number {
  const parts: number[] = [
    compareNumbers(a.epoch, b.epoch),
    compareReleases(a.release, b.release),
    compareReleases(preKey(a), preKey(b)),
    compareNumbers(a.post ?? -1, b.post ?? -1),
    compareNumbers(a.dev ?? Infinity, b.dev ?? Infinity),
    a.local === b.local ? 0 : a.local === undefined ? -1 : b.local === undefined ? 1 : a.local < b.local ? -1 : 1,
  ];
  return parts.find((order) => order !== 0) ?? 0;
}

export type Operator = '~=' | '==' | '!=' | '<=' | '>=' | '<' | '>' | '===';

export interface Specifier {
  op: Operator;
  /** As written, e.g. `1.2.*` or `2.0rc1`. */
  version: string;
}

const SPECIFIER = /^\s*(~=|===|==|!=|<=|>=|<|>)\s*([^\s,;]+)\s*$/;

/** A comma-separated specifier set (`>=1.2,<2`), or why it is not one. An empty string is the empty set. */
export function parseSpecifierSet(text: string): Specifier[] | { error: string } {
  if (text.trim() === '') return [];
  const specifiers: Specifier[] = [];
  for (const clause of text.split(',')) {
    const m = SPECIFIER.exec(clause);
    if (!m) return { error: `"${clause.trim()}" is not a version specifier such as ">=1.2" or "==2.0.*"` };
    const op = m[1] as Operator;
    const version = m[2];
    if (op !== '===') {
      const wildcard = version.endsWith('.*');
      if (wildcard && op !== '==' && op !== '!=') return { error: `"${clause.trim()}": only == and != take a ".*" wildcard` };
      const parsed = parseVersion(wildcard ? version.slice(0, -2) : version);
      if (!parsed) return { error: `"${version}" is not a PEP 440 version` };
      if (op === '~=' && parsed.release.length < 2) return { error: `"${clause.trim()}": ~= needs at least two release numbers, e.g. ~=1.4` };
      if (wildcard && parsed.local) return { error: `"${clause.trim()}": a wildcard version cannot have a local part` };
    }
    specifiers.push({ op, version });
  }
  return specifiers;
}

export function formatSpecifiers(specifiers: Specifier[]): string {
  return specifiers.map((s) => `${s.op}${s.version}`).join(',');
}

function releasePrefixMatches(candidate: Version, prefix: Version): boolean {
  if (candidate.epoch !== prefix.epoch) return false;
  return prefix.release.every((n, i) => (candidate.release[i] ?? 0) === n);
}

function sameRelease(a: Version, b: Version): boolean {
  return a.epoch === b.epoch && compareReleases(a.release, b.release) === 0;
}

function matchesOne(text: string, candidate: Version, spec: Specifier): boolean {
  if (spec.op === '===') return text.trim().toLowerCase() === spec.version.toLowerCase();
  const wildcard = spec.version.endsWith('.*');
  const target = parseVersion(wildcard ? spec.version.slice(0, -2) : spec.version)!;
  // A candidate's local label only counts when the specifier names one.
  const plain: Version = target.local ? candidate : { ...candidate, local: undefined };
  switch (spec.op) {
    case '==':
      return wildcard ? releasePrefixMatches(candidate, target) : compareVersions(plain, target) === 0;
    case '!=':
      return wildcard ? !releasePrefixMatches(candidate, target) : compareVersions(plain, target) !== 0;
    case '<=':
      return compareVersions(plain, target) <= 0;
    case '>=':
      return compareVersions(plain, target) >= 0;
    case '<':
      // "<3.0" does not admit 3.0's own pre-releases unless it names a pre-release itself.
      return compareVersions(plain, target) < 0 && (isPrerelease(target) || !isPrerelease(candidate) || !sameRelease(candidate, target));
    case '>':
      // ">1.7" does not admit 1.7.post1 unless it names a post release itself.
      return compareVersions(plain, target) > 0 && (target.post !== undefined || candidate.post === undefined || !sameRelease(candidate, target));
    case '~=': {
      const prefix: Version = { epoch: target.epoch, release: target.release.slice(0, -1) };
      return compareVersions(plain, target) >= 0 && releasePrefixMatches(candidate, prefix);
    }
  }
}

/** Whether `version` meets every specifier. Unparsable versions meet only an empty set or `===`. */
export function satisfies(version: string, specifiers: Specifier[]): boolean {
  const candidate = parseVersion(version);
  if (!candidate) return specifiers.every((s) => s.op === '===' && s.version.toLowerCase() === version.trim().toLowerCase());
  return specifiers.every((spec) => matchesOne(version, candidate, spec));
}

/** Whether the set itself names a pre-release, which lets pre-releases be chosen (PEP 440). */
export function admitsPrereleases(specifiers: Specifier[]): boolean {
  return specifiers.some((s) => {
    const v = parseVersion(s.version.replace(/\.\*$/, ''));
    return v !== undefined && isPrerelease(v);
  });
}
