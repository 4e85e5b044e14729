// Packages in a session's interpreter: installs and checks asked for (the packages tool, the Install command),
// queued like runs and shown as runs of `%pip install …`, and the one install auto-install makes when Pyodide
// code fails with ModuleNotFoundError.
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { isBackendKind, type EngineConfig } from './config';
import { errorText } from './errorText';
import type { EngineEvents } from './events';
import { distributionForImport, missingTopLevelModule } from './packages/importNames';
import { findLocalModule } from './packages/localModules';
import {
  distributionOf,
  parsePackageList,
  parseRequirement,
  type PackageSpec,
  type RequirementSpec,
} from './packages/spec';
import { roundMs, shapeResult } from './result';
import type { BackendKind, Diagnostics, Logger, PackageReport, PackagesResult, RunOrigin, ScriptRun } from './types';
import type { BackendOutcome } from './backends/contract';
import type { SessionPool } from './sessions/pool';
import { SessionLimitError, type ActiveRun, type Session } from './sessions/session';

export interface PackagesOptions {
  /** Names with optional extras and version specifiers, absolute .whl paths or .whl URLs (see packages/spec.ts). */
  packages: unknown;
  backend?: BackendKind;
  session?: string;
  /** As RunOptions.scope. */
  scope?: string;
  /** Who asked, for the run an install shows as (as RunOptions.origin). */
  origin?: RunOrigin;
}

/** Per packages call (install or check). */
export const MAX_PACKAGES = 20;

/** What auto-install did for a run: the package it installed before running the code again, or why it could not. */
export type AutoInstall = { installed: string } | { hint: string };

export class Installs {
  constructor(
    private readonly pool: SessionPool,
    private readonly events: EngineEvents,
    private readonly config: () => EngineConfig,
    private readonly log: Logger,
    private readonly workspaceRoots: string[],
  ) {}

  async packages(action: PackagesResult['action'], options: PackagesOptions): Promise<PackagesResult> {
    const defaultBackend = this.config().defaultBackend;
    const backend = options.backend ?? defaultBackend;
    const sessionName = options.session ?? 'default';
    const refuse = (message: string): PackagesResult => ({
      success: false,
      action,
      backend: isBackendKind(backend) ? backend : defaultBackend,
      session: sessionName,
      packages: [],
      message,
      duration_ms: 0,
    });
    const invalid = this.pool.invalidTarget(backend, sessionName) ?? this.pool.disabledReason(backend);
    if (invalid) return refuse(invalid);
    const specs = parsePackageList(options.packages, MAX_PACKAGES);
    if ('error' in specs) return refuse(specs.error);
    const requirements = specs.filter((s): s is RequirementSpec => s.kind === 'requirement');
    if (action === 'check' && requirements.length !== specs.length) {
      return refuse('a check takes package names (with optional version specifiers), not wheel files or URLs');
    }
    let session: Session;
    try {
      session = this.pool.get(backend, sessionName, options.scope);
    } catch (error) {
      if (error instanceof SessionLimitError) return refuse(error.message);
      throw error;
    }
    session.lastWork = `%pip ${action} ${specs.map((spec) => spec.requested).join(' ')}`;
    return session.enqueue(async (): Promise<PackagesResult> => {
      const started = performance.now();
      const shown = action === 'install' ? this.showInstall(session, specs, options.origin) : undefined;
      let report: PackageReport;
      try {
        report =
          action === 'install' ? await this.installInto(session, specs) : await this.checkIn(session, requirements);
      } catch (error) {
        const message = errorText(error);
        report = {
          packages: specs.map((spec) => ({
            name: distributionOf(spec),
            requested: spec.requested,
            installed: false,
            error: message,
          })),
          message,
        };
      }
      this.events.emitState();
      const duration_ms = roundMs(performance.now() - started);
      const result: PackagesResult = {
        success: report.packages.every((p) => p.installed),
        action,
        backend,
        session: session.name,
        ...report,
        duration_ms,
      };
      shown?.(result);
      return result;
    });
  }

  /**
   * On ModuleNotFoundError in Pyodide (with auto-install on), installs the missing package once. Returns
   * `name==version` when the code is worth running again, else a hint saying what was tried.
   */
  async autoInstall(
    session: Session,
    outcome: BackendOutcome,
    active: ActiveRun,
    script: ScriptRun | undefined,
  ): Promise<AutoInstall | undefined> {
    if (!this.config().autoInstall || session.backend.kind !== 'pyodide' || active.interruptedBy) return undefined;
    if (outcome.status !== 'error' || outcome.excName !== 'ModuleNotFoundError') return undefined;
    const module = missingTopLevelModule(outcome.message);
    if (!module) return undefined;
    const folders = [
      ...(script ? [path.dirname(script.path), ...(script.cwd ? [script.cwd] : [])] : []),
      ...this.workspaceRoots,
    ];
    const local = findLocalModule(module, folders);
    if (local) {
      return {
        hint: `"${module}" was not installed: it is your own module (${local}), so its folder is not on sys.path for this run. Run the file that imports it (its folder comes first on sys.path), or add the folder to sys.path.`,
      };
    }
    const spec = parseRequirement(distributionForImport(module));
    if ('error' in spec) return undefined;
    let report: PackageReport;
    try {
      report = await this.installInto(session, [spec]);
    } catch (error) {
      report = { packages: [], message: errorText(error) };
    }
    const status = report.packages[0];
    if (status?.installed) return { installed: `${status.name}==${status.version ?? '?'}` };
    return {
      hint: `auto-install tried to install "${spec.name}" for the missing module "${module}" and failed: ${status?.error ?? report.message}`,
    };
  }

  /**
   * An install shows as a run of `%pip install …`, as it is a cell in a notebook: the results view, the runs
   * channel, the history and the status bar see it start and end, with every package's outcome and pip's
   * whole error. Returns what ends it.
   */
  private showInstall(
    session: Session,
    specs: PackageSpec[],
    origin: RunOrigin = 'test',
  ): (result: PackagesResult) => void {
    const runId = this.events.nextRunId();
    const { kind: backend } = session.backend;
    const code = `%pip install ${specs.map((spec) => spec.requested).join(' ')}`;
    this.events.emitRun({
      type: 'started',
      runId,
      session: session.name,
      backend,
      code,
      origin,
      startedAt: Date.now(),
    });
    return (result) => {
      const installed = result.packages.filter((p) => p.installed).map((p) => `${p.name} ${p.version ?? ''}`.trim());
      const failed = result.packages
        .filter((p) => !p.installed)
        .map((p) => `${p.requested}: ${p.error ?? 'not installed'}`);
      const stdout = installed.length > 0 ? `installed ${installed.join(', ')}\n` : '';
      const stderr = failed.length > 0 ? `${failed.join('\n')}\n` : '';
      if (stdout) this.events.emitRun({ type: 'stdout', runId, text: stdout });
      if (stderr) this.events.emitRun({ type: 'stderr', runId, text: stderr });
      const diagnostics: Diagnostics | null = result.success
        ? null
        : { error_type: 'RuntimeError', message: result.message };
      this.events.emitRun({
        type: 'finished',
        runId,
        result: shapeResult({
          runId,
          backend,
          session: session.name,
          durationMs: result.duration_ms,
          diagnostics,
          stdout,
          stderr,
        }),
      });
    };
  }

  private installInto(session: Session, specs: PackageSpec[]): Promise<PackageReport> {
    const backend = session.backend;
    if (!backend.installPackages) throw new Error(`the ${backend.kind} backend cannot install packages`);
    this.log.info(
      `installing into the ${backend.kind} session "${session.name}": ${specs.map((s) => s.requested).join(', ')}`,
    );
    const { wheelhouse, settingNames } = this.config();
    return backend.installPackages(specs, { wheelhouse, wheelhouseSetting: settingNames.wheelhouse });
  }

  private checkIn(session: Session, specs: RequirementSpec[]): Promise<PackageReport> {
    if (!session.backend.checkPackages) throw new Error(`the ${session.backend.kind} backend cannot check packages`);
    return session.backend.checkPackages(specs);
  }
}
