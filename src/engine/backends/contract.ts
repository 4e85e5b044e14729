// What a backend implements, and what the engine gives it: the types only backends and the engine use.
import type { SettingNames } from '../config';
import type { PackageSpec, RequirementSpec } from '../packages/spec';
import type { SandboxReport } from '../sandbox/index';
import type {
  BackendInfo,
  BackendKind,
  BackendState,
  Display,
  HostCallHandler,
  InstallOptions,
  Logger,
  PackageReport,
  ScriptRun,
} from '../types';

export interface BackendRunRequest {
  runId: string;
  code: string;
  script?: ScriptRun;
  /** Show the value of the code's last expression (RunOptions.echoLastExpression); absent: true. */
  echoLastExpression?: boolean;
  /** Bytes of stdout (and separately stderr) worth sending; sources may drop the middle beyond it. */
  outputCapBytes: number;
}

/**
 * A display as an interpreter sends it (displays.py). `result` marks the value of the code's last expression
 * (OutputItem's execute_result): its `text` is the repr beside a richer `mime`, or `data` is the repr (text/plain).
 */
export interface BackendDisplay extends Display {
  result?: true;
  text?: string;
}

/** Where a backend writes a run's output as it is produced. */
export interface BackendSink {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The source dropped this many bytes from the middle of a stream to stay within the cap. */
  dropped(stream: 'stdout' | 'stderr', bytes: number): void;
  display(display: BackendDisplay): void;
}

export type BackendOutcome =
  | { status: 'ok'; sessionReset?: boolean }
  | {
      status: 'error';
      errorType: 'SyntaxError' | 'RuntimeError';
      /** Python exception class name, e.g. ZeroDivisionError. */
      excName: string;
      message: string;
      traceback: string;
      /** The instance was recycled after this error (e.g. MemoryError in Pyodide). */
      sessionReset?: boolean;
    }
  /** The code stopped on KeyboardInterrupt after interrupt(). */
  | { status: 'interrupted' }
  /** The interpreter died or was killed during the run; a fresh one starts on next use. */
  | {
      status: 'crashed';
      message: string;
      /** restart() was asked for and failed, saying this: the interpreter is gone, not restarted. */
      restartFailed?: string;
    };

/** One interpreter instance serving one named session. The engine never runs two requests on it at once. */
export interface BackendSession {
  readonly kind: BackendKind;
  readonly state: BackendState;
  /** Starts the interpreter if needed; resolves when it can run code. */
  start(): Promise<void>;
  run(request: BackendRunRequest, sink: BackendSink): Promise<BackendOutcome>;
  /** Asks the running code to stop (KeyboardInterrupt). No-op when idle. */
  interrupt(): void;
  /** Kills the interpreter (whole process group) and clears state; a pending run resolves as `crashed`. */
  restart(): Promise<void>;
  info(): BackendInfo;
  /**
   * Why the interpreter lost its state since the engine last asked (killed or crashed between runs, recycled),
   * or undefined; asking clears it. Losses the engine caused itself (restart, dispose) are not reported here.
   */
  takeStateLoss(): string | undefined;
  dispose(): Promise<void>;
  /**
   * Installs into this interpreter (starting it if needed); runs never overlap it. Pyodide installs live in
   * the instance and are gone after a restart; pip installs go into the interpreter's environment.
   * Absent on backends that cannot install.
   */
  installPackages?(specs: PackageSpec[], options: InstallOptions): Promise<PackageReport>;
  /** Which requested distributions are installed, with versions; installs nothing. */
  checkPackages?(specs: RequirementSpec[]): Promise<PackageReport>;
}

export interface BackendSessionOptions {
  session: string;
  hostCall: HostCallHandler;
  log: Logger;
  /** A writable folder on disk whose files runs may show by printing their paths (CODE_MODE_SCRATCH in Python). */
  scratchDir?: string;
  /** The workspace folders: code sees them at their real paths, and the first is where a session starts. */
  workspaceRoots?: string[];
  /** How the front end names its settings, for messages that tell a person what to change. */
  settingNames?: SettingNames;
}

export interface BackendFactory {
  readonly kind: BackendKind;
  create(options: BackendSessionOptions): BackendSession;
  /** What confines this backend's interpreters on this machine; absent for one that is not sandboxed. */
  sandbox?(): SandboxReport;
  /** Where this backend runs code, for `environment` and the explorer (a Jupyter Server and its kernels). */
  describe?(): Promise<Record<string, unknown>>;
  /** Releases what the factory holds beyond its sessions (a Jupyter Server it started); after the sessions are gone. */
  dispose?(): Promise<void>;
}
