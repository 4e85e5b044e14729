// One run on a Jupyter kernel: the run cell sent, its IOPub messages handed to the sink (output and displays),
// its questions on the stdin channel answered (input prompts and host calls), and its one outcome, however the
// run ends: the reply, a lost kernel, a restart or the session closing.
import { errorText } from '../../errorText';
import type { BackendOutcome, BackendRunRequest, BackendSink } from '../contract';
import { answerKernelInput, type CallsById } from './kernelInput';
import { displayOf, outcomeOf, publishedValue, replyOutcome, resultOf } from './kernelMessages';
import type { KernelHandle } from './kernelTypes';
import { supportCell } from './supportCells';

/** How a run ended; `lostBeforeStart`: the kernel was lost before the code reached it (nothing ran), and why. */
export interface KernelRunEnd {
  outcome: BackendOutcome;
  lostBeforeStart?: string;
}

/** What a run needs from its session. */
export interface KernelRunSession {
  /** Prompts on the stdin channel that start with it are host calls of the session's kernel_support.py. */
  marker: string;
  hostCall(method: string, params: unknown): Promise<unknown>;
  /** The kernel no longer has kernel_support.py (it was restarted under the session): set it up again. */
  supportLost(): void;
  /** The run has its outcome; called once, before the outcome is handed on. */
  settled(run: KernelRun): void;
}

export class KernelRun {
  private settled = false;
  /** The kernel began executing it (an IOPub message of it arrived). */
  private started = false;
  /** How many questions the kernel has asked on stdin: only the latest is waiting (see onInput). */
  private questions = 0;
  /** Its host calls by id: a call asked again is answered from the same call (kernelInput.ts). */
  private readonly calls: CallsById = new Map();
  /** restart() decides its outcome: what the connection says meanwhile (the execution rejects) is not it. */
  restarting = false;
  private resolveEnd!: (end: KernelRunEnd) => void;
  private readonly end = new Promise<KernelRunEnd>((resolve) => (this.resolveEnd = resolve));

  constructor(
    private readonly sink: BackendSink,
    private readonly session: KernelRunSession,
  ) {}

  /** `lost`: the kernel died under it, and why; `byRestart`: restart()'s own word. */
  finish(outcome: BackendOutcome, lost?: string, byRestart?: boolean): void {
    if (this.settled || (this.restarting && !byRestart)) return;
    this.settled = true;
    this.session.settled(this);
    this.resolveEnd({ outcome, ...(lost && !this.started ? { lostBeforeStart: lost } : {}) });
  }

  /** Sends the run cell to `kernel`; settles with what came of it. */
  send(kernel: KernelHandle, request: BackendRunRequest): Promise<KernelRunEnd> {
    kernel
      .execute(
        supportCell('run', {
          code: request.code,
          script: request.script ?? null,
          echoLastExpression: request.echoLastExpression !== false,
        }),
        {
          iopub: (type, content) => this.onIOPub(type, content),
          input: (prompt, password, reply) => this.onInput(prompt, password, reply),
        },
      )
      .then(
        (reply) => {
          const published = publishedValue(reply);
          if (
            published === undefined &&
            reply.status === 'error' &&
            reply.ename === 'ModuleNotFoundError' &&
            /_code_mode_kernel/.test(reply.evalue ?? '')
          ) {
            // A kernel without kernel_support.py was restarted under this session (by the server as the run
            // was sent, or from another client): the code never ran.
            this.session.supportLost();
            this.started = false;
            this.finish(
              { status: 'crashed', message: 'the kernel was restarted' },
              'the kernel was restarted and lost its state',
            );
            return;
          }
          this.finish(published !== undefined ? outcomeOf(published) : replyOutcome(reply));
        },
        (error: unknown) =>
          this.finish({ status: 'crashed', message: `the connection to the kernel failed: ${errorText(error)}` }),
      );
    return this.end;
  }

  private onIOPub(type: string, content: Record<string, unknown>): void {
    if (this.settled) return;
    this.started = true;
    if (type === 'stream') {
      const text = typeof content.text === 'string' ? content.text : '';
      if (content.name === 'stderr') this.sink.stderr(text);
      else this.sink.stdout(text);
      return;
    }
    if (type !== 'display_data' && type !== 'execute_result' && type !== 'update_display_data') return;
    const data = (content.data ?? {}) as Record<string, unknown>;
    if (type === 'execute_result') {
      const result = resultOf(data);
      if (result) this.sink.display(result);
      return;
    }
    const shown = displayOf(data);
    if (shown?.kind === 'display') this.sink.display(shown.display);
    else if (shown?.kind === 'text') this.sink.stdout(shown.text.endsWith('\n') ? shown.text : `${shown.text}\n`);
  }

  /**
   * A kernel waits on one question at a time: a new one means the one before was abandoned (an interrupt), and
   * its late answer is dropped, never sent for the new one (ipykernel drops a stale reply it already has).
   */
  private onInput(prompt: string, password: boolean, reply: (value: string) => void): void {
    if (this.settled) return;
    const question = ++this.questions;
    answerKernelInput(
      this.session.marker,
      prompt,
      password,
      (method, params) => this.session.hostCall(method, params),
      this.calls,
      (value) => {
        if (!this.settled && this.questions === question) reply(value);
      },
    );
  }
}
