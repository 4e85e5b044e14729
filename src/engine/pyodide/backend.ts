// The Pyodide backend: one forked host process per session (host.ts), which runs Pyodide on a worker thread
// (worker.ts). A separate process means nothing Python does (runaway memory, a wasm abort, a stuck C loop)
// can take the extension or CLI down, and a restart is a plain SIGKILL.
import { type ChildProcess, fork, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { assetsDir } from '../paths';
import { checkedStatus, summarize } from '../packages/report';
import type { PackageSpec, RequirementSpec } from '../packages/spec';
import {
  type BackendFactory,
  type BackendInfo,
  type BackendOutcome,
  type BackendRunRequest,
  type BackendSession,
  type BackendSessionOptions,
  type BackendSink,
  type BackendState,
  type InstallOptions,
  type Logger,
  type PackageReport,
  silentLogger,
} from '../types';
import { checkCacheSince, installReport, planInstall } from './packagePlan';
import type { FromHost, HostConfig, InstallStep, OutputChunk, PackagesReply, ReadyInfo, ToHost } from './protocol';
import { errorText } from '../errorText';

export interface PyodideBackendConfig {
  /**
   * Cap on the WebAssembly heap of each instance in MB; runaway allocation raises MemoryError there and the
   * instance is recycled. Default 1024; at least 64; values above 4096 mean no cap beyond wasm's own 4 GiB.
   */
  heapLimitMb?: number;
  /** Where the Pyodide memory snapshot is cached (shared by all sessions). */
  cacheDir: string;
  /** Backend-level messages; each session also logs to its own BackendSessionOptions.log. */
  log?: Logger;
}

const DEFAULT_HEAP_LIMIT_MB = 1024;
/** Below this a Pyodide instance cannot even start. */
const MIN_HEAP_LIMIT_MB = 64;
/** 32-bit WebAssembly cannot address more: a larger limit is no limit. */
const MAX_HEAP_LIMIT_MB = 4096;
/** How much of the host process's own stderr is kept to explain a crash. */
const STDERR_KEPT_CHARS = 4000;

export function createPyodideBackend(config: PyodideBackendConfig): BackendFactory {
  const requested = config.heapLimitMb ?? DEFAULT_HEAP_LIMIT_MB;
  if (!(requested >= MIN_HEAP_LIMIT_MB)) throw new RangeError(`heapLimitMb must be at least ${MIN_HEAP_LIMIT_MB}, got ${requested}`);
  const heapLimitMb = Math.min(Math.floor(requested), MAX_HEAP_LIMIT_MB);
  const hostConfig: HostConfig = { cacheDir: path.resolve(config.cacheDir), heapLimitMb };
  const backendLog = config.log ?? silentLogger;
  return {
    kind: 'pyodide',
    create: (options) => new PyodideSession(hostConfig, options, backendLog),
  };
}

interface PendingRun {
  runId: string;
  sink: BackendSink;
  resolve(outcome: BackendOutcome): void;
  /** interrupt() came before the run reached the host (it was still starting). */
  interrupted: boolean;
}

/** The host process and what is known about it; replaced as a whole on restart or crash. */
interface Host {
  child: ChildProcess;
  /** Resolves when Pyodide can run code; rejects if the process fails or is killed first. */
  ready: Promise<void>;
  failStart(error: Error): void;
  info?: ReadyInfo;
  stderrTail: string;
  exited: Promise<void>;
}

class PyodideSession implements BackendSession {
  readonly kind = 'pyodide';
  private current: Host | undefined;
  private pending: PendingRun | undefined;
  private loading = false;
  private disposed = false;
  private lastInfo: ReadyInfo | undefined;
  /** Package requests sent to the current host, by id. */
  private readonly packageRequests = new Map<number, (reply: PackagesReply) => void>();
  private lastPackagesId = 0;

  constructor(
    private readonly config: HostConfig,
    private readonly options: BackendSessionOptions,
    private readonly backendLog: Logger,
  ) {}

  get state(): BackendState {
    if (this.disposed) return 'dead';
    if (!this.current) return 'not-loaded';
    if (this.loading) return 'loading';
    return this.pending ? 'busy' : 'ready';
  }

  async start(): Promise<void> {
    if (this.disposed) throw new Error(`session ${this.options.session} was disposed`);
    await this.host().ready;
  }

  async run(request: BackendRunRequest, sink: BackendSink): Promise<BackendOutcome> {
    if (this.disposed) return { status: 'crashed', message: 'the session was disposed' };
    if (this.pending) throw new Error(`session ${this.options.session} is already running ${this.pending.runId}`);
    let host: Host;
    try {
      host = this.host();
    } catch (error) {
      return { status: 'crashed', message: `could not start Pyodide: ${errorText(error)}` };
    }
    let resolve = (_outcome: BackendOutcome): void => undefined;
    const outcome = new Promise<BackendOutcome>((settle) => (resolve = settle));
    const pending: PendingRun = { runId: request.runId, sink, resolve, interrupted: false };
    this.pending = pending;
    if (!host.info) {
      try {
        await host.ready;
      } catch (error) {
        this.settle(pending, { status: 'crashed', message: errorText(error) });
        return outcome;
      }
      if (this.pending !== pending) return outcome;
      if (pending.interrupted) {
        this.settle(pending, { status: 'interrupted' });
        return outcome;
      }
    }
    this.send(host, { type: 'run', runId: request.runId, code: request.code, outputCapBytes: request.outputCapBytes });
    return outcome;
  }

  interrupt(): void {
    const pending = this.pending;
    if (!pending) return;
    pending.interrupted = true;
    if (this.current?.info) this.send(this.current, { type: 'interrupt' });
  }

  async restart(): Promise<void> {
    const host = this.current;
    if (!host) return;
    this.detach(host, 'Python was restarted; its state is gone');
    host.child.kill('SIGKILL');
    await host.exited;
    // The next run should not wait for a cold start: bring the fresh instance up now.
    if (!this.disposed) this.start().catch((error: unknown) => this.options.log.warn(`Pyodide restart failed: ${errorText(error)}`));
  }

  info(): BackendInfo {
    const info = this.current?.info ?? this.lastInfo;
    return {
      kind: 'pyodide',
      state: this.state,
      pyodideVersion: info?.pyodideVersion,
      pythonVersion: info?.pythonVersion,
      executable: info && `Pyodide ${info.pyodideVersion}`,
      pid: this.current?.child.pid,
    };
  }

  /** Into this instance only: a restart (reset, crash, MemoryError) starts without them. */
  async installPackages(specs: PackageSpec[], options: InstallOptions): Promise<PackageReport> {
    const started = Date.now();
    // Downloads and checks first: offline, that fails before an instance is even started.
    const plan = await planInstall(specs, this.config.cacheDir, options.wheelhouse);
    await this.start();
    const reply = await this.packagesRequest(plan.steps, plan.planned.map((p) => p.name));
    return installReport(plan, reply, plan.usesMicropip ? checkCacheSince(this.config.cacheDir, started) : []);
  }

  async checkPackages(specs: RequirementSpec[]): Promise<PackageReport> {
    await this.start();
    const reply = await this.packagesRequest([], specs.map((s) => s.name));
    if (reply.failed) throw new Error(reply.failed);
    const packages = specs.map((spec) => checkedStatus(spec, reply.versions[spec.name] ?? undefined));
    return { packages, message: summarize(packages, 'check') };
  }

  private packagesRequest(steps: InstallStep[], versionsOf: string[]): Promise<PackagesReply> {
    const host = this.host();
    const id = ++this.lastPackagesId;
    return new Promise((resolve) => {
      this.packageRequests.set(id, resolve);
      this.send(host, { type: 'packages', id, steps, versionsOf });
    });
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const host = this.current;
    if (!host) return;
    this.detach(host, 'the session was disposed');
    host.child.kill('SIGKILL');
    await host.exited;
  }

  // ---- the host process --------------------------------------------------------------------------------

  private host(): Host {
    return (this.current ??= this.spawn());
  }

  private spawn(): Host {
    const hostConfig: HostConfig = { ...this.config, scratchDir: this.options.scratchDir };
    const child = fork(path.join(assetsDir(), 'pyodide-host.js'), [JSON.stringify(hostConfig)], {
      env: minimalEnvironment(),
      // Never inherit the parent's flags (--inspect ports, tsx loaders under tests).
      execArgv: permissionFlags(this.config.cacheDir, this.options.scratchDir),
      cwd: assetsDir(),
      // Large code and output strings are copied as they are instead of being JSON-escaped and re-parsed.
      serialization: 'advanced',
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.loading = true;
    let resolveReady = (): void => undefined;
    let failStart = (_error: Error): void => undefined;
    const ready = new Promise<void>((resolve, reject) => {
      resolveReady = resolve;
      failStart = reject;
    });
    // A failed start is reported to start()/run() callers; with none waiting it must not be an unhandled rejection.
    ready.catch(() => undefined);
    let markExited = (): void => undefined;
    const host: Host = {
      child,
      ready,
      failStart,
      stderrTail: '',
      exited: new Promise((resolve) => {
        markExited = resolve;
        child.once('exit', () => resolve());
      }),
    };
    const log = this.options.log;
    child.stdout!.setEncoding('utf8').on('data', (text: string) => log.info(`[pyodide ${child.pid}] ${text.trimEnd()}`));
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      host.stderrTail = (host.stderrTail + text).slice(-STDERR_KEPT_CHARS);
      log.warn(`[pyodide ${child.pid}] ${text.trimEnd()}`);
    });
    child.on('message', (message: FromHost) => {
      if (this.current !== host) return;
      if (message.type === 'ready') {
        const { type: _type, ...info } = message;
        host.info = this.lastInfo = info;
        this.loading = false;
        const source = info.fromSnapshot ? 'from the cached snapshot' : 'cold (snapshot created)';
        log.info(`Pyodide ${info.pyodideVersion} (Python ${info.pythonVersion}) ready in ${info.loadMs} ms, ${source}; pid ${child.pid}`);
        resolveReady();
        return;
      }
      if (message.type === 'fatal') {
        failStart(new Error(`Pyodide could not start: ${message.message}`));
        return;
      }
      this.onHostMessage(host, message);
    });
    child.on('error', (error) => {
      log.error(`Pyodide host process error: ${error.message}`);
      // The runtime could not be executed at all: no 'exit' event will follow.
      if (child.pid === undefined) {
        markExited();
        this.detach(host, `could not start the Pyodide process: ${error.message}`);
      }
    });
    child.once('exit', (code, signal) => {
      const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
      const detail = host.stderrTail.trim() ? `: ${host.stderrTail.trim()}` : '';
      this.detach(host, `the Pyodide process ${how}${detail}`);
    });
    this.backendLog.info(`Pyodide host process ${child.pid} started for session ${this.options.session}`);
    return host;
  }

  private onHostMessage(host: Host, message: FromHost): void {
    const pending = this.pending;
    switch (message.type) {
      case 'output':
        if (pending?.runId === message.runId) this.deliver(pending, message);
        return;
      case 'display':
        if (pending?.runId !== message.runId) return;
        try {
          pending.sink.display(message.display);
        } catch (error) {
          this.options.log.error(`display sink failed: ${errorText(error)}`);
        }
        return;
      case 'result':
        if (pending?.runId !== message.runId) return;
        for (const chunk of message.output) this.deliver(pending, chunk);
        this.settle(pending, message.outcome);
        return;
      case 'loading':
        this.loading = true;
        return;
      case 'hostCall':
        void this.answerHostCall(host, message.id, message.method, message.params);
        return;
      case 'packagesDone':
        this.packageRequests.get(message.id)?.(message);
        this.packageRequests.delete(message.id);
        return;
      case 'log':
        this.options.log[message.level](`[pyodide] ${message.message}`);
    }
  }

  private deliver(pending: PendingRun, chunk: OutputChunk): void {
    try {
      if ('dropped' in chunk) pending.sink.dropped(chunk.stream, chunk.dropped);
      else pending.sink[chunk.stream](chunk.text);
    } catch (error) {
      this.options.log.error(`output sink failed: ${errorText(error)}`);
    }
  }

  private async answerHostCall(host: Host, id: number, method: string, params: unknown): Promise<void> {
    let reply: ToHost;
    try {
      reply = { type: 'hostCallReply', id, ok: true, value: await this.options.hostCall(method, params) };
    } catch (error) {
      reply = { type: 'hostCallReply', id, ok: false, error: errorText(error) };
    }
    if (this.current !== host) return;
    try {
      host.child.send(reply);
    } catch (error) {
      // Not structured-cloneable (a function, a class instance with private state): Python gets an error.
      this.send(host, { type: 'hostCallReply', id, ok: false, error: `host call result cannot be sent to Python: ${errorText(error)}` });
    }
  }

  private send(host: Host, message: ToHost): void {
    // A send racing the process's death is harmless: its exit handler settles whatever was pending.
    if (host.child.connected) host.child.send(message, (error) => error && this.options.log.warn(`Pyodide IPC: ${error.message}`));
  }

  /** Forgets `host` (dead or being killed): a pending run resolves as crashed, the next use starts afresh. */
  private detach(host: Host, reason: string): void {
    host.failStart(new Error(reason));
    if (this.current !== host) return;
    this.current = undefined;
    this.loading = false;
    if (this.pending) this.settle(this.pending, { status: 'crashed', message: reason });
    for (const [id, resolve] of this.packageRequests) resolve({ type: 'packagesDone', id, errors: [], versions: {}, failed: reason });
    this.packageRequests.clear();
  }

  private settle(pending: PendingRun, outcome: BackendOutcome): void {
    if (this.pending !== pending) return;
    this.pending = undefined;
    pending.resolve(outcome);
  }
}

/**
 * Node's permission model for the host process, where the runtime has it: Python reaches the worker's JS
 * globals (`import js`), so the process itself may read only the bundled files, the snapshot cache and the
 * scratch folder, write only the cache and the scratch folder, and never spawn processes or load native addons.
 */
export function permissionFlags(cacheDir: string, scratchDir?: string): string[] {
  const enable = permissionFlag();
  if (!enable) return [];
  const scratch = scratchDir ? [`--allow-fs-read=${scratchDir}`, `--allow-fs-write=${scratchDir}`] : [];
  return [enable, `--allow-fs-read=${assetsDir()}`, `--allow-fs-read=${cacheDir}`, `--allow-fs-write=${cacheDir}`, ...scratch, '--allow-worker', '--no-warnings'];
}

let checkedPermissionFlag: string | null | undefined;

/**
 * The flag that turns the permission model on, checked once by starting the runtime with it: a runtime may
 * list the flag and still refuse it (an Electron build), and Pyodide must start either way.
 */
function permissionFlag(): string | undefined {
  if (checkedPermissionFlag !== undefined) return checkedPermissionFlag ?? undefined;
  const listed = process.allowedNodeEnvironmentFlags;
  const candidate = listed.has('--permission') ? '--permission' : listed.has('--experimental-permission') ? '--experimental-permission' : undefined;
  const works = candidate !== undefined && spawnSync(process.execPath, [candidate, '--allow-worker', '--no-warnings', '-e', ''], { env: minimalEnvironment(), timeout: 10_000 }).status === 0;
  checkedPermissionFlag = works ? candidate : null;
  return checkedPermissionFlag ?? undefined;
}

/** Only what Node itself needs: the host's variables (tokens, paths, proxies) never reach Python. */
function minimalEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Inside VS Code, process.execPath is Electron, which only behaves as Node with this set.
  if (process.versions.electron) env.ELECTRON_RUN_AS_NODE = '1';
  // Windows system libraries (crypto, sockets) locate themselves through it.
  if (process.platform === 'win32' && process.env.SystemRoot) env.SystemRoot = process.env.SystemRoot;
  return env;
}

