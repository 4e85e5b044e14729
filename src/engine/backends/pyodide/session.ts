// One session of the Pyodide backend: its confined host process, started on first use and again after a crash
// or restart, the run in flight on it and its package requests.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { encodeFrame, FrameDecoder, MAX_FRAME_FROM_INTERPRETER_BYTES } from '../../framing';
import { assetsDir } from '../../paths';
import { fileView } from '../../sandbox/fileView';
import { spawnConfinedHost, type NetworkAccess, type SandboxChoice } from '../../sandbox/index';
import { checkedStatus, summarize } from '../../packages/report';
import type { PackageSpec, RequirementSpec } from '../../packages/spec';
import type { BackendInfo, BackendState, InstallOptions, Logger, PackageReport } from '../../types';
import type { BackendOutcome, BackendRunRequest, BackendSession, BackendSessionOptions, BackendSink } from '../contract';
import { checkCacheSince, installReport, planInstall } from './packagePlan';
import { parseFromHost } from './hostMessages';
import { HOST_INPUT_FD, HOST_OUTPUT_FD, type FromHost, type HostConfig, type InstallStep, type OutputChunk, type PackagesReply, type ReadyInfo, type SnapshotRef, type ToHost } from './protocol';
import { errorText } from '../../errorText';
import { PendingRequests } from '../../requests';
import { StateLoss } from '../stateLoss';
import type { SnapshotCache, SnapshotOrigin } from './snapshotCache';

/** How much of the host process's own stderr is kept to explain a crash. */
const STDERR_KEPT_CHARS = 4000;
/**
 * Pyodide's WebAssembly compiled on the worker thread as it is instantiated, not by background tasks: those
 * held the worker's event loop for 40-150 ms after every load, under Node and Deno alike (code still tiers up
 * to optimized code, so warm runs are as fast).
 */
const V8_FLAGS = ['--no-wasm-async-compilation'];

/** What every session of one backend shares. */
export interface SharedSetup {
  cacheDir: string;
  heapLimitMb: number;
  network: NetworkAccess;
  sandboxChoice: SandboxChoice;
  workspaceWritable: boolean;
  protectedPaths: string[];
  snapshots: SnapshotCache;
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
  toHost: Writable;
  /** Where a starting host writes a new snapshot, until the backend takes it. */
  outbox?: string;
  /** The snapshot it was told to start from, and where that came from. */
  snapshot?: SnapshotRef;
  snapshotOrigin?: SnapshotOrigin;
  /** restart() or dispose() killed it: its end is not news to anyone. */
  killedByUs: boolean;
  /** Resolves when Pyodide can run code; rejects if the process fails or is killed first. */
  ready: Promise<void>;
  failStart(error: Error): void;
  info?: ReadyInfo;
  stderrTail: string;
  exited: Promise<void>;
}

export class PyodideSession implements BackendSession {
  readonly kind = 'pyodide';
  private current: Host | undefined;
  private pending: PendingRun | undefined;
  private loading = false;
  private disposed = false;
  private lastInfo: ReadyInfo | undefined;
  /** Package requests sent to the current host, by id. */
  private readonly packageRequests = new PendingRequests<number, PackagesReply>();
  private lastPackagesId = 0;
  private readonly stateLoss = new StateLoss();

  constructor(
    private readonly shared: () => SharedSetup,
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
    this.send(host, { type: 'run', runId: request.runId, code: request.code, script: request.script, outputCapBytes: request.outputCapBytes });
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
    await this.kill(host, 'Python was restarted; its state is gone');
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

  takeStateLoss(): string | undefined {
    return this.stateLoss.take();
  }

  /** Into this instance only: a restart (reset, crash, MemoryError) starts without them. */
  async installPackages(specs: PackageSpec[], options: InstallOptions): Promise<PackageReport> {
    const started = Date.now();
    // Downloads and checks first: offline, that fails before an instance is even started.
    const { cacheDir } = this.shared();
    const plan = await planInstall(specs, cacheDir, options);
    await this.start();
    const reply = await this.packagesRequest(plan.steps, plan.planned.map((p) => p.name));
    return installReport(plan, reply, plan.usesMicropip ? checkCacheSince(cacheDir, started) : []);
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
    // A host that goes away answers every request it had as failed, with the reason.
    const reply = this.packageRequests.wait(id).catch((error: unknown): PackagesReply => ({ type: 'packagesDone', id, errors: [], versions: {}, failed: errorText(error) }));
    this.send(host, { type: 'packages', id, steps, versionsOf });
    return reply;
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const host = this.current;
    if (!host) return;
    await this.kill(host, 'the session was disposed');
  }

  /** Ends `host` on purpose: what waits on it is told `reason`, and its exit is not taken for a crash. */
  private async kill(host: Host, reason: string): Promise<void> {
    host.killedByUs = true;
    this.detach(host, reason);
    host.child.kill('SIGKILL');
    await host.exited;
  }

  // ---- the host process --------------------------------------------------------------------------------

  private host(): Host {
    return (this.current ??= this.spawn());
  }

  private spawn(): Host {
    const shared = this.shared();
    const start = shared.snapshots.forStart();
    const snapshot = start?.snapshot;
    const outbox = snapshot ? undefined : shared.snapshots.createOutbox();
    const workspace = existingFolders(this.options.workspaceRoots ?? []);
    // The session's own folder (scratch.ts), bound read-write: no other session's is in this sandbox.
    const scratchDir = this.options.scratchDir && ensureFolder(this.options.scratchDir, this.options.log);
    const assets = fs.realpathSync(assetsDir());
    const view = fileView({
      // The package cache and the snapshot: read-only, so no session can change what another one loads.
      readOnly: [assets, shared.cacheDir, ...(shared.workspaceWritable ? [] : workspace)],
      readWrite: [...(shared.workspaceWritable ? workspace : []), ...(scratchDir ? [scratchDir] : []), ...(outbox ? [outbox] : [])],
      workspaceRoots: shared.workspaceWritable ? workspace : [],
      protectedPaths: shared.protectedPaths,
    });
    if (view.skipped > 0) this.options.log.warn(`${view.skipped} entries at the top of the workspace stay read-only in Pyodide: too many to mount one by one`);
    const hostConfig: HostConfig = {
      cacheDir: shared.cacheDir,
      heapLimitMb: shared.heapLimitMb,
      scratchDir,
      snapshot,
      snapshotOutbox: outbox,
      network: shared.network,
      networkSetting: this.options.settingNames?.pyodideNetwork,
      workspaceRoots: workspace,
      mounts: view.mounts,
    };
    const { child, report } = spawnConfinedHost(
      path.join(assets, 'pyodide-host.cjs'),
      [JSON.stringify(hostConfig)],
      // Deno's cache sits in the package cache: read-only to the code it runs, so no session can change what another one loads.
      { mounts: view.mounts, network: shared.network, cwd: assets, choice: shared.sandboxChoice, denoDir: path.join(shared.cacheDir, 'deno'), v8Flags: V8_FLAGS, log: this.options.log },
      2,
    );
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
      toHost: child.stdio[HOST_INPUT_FD] as Writable,
      outbox,
      snapshot,
      snapshotOrigin: start?.origin,
      killedByUs: false,
      ready,
      failStart,
      stderrTail: '',
      exited: new Promise((resolve) => {
        markExited = resolve;
        child.once('exit', () => resolve());
      }),
    };
    const log = this.options.log;
    // A pipe breaking as the process dies is reported by its exit, not as an error of its own.
    for (const stream of child.stdio) stream?.on('error', () => undefined);
    child.stdout!.setEncoding('utf8').on('data', (text: string) => log.info(`[pyodide ${child.pid}] ${text.trimEnd()}`));
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      host.stderrTail = (host.stderrTail + text).slice(-STDERR_KEPT_CHARS);
      log.warn(`[pyodide ${child.pid}] ${text.trimEnd()}`);
    });
    // Bounded from each frame's header, before its body is buffered: an oversized one ends the host (stopMisbehaving).
    const decoder = new FrameDecoder(MAX_FRAME_FROM_INTERPRETER_BYTES);
    (child.stdio[HOST_OUTPUT_FD] as Readable).on('data', (chunk: Buffer) => {
      if (this.current !== host) return;
      let messages: FromHost[];
      try {
        messages = decoder.push(chunk).map(parseFromHost);
      } catch (error) {
        this.stopMisbehaving(host, `malformed message from the Pyodide process: ${errorText(error)}`);
        return;
      }
      for (const message of messages) {
        if (this.current !== host) return;
        this.onHostFrame(host, message, resolveReady, failStart);
      }
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
      if (host.outbox) shared.snapshots.discardOutbox(host.outbox);
      const how = signal ? `was killed (${signal})` : `exited with code ${code}${code !== null && code > 128 ? ` (signal ${code - 128})` : ''}`;
      const detail = host.stderrTail.trim() ? `: ${host.stderrTail.trim()}` : '';
      this.detach(host, `the Pyodide process ${how}${detail}`);
    });
    this.backendLog.info(`Pyodide host process ${child.pid} started for session ${this.options.session} (sandbox: ${report.mechanism})`);
    return host;
  }

  private onHostFrame(host: Host, message: FromHost, resolveReady: () => void, failStart: (error: Error) => void): void {
    const log = this.options.log;
    if (message.type === 'ready') {
      const { type: _type, ...info } = message;
      // The snapshot was written before any user code ran; taken now, before the first run is sent.
      const made = host.outbox !== undefined && this.shared().snapshots.adopt(host.outbox);
      if (info.snapshotRejected && host.snapshot && host.snapshotOrigin) this.shared().snapshots.reject(host.snapshot, host.snapshotOrigin, info.snapshotRejected);
      host.outbox = undefined;
      host.info = this.lastInfo = info;
      this.loading = false;
      const source = info.fromSnapshot ? `from the ${host.snapshotOrigin === 'shipped' ? 'shipped' : 'cached'} snapshot` : made ? 'cold (snapshot created)' : 'cold';
      log.info(`Pyodide ${info.pyodideVersion} (Python ${info.pythonVersion}) ready in ${info.loadMs} ms, ${source}; pid ${host.child.pid}`);
      resolveReady();
      return;
    }
    if (message.type === 'fatal') {
      this.discardSnapshotOfFailedStart(host, message.message);
      failStart(new Error(`Pyodide could not start: ${message.message}`));
      return;
    }
    this.onHostMessage(host, message);
  }

  /**
   * A start from a snapshot that failed may have been failed by the snapshot: one that hashes right can still fail
   * to restore, which ends the worker. Discarded like a changed one, the next start makes a new one instead of
   * failing the same way.
   */
  private discardSnapshotOfFailedStart(host: Host, reason: string): void {
    if (!host.snapshot || !host.snapshotOrigin) return;
    this.shared().snapshots.reject(host.snapshot, host.snapshotOrigin, `Pyodide failed to start from it (${reason})`);
  }

  /** The host broke the protocol (forged or corrupt message): it is ended, and the session says so. */
  private stopMisbehaving(host: Host, reason: string): void {
    this.options.log.error(`${reason}; stopping the Pyodide process ${host.child.pid}`);
    this.detach(host, `${reason}; the Pyodide process was stopped`);
    host.child.kill('SIGKILL');
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
        if (message.stateLost) this.stateLoss.remember(`the Pyodide instance was replaced between runs: ${message.stateLost}`);
        return;
      case 'hostCall':
        void this.answerHostCall(host, message.id, message.method, message.params);
        return;
      case 'packagesDone':
        this.packageRequests.resolve(message.id, message);
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
      host.toHost.write(encodeFrame(reply));
    } catch (error) {
      // Not JSON (a BigInt, a cycle) or too large: Python gets an error instead.
      this.send(host, { type: 'hostCallReply', id, ok: false, error: `host call result cannot be sent to Python: ${errorText(error)}` });
    }
  }

  private send(host: Host, message: ToHost): void {
    // A send racing the process's death is harmless: its exit handler settles whatever was pending.
    if (host.toHost.writable) host.toHost.write(encodeFrame(message));
  }

  /** Forgets `host` (dead or being killed): a pending run resolves as crashed, the next use starts afresh. */
  private detach(host: Host, reason: string): void {
    host.failStart(new Error(reason));
    if (this.current !== host) return;
    this.current = undefined;
    this.loading = false;
    if (!host.info && !host.killedByUs) this.discardSnapshotOfFailedStart(host, reason);
    if (this.pending) this.settle(this.pending, { status: 'crashed', message: reason });
    else if (host.info && !host.killedByUs) this.stateLoss.remember(`${reason} between runs`);
    this.packageRequests.rejectAll(new Error(reason));
  }

  private settle(pending: PendingRun, outcome: BackendOutcome): void {
    if (this.pending !== pending) return;
    this.pending = undefined;
    pending.resolve(outcome);
  }
}

/** `folder`, made again if someone removed it (the sandbox cannot bind a missing folder); undefined if it cannot be. */
function ensureFolder(folder: string, log: Logger): string | undefined {
  try {
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    return folder;
  } catch (error) {
    log.warn(`the scratch folder ${folder} could not be made, so this session has none: ${errorText(error)}`);
    return undefined;
  }
}

/** Real paths of the folders that exist: each is bound into the sandbox, and mounted in Pyodide, at that path. */
function existingFolders(folders: string[]): string[] {
  return folders.flatMap((folder) => {
    try {
      return fs.statSync(folder).isDirectory() ? [fs.realpathSync(folder)] : [];
    } catch {
      return [];
    }
  });
}
