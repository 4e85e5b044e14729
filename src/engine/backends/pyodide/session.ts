// One session of the Pyodide backend: its confined host process, started on first use and again after a crash
// or restart, the run in flight on it and its package requests.
import { encodeFrame } from '../../framing';
import { checkedStatus, summarize } from '../../packages/report';
import type { PackageSpec, RequirementSpec } from '../../packages/spec';
import type { BackendInfo, BackendState, Display, InstallOptions, Logger, PackageReport } from '../../types';
import type {
  BackendOutcome,
  BackendRunRequest,
  BackendSession,
  BackendSessionOptions,
  BackendSink,
} from '../contract';
import { checkCacheSince, installReport, planInstall } from './packagePlan';
import { launchHost, type LaunchedHost, type SharedSetup } from './hostLaunch';
import type { FromHost, InstallStep, OutputChunk, PackagesReply, ReadyInfo, ToHost } from './protocol';
import { errorText } from '../../errorText';
import { PendingRequests } from '../../requests';
import { StateLoss } from '../stateLoss';

/** Of a message from the host, at most this much reaches the server's log. */
const MAX_LOG_CHARS = 4000;
/** Of text from the host quoted in the server's own messages, at most this much. */
const MAX_QUOTED_CHARS = 300;

/** Text from the sandbox, bounded and quoted: never taken for the server's own words. */
function quoted(text: string): string {
  return JSON.stringify(text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text);
}

interface PendingRun {
  runId: string;
  sink: BackendSink;
  resolve(outcome: BackendOutcome): void;
  /** interrupt() came before the run reached the host (it was still starting). */
  interrupted: boolean;
  /** The run message went to the host: only from then on may anything of this run come back. */
  sent: boolean;
  /** Host calls of this run not answered yet: Python waits on each, so a second is only possible after an interrupt. */
  callsInFlight: number;
}

/** The host process and what is known about it; replaced as a whole on restart or crash. */
interface Host extends LaunchedHost {
  /** restart() or dispose() killed it: its end is not news to anyone. */
  killedByUs: boolean;
  /** Resolves when Pyodide can run code; rejects if the process fails or is killed first. */
  ready: Promise<void>;
  failStart(error: Error): void;
  info?: ReadyInfo;
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
    const pending: PendingRun = {
      runId: request.runId,
      sink,
      resolve,
      interrupted: false,
      sent: false,
      callsInFlight: 0,
    };
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
    pending.sent = true;
    host.sandbox.watchMemory();
    this.send(host, {
      type: 'run',
      runId: request.runId,
      code: request.code,
      script: request.script,
      echoLastExpression: request.echoLastExpression !== false,
      outputCapBytes: request.outputCapBytes,
    });
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
    if (!this.disposed)
      this.start().catch((error: unknown) => this.options.log.warn(`Pyodide restart failed: ${errorText(error)}`));
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
    const reply = await this.packagesRequest(
      plan.steps,
      plan.planned.map((p) => p.name),
    );
    return installReport(plan, reply, plan.usesMicropip ? checkCacheSince(cacheDir, started) : []);
  }

  async checkPackages(specs: RequirementSpec[]): Promise<PackageReport> {
    await this.start();
    const reply = await this.packagesRequest(
      [],
      specs.map((s) => s.name),
    );
    if (reply.failed) throw new Error(reply.failed);
    const packages = specs.map((spec) => checkedStatus(spec, reply.versions[spec.name] ?? undefined));
    return { packages, message: summarize(packages, 'check') };
  }

  private packagesRequest(steps: InstallStep[], versionsOf: string[]): Promise<PackagesReply> {
    const host = this.host();
    const id = ++this.lastPackagesId;
    // A host that goes away answers every request it had as failed, with the reason.
    const reply = this.packageRequests.wait(id).catch((error: unknown): PackagesReply => ({
      type: 'packagesDone',
      id,
      errors: [],
      versions: {},
      failed: errorText(error),
    }));
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
    this.loading = true;
    let resolveReady = (): void => undefined;
    let failStart = (_error: Error): void => undefined;
    const ready = new Promise<void>((resolve, reject) => {
      resolveReady = resolve;
      failStart = reject;
    });
    // A failed start is reported to start()/run() callers; with none waiting it must not be an unhandled rejection.
    ready.catch(() => undefined);
    // Only the current host is heard: a replaced one may still have frames in flight.
    const launched = launchHost(this.shared(), this.options, {
      message: (message) => {
        if (this.current === host) this.onHostFrame(host, message, resolveReady, failStart);
      },
      malformed: (reason) => {
        if (this.current === host) this.stop(host, reason);
      },
      gone: (reason) => this.detach(host, reason),
      runUnderWay: () => this.current === host && this.pending?.sent === true,
    });
    const host: Host = Object.assign(launched, { killedByUs: false, ready, failStart });
    this.backendLog.info(
      `Pyodide host process ${host.child.pid} started for session ${this.options.session} (sandbox: ${launched.mechanism})`,
    );
    return host;
  }

  private onHostFrame(
    host: Host,
    message: FromHost,
    resolveReady: () => void,
    failStart: (error: Error) => void,
  ): void {
    // Before 'ready' no user code has run in this process, so what it says of its start is believed; after it,
    // anything of the start again is code pretending.
    if (message.type === 'ready' || message.type === 'fatal') {
      if (host.info) return this.stopMisbehaving(host, `a '${message.type}' message after the instance was ready`);
      if (message.type === 'ready') this.onReady(host, message, resolveReady);
      else {
        this.discardSnapshotOfFailedStart(host, `it said: ${quoted(message.message)}`);
        failStart(new Error(`Pyodide could not start: ${message.message}`));
      }
      return;
    }
    if (!host.info && message.type !== 'log')
      return this.stopMisbehaving(host, `a '${message.type}' message before the instance was ready`);
    this.onHostMessage(host, message);
  }

  private onReady(host: Host, message: FromHost & { type: 'ready' }, resolveReady: () => void): void {
    const { type: _type, ...info } = message;
    // The snapshot and the code cache were written before any user code ran; taken now, before the first run is sent.
    const made = host.outbox !== undefined && this.shared().snapshots.adopt(host.outbox, !host.snapshot);
    if (info.snapshotRejected && host.snapshot && host.snapshotOrigin)
      this.shared().snapshots.reject(host.snapshot, host.snapshotOrigin, info.snapshotRejected);
    if (info.codeCacheRejected && host.codeCache)
      this.shared().snapshots.rejectCodeCache(host.codeCache, info.codeCacheRejected);
    if (info.codeCache === 'unsupported') this.shared().snapshots.runtimeTakesNoCodeCache();
    host.outbox = undefined;
    host.info = this.lastInfo = info;
    this.loading = false;
    host.sandbox.rest(this.pending !== undefined || this.packageRequests.size > 0);
    const source = info.fromSnapshot
      ? `from the ${host.snapshotOrigin === 'shipped' ? 'shipped' : 'cached'} snapshot`
      : made
        ? 'cold (snapshot created)'
        : 'cold';
    const compiled = info.codeCache === 'used' ? ", its script's code from V8's cache" : '';
    this.options.log.info(
      `Pyodide ${info.pyodideVersion} (Python ${info.pythonVersion}) ready in ${info.loadMs} ms, ${source}${compiled}; pid ${host.child.pid}`,
    );
    resolveReady();
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

  /**
   * The host broke the protocol (a forged, corrupt or out-of-place message): it is ended, and the run under way
   * fails, or the next run is told. `reason` is the server's own words; what the host said is only ever quoted.
   */
  private stopMisbehaving(host: Host, what: string): void {
    this.stop(host, `the Pyodide process sent ${what}`);
  }

  private stop(host: Host, reason: string): void {
    this.options.log.error(`${reason}; stopping the Pyodide process ${host.child.pid}`);
    this.end(host, `${reason}; the Pyodide process was stopped`);
  }

  /** Ends `host` for a reason nobody has been told of: its loss is announced as any crash is. */
  private end(host: Host, reason: string): void {
    this.detach(host, reason);
    host.child.kill('SIGKILL');
  }

  /** Whether `runId` names the run under way on `host`, its run message sent. */
  private isCurrentRun(pending: PendingRun | undefined, runId: string): pending is PendingRun {
    return pending !== undefined && pending.sent && pending.runId === runId;
  }

  private onHostMessage(host: Host, message: FromHost): void {
    const pending = this.pending;
    switch (message.type) {
      case 'output':
      case 'display':
      case 'result':
        if (!this.isCurrentRun(pending, message.runId))
          return this.stopMisbehaving(
            host,
            `a '${message.type}' message for run ${quoted(message.runId)}, ${this.runUnderWay()}`,
          );
        if (message.type === 'output') this.deliver(pending, message);
        else if (message.type === 'display') this.show(pending, message.display);
        else this.finish(host, pending, message.output, message.outcome);
        return;
      case 'lost':
        // The host's words are its own; the loss is what this server saw: it ends the process and says so.
        this.end(host, `the Pyodide instance was lost between runs (its host said: ${quoted(message.reason)})`);
        return;
      case 'hostCall':
        if (!this.isCurrentRun(pending, message.runId))
          return this.stopMisbehaving(host, `a host call for run ${quoted(message.runId)}, ${this.runUnderWay()}`);
        // Python waits for each call's answer; only an interrupt lets it make another before that.
        if (pending.callsInFlight > 0 && !pending.interrupted)
          return this.stopMisbehaving(host, 'a second host call while the first one was still waiting');
        pending.callsInFlight++;
        host.sandbox.freeze(); // Python waits for the answer, and a question stops the run's clock: so does the sandbox.
        void this.answerHostCall(host, message.id, message.method, message.params).finally(
          () => pending.callsInFlight--,
        );
        return;
      case 'packagesDone':
        if (!this.packageRequests.resolve(message.id, message))
          this.stopMisbehaving(host, `a package report for request ${message.id}, which is not waiting`);
        else host.sandbox.rest(this.pending !== undefined || this.packageRequests.size > 0);
        return;
      case 'log':
        this.options.log[message.level](`[pyodide] ${message.message.slice(0, MAX_LOG_CHARS)}`);
    }
  }

  private runUnderWay(): string {
    return this.pending?.sent ? `while run ${this.pending.runId} is under way` : 'while no run is under way';
  }

  private show(pending: PendingRun, display: Display): void {
    try {
      pending.sink.display(display);
    } catch (error) {
      this.options.log.error(`display sink failed: ${errorText(error)}`);
    }
  }

  /**
   * The run's end. An outcome that says the instance is gone (crashed, or reset after a MemoryError) ends the
   * process too: a fresh instance only ever comes with a fresh process, which this server starts itself.
   */
  private finish(host: Host, pending: PendingRun, output: OutputChunk[], outcome: BackendOutcome): void {
    for (const chunk of output) this.deliver(pending, chunk);
    const lost = outcome.status === 'crashed' || ('sessionReset' in outcome && outcome.sessionReset === true);
    this.settle(pending, outcome);
    if (lost) void this.kill(host, 'the run that lost the instance said so');
    else host.sandbox.rest(this.packageRequests.size > 0);
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
    host.sandbox.thaw();
    try {
      host.toHost.write(encodeFrame(reply));
    } catch (error) {
      // Not JSON (a BigInt, a cycle) or too large: Python gets an error instead.
      this.send(host, {
        type: 'hostCallReply',
        id,
        ok: false,
        error: `host call result cannot be sent to Python: ${errorText(error)}`,
      });
    }
  }

  private send(host: Host, message: ToHost): void {
    // A send racing the process's death is harmless: its exit handler settles whatever was pending.
    host.sandbox.thaw();
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
