// What the packages tool (install and check) accepts. Everything a person (or a model) passes is parsed here
// into one of three shapes, and only those shapes reach pip or Pyodide: a PEP 508 name with optional extras
// and version specifiers, an absolute path to a local .whl file, or an http(s) URL of a .whl file. Anything
// else (environment markers, direct references, pip options, shell syntax) is refused with the reason.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { explain, satisfies, valid } from '@renovatebot/pep440';
import { canonicalSpecifierClause } from './pep440Specifier';

/** The parts of a wheel's file name (PEP 427). */
export interface WheelName {
  filename: string;
  /** Distribution name as the file spells it (underscores for dashes). */
  name: string;
  version: string;
  pythonTags: string[];
  abiTags: string[];
  platformTags: string[];
}

export interface RequirementSpec {
  kind: 'requirement';
  /** The text as given. */
  requested: string;
  name: string;
  extras: string[];
  /** The PEP 440 specifier set without spaces (`>=1,<2`); '' when the request names no version. */
  specifier: string;
  /** Rebuilt canonically (`name[extra]>=1,<2`), the only form passed on to pip or micropip. */
  requirement: string;
}

export interface WheelFileSpec {
  kind: 'file';
  requested: string;
  path: string;
  wheel: WheelName;
  /** Lower-case hex; the file must hash to it. */
  sha256?: string;
}

export interface WheelUrlSpec {
  kind: 'url';
  requested: string;
  /** Without the `#sha256=` fragment. */
  url: string;
  wheel: WheelName;
  sha256?: string;
}

export type PackageSpec = RequirementSpec | WheelFileSpec | WheelUrlSpec;

/** The distribution a spec installs. */
export function distributionOf(spec: PackageSpec): string {
  return spec.kind === 'requirement' ? spec.name : spec.wheel.name;
}

/** PEP 503 normalization: how indexes and installers compare names. */
export function normalizeName(name: string): string {
  return name.replace(/[-_.]+/g, '-').toLowerCase();
}

// PEP 508 names (and extras): letters and digits, with . _ - inside.
const NAME = '[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?';
const REQUIREMENT = new RegExp(`^(${NAME})\\s*(?:\\[([^\\]]*)\\])?\\s*(.*)$`);
const NAME_ONLY = new RegExp(`^${NAME}$`);
const DIRECT_REFERENCE = new RegExp(`^${NAME}\\s*(?:\\[[^\\]]*\\])?\\s*@`);
const WHEEL_FILENAME = /^([^-\s]+)-([^-\s]+)(?:-(\d[^-\s]*))?-([^-\s]+)-([^-\s]+)-([^-\s]+)\.whl$/;
const SHA256_FRAGMENT = /^sha256=([0-9a-fA-F]{64})$/;
const MAX_SPEC_LENGTH = 2048;

const ACCEPTED =
  'give one PEP 508 name with optional [extras] and version specifiers (e.g. "requests", "numpy>=1.26,<2", ' +
  '"black[jupyter]==24.1.0"), an absolute path to a .whl file, or an http(s) URL of a .whl file, optionally ending in #sha256=<hex>';

export function parseWheelFilename(filename: string): WheelName | undefined {
  const m = WHEEL_FILENAME.exec(filename);
  if (!m || !NAME_ONLY.test(m[1]) || valid(m[2]) === null) return undefined;
  return {
    filename,
    name: m[1],
    version: m[2],
    pythonTags: m[4].split('.'),
    abiTags: m[5].split('.'),
    platformTags: m[6].split('.'),
  };
}

function refuse(input: string, reason: string): { error: string } {
  const shown = input.length > 120 ? `${input.slice(0, 117)}...` : input;
  return { error: `"${shown}" is refused: ${reason}` };
}

/** Parses one entry of `packages`, or says why it is refused. Files are checked to exist. */
export function parsePackageSpec(input: unknown): PackageSpec | { error: string } {
  if (typeof input !== 'string') return { error: `each package must be a string; ${ACCEPTED}` };
  const text = input.trim();
  if (text === '') return { error: `a package entry is empty; ${ACCEPTED}` };
  if (text.length > MAX_SPEC_LENGTH) return refuse(text, `longer than ${MAX_SPEC_LENGTH} characters`);
  if ([...text].some((c) => c.charCodeAt(0) < 0x20 || c === '\x7f'))
    return refuse(text, 'it contains control characters');
  if (text.startsWith('-'))
    return refuse(text, `installer options (such as --index-url or -e) are not accepted; ${ACCEPTED}`);
  if (/^https?:\/\//i.test(text)) return parseWheelUrl(text);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text))
    return refuse(text, 'only http:// and https:// URLs of .whl files are accepted');
  // "name @ url" contains slashes too, but it is a (refused) requirement, not a path.
  if (DIRECT_REFERENCE.test(text)) return parseRequirement(text);
  if (/[/\\]/.test(text) || /\.whl(#|$)/i.test(text) || text.startsWith('.') || text.startsWith('~'))
    return parseWheelPath(text);
  return parseRequirement(text);
}

/** A PEP 508 requirement without markers or URLs: `name`, `name[extra,...]`, `name>=1,<2`. */
export function parseRequirement(text: string): RequirementSpec | { error: string } {
  const pep508 = 'not a PEP 508 requirement this tool accepts';
  if (text.includes(';')) return refuse(text, `${pep508}: environment markers (";") are not allowed; ${ACCEPTED}`);
  if (text.includes('@'))
    return refuse(
      text,
      `${pep508}: direct references ("name @ url") are not allowed; pass the .whl URL or absolute path itself`,
    );
  const m = REQUIREMENT.exec(text);
  if (!m) return refuse(text, `${pep508}; ${ACCEPTED}`);
  const [, name, extrasText, rest] = m;
  const extras = extrasText === undefined ? [] : extrasText.split(',').map((e) => e.trim());
  if (extras.some((e) => !NAME_ONLY.test(e)))
    return refuse(text, `${pep508}: extras must be names, as in "black[jupyter,d]"`);
  const specifier = parseSpecifierSet(rest);
  if (typeof specifier !== 'string') return refuse(text, `${pep508}: ${specifier.error}; ${ACCEPTED}`);
  const requirement = `${name}${extras.length ? `[${extras.join(',')}]` : ''}${specifier}`;
  return { kind: 'requirement', requested: text, name, extras, specifier, requirement };
}

/**
 * A comma-separated PEP 440 specifier set (`>=1.2, <2`), rebuilt without spaces, or why it is not one.
 * @renovatebot/pep440 decides what is valid; the reason for a refusal is told here, clause by clause.
 */
function parseSpecifierSet(text: string): string | { error: string } {
  if (text.trim() === '') return '';
  const clauses: string[] = [];
  for (const clause of text.split(',').map((c) => c.trim())) {
    const canonical = canonicalSpecifierClause(clause);
    if (canonical === null) return { error: whyNotASpecifier(clause) };
    clauses.push(canonical);
  }
  return clauses.join(',');
}

function whyNotASpecifier(clause: string): string {
  const generic = `"${clause}" is not a version specifier such as ">=1.2" or "==2.0.*"`;
  const m = /^(~=|==|!=|<=|>=|<|>)\s*(\S+)$/.exec(clause);
  if (!m) return generic;
  const [, op, version] = m;
  const wildcard = version.endsWith('.*');
  if (wildcard && op !== '==' && op !== '!=') return `"${clause}": only == and != take a ".*" wildcard`;
  const parsed = explain(wildcard ? version.slice(0, -2) : version);
  if (!parsed) return `"${version}" is not a PEP 440 version`;
  if (op === '~=' && parsed.release.length < 2) return `"${clause}": ~= needs at least two release numbers, e.g. ~=1.4`;
  if (parsed.local !== null)
    return `"${clause}": a local version (+${parsed.local}) goes only with == or !=, without a ".*" wildcard`;
  if (wildcard && parsed.dev !== null) return `"${clause}": a ".*" wildcard cannot follow a dev release`;
  return generic;
}

/**
 * Whether an installed (or shipped) version meets a request's specifier set. Pre-releases count, as they do
 * for what is already installed; with no specifier any version does, even one that is not PEP 440.
 */
export function meetsSpecifier(version: string, specifier: string): boolean {
  if (specifier === '') return true;
  // A version that is not PEP 440 can only meet "===" clauses (the library compares only those as text).
  if (valid(version) === null && !specifier.split(',').every((clause) => clause.startsWith('==='))) return false;
  return satisfies(version, specifier, { prereleases: true });
}

function splitSha256(text: string, fragment: string): { sha256?: string } | { error: string } {
  if (fragment === '') return {};
  const m = SHA256_FRAGMENT.exec(fragment);
  return m ? { sha256: m[1].toLowerCase() } : refuse(text, 'the only fragment accepted is #sha256=<64 hex digits>');
}

function parseWheelPath(text: string): WheelFileSpec | { error: string } {
  const hash = text.lastIndexOf('#');
  const file = hash < 0 ? text : text.slice(0, hash);
  const checksum = splitSha256(text, hash < 0 ? '' : text.slice(hash + 1));
  if ('error' in checksum) return checksum;
  if (!path.isAbsolute(file)) return refuse(text, 'a wheel file must be given by its absolute path');
  if (!file.toLowerCase().endsWith('.whl'))
    return refuse(text, 'only .whl files can be installed from a path (no source trees or archives)');
  const wheel = parseWheelFilename(path.basename(file));
  if (!wheel) return refuse(text, 'the file name is not a wheel name (name-version-pythontag-abitag-platform.whl)');
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return refuse(text, 'no such file');
  }
  if (!stat.isFile()) return refuse(text, 'not a regular file');
  return { kind: 'file', requested: text, path: path.normalize(file), wheel, ...checksum };
}

function parseWheelUrl(text: string): WheelUrlSpec | { error: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse(text, 'not a valid URL');
  }
  if (/\s/.test(text)) return refuse(text, 'a URL cannot contain spaces');
  const checksum = splitSha256(text, url.hash.replace(/^#/, ''));
  if ('error' in checksum) return checksum;
  url.hash = '';
  let filename: string;
  try {
    filename = decodeURIComponent(url.pathname.split('/').pop() ?? '');
  } catch {
    return refuse(text, 'the URL path is not valid percent-encoding');
  }
  const wheel = parseWheelFilename(filename);
  if (!wheel) return refuse(text, 'the URL must end in a wheel file name (name-version-pythontag-abitag-platform.whl)');
  return { kind: 'url', requested: text, url: url.toString(), wheel, ...checksum };
}

/**
 * Parses every entry, all or nothing: one refused entry refuses the request, so nothing is half-installed
 * because of a typo. Duplicate entries are kept once.
 */
export function parsePackageList(inputs: unknown, max: number): PackageSpec[] | { error: string } {
  if (!Array.isArray(inputs) || inputs.length === 0) return { error: 'packages must be a non-empty list of strings' };
  if (inputs.length > max) return { error: `at most ${max} packages per call` };
  const specs: PackageSpec[] = [];
  const seen = new Set<string>();
  for (const input of inputs) {
    const spec = parsePackageSpec(input);
    if ('error' in spec) return spec;
    if (seen.has(spec.requested)) continue;
    seen.add(spec.requested);
    specs.push(spec);
  }
  return specs;
}
