// One session of the Jupyter backend: its kernel, started on first use and replaced when it is lost, the run in
// flight on it (kernelRun.ts: what the kernel sends and asks while it runs) and pip where the kernel runs.
import { randomBytes } from 'node:crypto';
import { errorText } from '../../errorText';
import { settingNote } from '../../config';
import type { PackageSpec, RequirementSpec } from '../../packages/spec';
import type { BackendInfo, BackendState, InstallOptions, Logger, PackageReport } from '../../types';
import type {
  BackendOutcome,
  BackendRunRequest,
  BackendSession,
  BackendSessionOptions,
  BackendSink,
} from '../contract';
import { publishedValue, SUPPORT_CELL_MESSAGES } from './kernelMessages';
import { KernelPackages } from './kernelPackages';
import { KernelRun, type KernelRunEnd } from './kernelRun';
import type { JupyterEndpoint, KernelCheck, KernelHandle, KernelStatus } from './kernelTypes';
import { StartGate } from '../../startGate';
import { StateLoss } from '../stateLoss';
import { kernelClient } from './loadClient';
import { setupCell } from './supportCells';

export class JupyterSession implements BackendSession {
  readonly kind = 'jupyter' as const;
  private kernel?: KernelHandle;
  private starting?: Promise<KernelHandle>;
  /** A restart asked for by restart(), until the kernel is back. */
  private restarting?: Promise<void>;
  private needsSetup = true;
  private active?: KernelRun;
  private readonly kernelStart = new StartGate();
  private readonly stateLoss = new StateLoss();
  private pythonVersion?: string;
  /** The kernel's process as it reports itself (on the server's machine). */
  private kernelProcess?: { pid?: number; executable?: string };
  private server?: string;
  /** Said with the next run's output: why the kernel does not run in the workspace folder (once a session). */
  private pendingNote?: string;
  private noted = false;
  /** A question to the server about the kernel, under way (the WebSocket dropped, or an interrupt failed). */
  private checking?: Promise<void>;
  private disposed = false;
  private broken = false;
  /** Prompts on the stdin channel that start with it are host calls of this session's kernel_support.py. */
  private readonly packages = new KernelPackages(
    () => this.ensureKernel(),
    () => this.options.settingNames?.jupyterKernel,
  );
  private readonly marker = `\u0000code-mode-host-call:${randomBytes(12).toString('hex')}:`;

  constructor(
    private readonly options: BackendSessionOptions,
    private readonly log: Logger,
    private readonly endpoint: () => Promise<JupyterEndpoint>,
    private readonly kernelName: string | undefined,
    private readonly local: boolean,
    private readonly onDispose: () => void,
  ) {}

  get state(): BackendState {
    if (this.disposed) return 'dead';
    if (this.starting || this.restarting) return 'loading';
    if (!this.kernel) return this.broken ? 'dead' : 'not-loaded';
    return this.active ? 'busy' : 'ready';
  }

  async start(): Promise<void> {
    await this.ensureKernel();
  }

  private async ensureKernel(): Promise<KernelHandle> {
    if (this.restarting) await this.restarting;
    if (this.disposed) throw new Error(`the Jupyter session "${this.options.session}" was disposed`);
    let kernel = this.kernel;
    // A connection that is not up may lead to a kernel that is gone (a hub stopped or restarted the server): a
    // run sent on it would wait for the client's reconnects. Asked now, a lost kernel is replaced before the run.
    if (kernel && !kernel.connected) {
      await this.checkKernel(kernel);
      kernel = this.kernel;
    }
    if (!kernel) {
      this.starting ??= this.startKernel().finally(() => (this.starting = undefined));
      kernel = await this.starting;
    }
    if (this.needsSetup) {
      const reply = await kernel.execute(
        setupCell(this.marker, this.options.workspaceRoots?.[0], this.options.scratchDir),
        SUPPORT_CELL_MESSAGES,
      );
      if (reply.status !== 'ok')
        throw new Error(`the kernel could not load the code-mode support: ${reply.ename}: ${reply.evalue}`);
      const loaded = publishedValue(reply) as { pid?: number; executable?: string; note?: string } | undefined;
      this.kernelProcess = {
        pid: typeof loaded?.pid === 'number' ? loaded.pid : undefined,
        executable: typeof loaded?.executable === 'string' ? loaded.executable : undefined,
      };
      if (typeof loaded?.note === 'string' && !this.noted) {
        this.noted = true;
        this.pendingNote = loaded.note;
        this.log.info(`Jupyter session "${this.options.session}": ${loaded.note}`);
      }
      this.needsSetup = false;
    }
    return kernel;
  }

  private async startKernel(): Promise<KernelHandle> {
    const endpoint = await this.endpoint();
    let kernel: KernelHandle;
    try {
      kernel = await kernelClient().startKernel(endpoint, this.kernelName);
    } catch (error) {
      this.broken = true;
      // A hub answers a POST for a user server that is not running with 405; a GET says what is the matter.
      const notRunning = await kernelClient()
        .notRunningReason(endpoint)
        .catch(() => undefined);
      // A POST without a valid token fails the server's XSRF check before its auth says so.
      const why =
        notRunning !== undefined
          ? `the server is not running${notRunning ? `: ${notRunning}` : ' (JupyterHub redirected to the hub)'}`
          : /_xsrf|\b40[13]\b|Forbidden|Unauthorized/.test(errorText(error))
            ? `the server refused the token (403 Forbidden: ${errorText(error)}); check the token`
            : errorText(error);
      throw new Error(
        `could not start a ${this.kernelName ?? 'default'} kernel on the Jupyter Server at ${endpoint.url}: ${why}`,
      );
    }
    this.broken = false;
    this.server = endpoint.url;
    this.needsSetup = true;
    kernel.onStatus((status) => this.onStatus(kernel, status));
    const language = await kernel.language().catch(() => undefined);
    if (language && language.name.toLowerCase() !== 'python') {
      await kernel.shutdown().catch(() => undefined);
      this.broken = true;
      const spec = this.kernelName ?? 'the default kernel spec';
      throw new Error(
        `${spec} on ${endpoint.url} runs ${language.name}, and this backend runs Python: choose a Python kernel spec${settingNote(this.options.settingNames?.jupyterKernel)}`,
      );
    }
    this.pythonVersion = language?.version;
    this.kernel = kernel;
    this.log.info(`Jupyter session "${this.options.session}": kernel ${kernel.name} ${kernel.id} on ${endpoint.url}`);
    return kernel;
  }

  private onStatus(kernel: KernelHandle, status: KernelStatus): void {
    if (this.kernel !== kernel || this.restarting) return;
    if (status === 'connecting') {
      void this.checkKernel(kernel);
      return;
    }
    if (status === 'disconnected') {
      void this.checkKernel(kernel).then(
        () =>
          this.kernel === kernel && this.kernelLost(`the connection to the Jupyter Server at ${this.server} was lost`),
      );
      return;
    }
    if (status !== 'autorestarting' && status !== 'dead') return;
    if (status === 'dead') {
      this.kernelLost('the kernel died and the Jupyter Server did not restart it');
      return;
    }
    const reason = 'the kernel died and the Jupyter Server restarted it';
    this.needsSetup = true;
    this.log.warn(`Jupyter session "${this.options.session}": ${reason}`);
    if (this.active) this.active.finish({ status: 'crashed', message: reason }, reason);
    else this.stateLoss.remember(`${reason} between runs`);
  }

  /**
   * Asks the server whether it still has `kernel` (its connection dropped, or an interrupt failed): one that is gone
   * is lost at once (a run in flight fails, the next starts a new kernel); one the server cannot be asked about is
   * left to the client's reconnects.
   */
  private checkKernel(kernel: KernelHandle): Promise<void> {
    this.checking ??= kernel
      .check()
      .then((result) => {
        if (result.state === 'unreachable')
          this.log.warn(
            `Jupyter session "${this.options.session}": the Jupyter server at ${this.server} did not answer about the kernel (${result.why})`,
          );
        if (result.state === 'gone' && this.kernel === kernel) this.kernelLost(this.goneReason(result));
      })
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  private goneReason(result: Extract<KernelCheck, { state: 'gone' }>): string {
    if (!result.serverStopped)
      return `the Jupyter server at ${this.server} no longer has the kernel (it was shut down or culled); the kernel and its variables are gone`;
    return `the Jupyter server at ${this.server} stopped; the kernel and its variables are gone${result.detail ? ` (${result.detail})` : ''}`;
  }

  /** The session's local server died: its kernel is gone with it. */
  serverLost(why: string): void {
    if (this.kernel) this.kernelLost(why);
  }

  /** The kernel cannot be reached any more: a run in flight crashes, and the next run starts a new kernel. */
  private kernelLost(reason: string): void {
    const kernel = this.kernel;
    this.kernel = undefined;
    this.needsSetup = true;
    // Best effort: the server may still have the kernel, and should not keep it.
    void kernel?.shutdown().catch(() => undefined);
    this.log.warn(`Jupyter session "${this.options.session}": ${reason}`);
    if (this.active) this.active.finish({ status: 'crashed', message: reason });
    else this.stateLoss.remember(`${reason} between runs`);
  }

  async run(request: BackendRunRequest, sink: BackendSink): Promise<BackendOutcome> {
    if (this.active || this.kernelStart.busy)
      throw new Error(`the Jupyter session "${this.options.session}" is already running code`);
    for (let attempt = 1; ; attempt++) {
      const kernel = await this.kernelStart.pass(() => this.ensureKernel());
      if (!kernel) return { status: 'interrupted' };
      if (this.pendingNote) sink.stderr(`code-mode: ${this.pendingNote}\n`);
      this.pendingNote = undefined;
      const { outcome, lostBeforeStart } = await this.execute(kernel, request, sink);
      // The kernel had died before the code reached it (the server notices a dead kernel only every few
      // seconds): nothing ran, so it runs on the restarted kernel, and the result says the state is gone.
      if (lostBeforeStart && attempt === 1) {
        this.stateLoss.remember(`${lostBeforeStart} between runs`);
        continue;
      }
      return outcome;
    }
  }

  private execute(kernel: KernelHandle, request: BackendRunRequest, sink: BackendSink): Promise<KernelRunEnd> {
    const run = new KernelRun(sink, {
      marker: this.marker,
      hostCall: (method, params) => this.call(method, params),
      supportLost: () => {
        this.needsSetup = true;
      },
      settled: (settledRun) => {
        if (this.active === settledRun) this.active = undefined;
      },
    });
    this.active = run;
    return run.send(kernel, request);
  }

  private call(method: string, params: unknown): Promise<unknown> {
    try {
      return Promise.resolve(this.options.hostCall(method, params));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  interrupt(): void {
    const kernel = this.kernel;
    if (this.active && kernel) {
      kernel.interrupt().catch((error: unknown) => {
        this.log.warn(`Jupyter session "${this.options.session}": interrupt failed: ${errorText(error)}`);
        // A server that no longer has the kernel answers 404 (or a hub's 405): the run fails now, saying why.
        void this.checkKernel(kernel);
      });
    } else {
      this.kernelStart.interrupt();
    }
  }

  async restart(): Promise<void> {
    const run = this.active;
    const kernel = this.kernel;
    if (!kernel) {
      run?.finish({ status: 'crashed', message: 'the kernel was restarted' });
      this.broken = false;
      return;
    }
    // The run ends with what the restart did, once it is known.
    if (run) run.restarting = true;
    this.needsSetup = true;
    this.restarting = kernel.restart().then(
      () => run?.finish({ status: 'crashed', message: 'the kernel was restarted' }, undefined, true),
      async (error: unknown) => {
        // The server lost the kernel (or cannot restart it): the next run starts a new one.
        this.log.warn(
          `Jupyter session "${this.options.session}": restart failed (${errorText(error)}); a new kernel starts on next use`,
        );
        if (this.kernel === kernel) this.kernel = undefined;
        await kernel.shutdown().catch(() => undefined);
        run?.finish(
          {
            status: 'crashed',
            message: `the kernel could not be restarted: ${errorText(error)}`,
            restartFailed: errorText(error),
          },
          undefined,
          true,
        );
      },
    );
    try {
      await this.restarting;
    } finally {
      this.restarting = undefined;
    }
  }

  takeStateLoss(): string | undefined {
    return this.stateLoss.take();
  }

  info(): BackendInfo {
    return {
      kind: 'jupyter',
      state: this.state,
      ...(this.pythonVersion ? { pythonVersion: this.pythonVersion } : {}),
      ...(this.kernel && this.server
        ? {
            executable: this.kernelProcess?.executable ?? `${this.kernel.name} kernel`,
            kernel: { id: this.kernel.id, name: this.kernel.name, server: this.server },
          }
        : {}),
      // A pid means something only where this process can see it.
      ...(this.kernel && this.local && this.kernelProcess?.pid ? { pid: this.kernelProcess.pid } : {}),
    };
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.onDispose();
    this.active?.finish({ status: 'crashed', message: 'the session was closed' });
    const shutdown = (kernel: KernelHandle) =>
      kernel
        .shutdown()
        .catch((error: unknown) =>
          this.log.warn(`Jupyter session "${this.options.session}": kernel shutdown failed: ${errorText(error)}`),
        );
    const kernel = this.kernel;
    this.kernel = undefined;
    if (kernel) await shutdown(kernel);
    // A kernel still starting is shut down once it has; not awaited, since a start that hangs would hang this too.
    else void this.starting?.then(shutdown, () => undefined);
  }

  /** pip runs where the kernel does, with the kernel's interpreter, as `%pip` would (kernelPackages.ts). */
  installPackages(specs: PackageSpec[], options: InstallOptions): Promise<PackageReport> {
    return this.packages.install(specs, options);
  }

  checkPackages(specs: RequirementSpec[]): Promise<PackageReport> {
    return this.packages.check(specs);
  }
}
