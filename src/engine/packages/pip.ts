// Installs with `python -m pip` of a session's interpreter: spawned here with an argument list (never a shell)
// for the workspace-Python backend, or started by the kernel itself for the Jupyter backend (PipProcess).
// Bounded in time, with network timeouts low enough that an offline machine hears so in seconds. Only specs
// parsed by packages/spec.ts ever become arguments.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { settingNote } from '../config';
import { checkedStatus, summarize } from './report';
import { distributionOf, type PackageSpec, type RequirementSpec } from './spec';
import { checkSha256 } from './wheels';
import type { PackageReport, PackageStatus } from '../types';
import { errorText } from '../errorText';

/** A whole pip run; big downloads (torch, tensorflow) take minutes on a slow link. */
const PIP_TIME_LIMIT_MS = 10 * 60 * 1000;
/** pip's own per-connection timeout and retries: pip's defaults (15 s x 5 retries with back-off) stall offline. */
const PIP_NETWORK_TIMEOUT_S = '15';
const PIP_RETRIES = '1';
const VERSIONS_TIME_LIMIT_MS = 30 * 1000;
/** pip's error as reported; past it the middle goes (its first lines say what failed, its last ones why). */
const ERROR_CHARS = 8000;

const VERSIONS_SCRIPT = `
import importlib.metadata as metadata, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        found[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        found[name] = None
print(json.dumps(found))
`;

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  spawnError?: string;
}

/** Runs the session's interpreter with `args` (after the executable) and `env` added to its environment. */
export type PipProcess = (args: string[], env: Record<string, string>, timeoutMs: number) => Promise<ProcessResult>;

/** The output a PipProcess keeps of each stream: the end, where pip says what went wrong. */
export const KEPT_OUTPUT_CHARS = 64 * 1024;

function runProcess(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<ProcessResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    // A group of its own, so a timeout also ends whatever pip started (build backends, git).
    const child = spawn(command, args, {
      shell: false,
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
      windowsHide: true,
      detached: process.platform !== 'win32',
    });
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined) process.kill(process.platform === 'win32' ? child.pid : -child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout = (stdout + text).slice(-KEPT_OUTPUT_CHARS)));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-KEPT_OUTPUT_CHARS)));
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr, timedOut, spawnError: error.message });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

/** An interpreter on this machine, spawned directly. */
export function localInterpreter(interpreter: string): PipProcess {
  return (args, env, timeoutMs) => runProcess(interpreter, args, { ...process.env, ...env }, timeoutMs);
}

function pipEnvironment(): Record<string, string> {
  return {
    PIP_DEFAULT_TIMEOUT: PIP_NETWORK_TIMEOUT_S,
    PIP_RETRIES,
    PIP_DISABLE_PIP_VERSION_CHECK: '1',
    PIP_NO_INPUT: '1',
    PYTHONIOENCODING: 'utf-8',
  };
}

const NETWORK_TROUBLE =
  /NewConnectionError|Name or service not known|Temporary failure in name resolution|nodename nor servname|Network is unreachable|ConnectTimeoutError|ProxyError|getaddrinfo failed/;

/** What the advice in pip's errors names: the wheelhouse's setting, and the way to an interpreter of one's own. */
export interface PipAdvice {
  wheelhouseSetting?: string;
  /** What to do about an interpreter the operating system manages (PEP 668), after "This interpreter is managed by the operating system:". */
  managedEnvironment?: string;
}

const MANAGED_ENVIRONMENT = 'select a virtual environment (python -m venv) for it';
/** pip's PEP 668 refusal; its explanation follows on lines of its own, which say what to do. */
const EXTERNALLY_MANAGED = /^error: externally-managed-environment$/m;

/** pip's own ERROR lines when it printed any, else its rich error whole from its headline, else the end of its output, with advice. */
function pipError(result: ProcessResult, advice: PipAdvice): string {
  if (result.spawnError) return `could not run pip: ${result.spawnError}`;
  if (result.timedOut) return `pip did not finish within ${PIP_TIME_LIMIT_MS / 60000} minutes and was stopped`;
  const output = `${result.stderr}\n${result.stdout}`;
  const lines = output.split('\n');
  const errors = lines.filter((line) => line.startsWith('ERROR:'));
  // pip's rich errors (e.g. PEP 668's) open with "error: <kind>" and a "× <what happened>" line: that pair
  // leads, then the whole diagnostic, so the first line is pip's own headline and never a fragment of its advice.
  const headline = lines.findIndex((line) => /^error: \S/.test(line));
  const what =
    headline >= 0
      ? lines
          .slice(headline)
          .find((line) => line.startsWith('× '))
          ?.slice(2)
          .trim()
      : undefined;
  let text = (
    errors.length > 0
      ? errors.join('\n')
      : headline >= 0
        ? [`${lines[headline]!.trim()}${what ? ` (${what})` : ''}`, ...lines.slice(headline + 1)].join('\n')
        : output.trim().split('\n').slice(-10).join('\n')
  ).trim();
  if (/No module named pip/.test(output))
    text = 'pip is not installed in this interpreter (python -m ensurepip, or choose an environment with pip)';
  else if (EXTERNALLY_MANAGED.test(output))
    text += `\nThis interpreter is managed by the operating system (PEP 668): ${advice.managedEnvironment ?? MANAGED_ENVIRONMENT}.`;
  else if (NETWORK_TROUBLE.test(output))
    text += `\nno network: pip could not reach the package index; install from a local .whl path, or put wheels in a wheelhouse folder${settingNote(advice.wheelhouseSetting)}.`;
  if (!text) text = `pip exited with code ${result.code}`;
  if (text.length <= ERROR_CHARS) return text;
  const half = ERROR_CHARS / 2;
  return `${text.slice(0, half)}\n… ${text.length - ERROR_CHARS} characters of pip's output left out …\n${text.slice(-half)}`;
}

/** What pip is given for a spec: the canonical requirement, the wheel's path, or its URL (pip checks #sha256 itself). */
function pipArgument(spec: PackageSpec): string {
  if (spec.kind === 'requirement') return spec.requirement;
  if (spec.kind === 'file') return spec.path;
  return spec.sha256 ? `${spec.url}#sha256=${spec.sha256}` : spec.url;
}

async function installedVersions(python: PipProcess, names: string[]): Promise<Map<string, string | null>> {
  const result = await python(['-c', VERSIONS_SCRIPT, ...names], { PYTHONIOENCODING: 'utf-8' }, VERSIONS_TIME_LIMIT_MS);
  if (result.code !== 0) {
    throw new Error(
      `could not read installed versions: ${result.spawnError ?? (result.stderr.trim().split('\n').pop() || `exit code ${result.code}`)}`,
    );
  }
  return new Map(
    Object.entries(JSON.parse(result.stdout.trim().split('\n').pop() ?? '{}') as Record<string, string | null>),
  );
}

/**
 * Installs `specs` with one pip run; when that fails and there were several, each is retried alone so the
 * good ones still go in and every failure is pinned to its package.
 */
export async function pipInstall(
  python: PipProcess,
  specs: PackageSpec[],
  wheelhouse?: string,
  advice: PipAdvice = {},
): Promise<PackageReport> {
  const errors = new Map<PackageSpec, string>();
  for (const spec of specs) {
    // A file without a hash to check may be one on another machine (a remote kernel's): pip reads it there.
    if (spec.kind !== 'file' || spec.sha256 === undefined) continue;
    try {
      checkSha256(new Uint8Array(fs.readFileSync(spec.path)), spec.sha256, spec.path);
    } catch (error) {
      errors.set(spec, errorText(error));
    }
  }
  const pending = specs.filter((spec) => !errors.has(spec));
  const base = ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off'];
  if (wheelhouse) base.push('--find-links', wheelhouse);
  const install = (group: PackageSpec[]) =>
    python([...base, ...group.map(pipArgument)], pipEnvironment(), PIP_TIME_LIMIT_MS);
  if (pending.length > 0) {
    const all = await install(pending);
    if (all.code !== 0) {
      if (pending.length === 1) errors.set(pending[0], pipError(all, advice));
      else {
        for (const spec of pending) {
          const alone = await install([spec]);
          if (alone.code !== 0) errors.set(spec, pipError(alone, advice));
        }
      }
    }
  }
  const versions = await installedVersions(python, specs.map(distributionOf));
  const packages = specs.map((spec): PackageStatus => {
    const name = distributionOf(spec);
    const version = versions.get(name) ?? undefined;
    const error =
      errors.get(spec) ??
      (version ? undefined : 'pip reported success but the distribution is not visible to this interpreter');
    return {
      name,
      requested: spec.requested,
      installed: !error,
      ...(version ? { version } : {}),
      source: 'pip',
      ...(error ? { error } : {}),
    };
  });
  return { packages, message: summarize(packages, 'install') };
}

/** Versions of the requested distributions in `interpreter`'s environment; a version must meet the request's specifiers. */
export async function pipCheck(python: PipProcess, specs: RequirementSpec[]): Promise<PackageReport> {
  const versions = await installedVersions(
    python,
    specs.map((s) => s.name),
  );
  const packages = specs.map((spec) => checkedStatus(spec, versions.get(spec.name) ?? undefined));
  return { packages, message: summarize(packages, 'check') };
}
