import * as vscode from 'vscode';
import { describeToolCall, finalText, tracebackFrames, type RunEvent } from '../../engine/index';
import { backendLabel, failureLabel, originLabel } from '../../webview/labels';

const TRANSCRIPT_CHARS = 256 * 1024;
/** Where a capped stream's head ends and its tail begins in a result (the engine's CappedOutput.text()). */
const CUT_MARKER = /\n… \[(\d+) bytes of output truncated\] …\n/;

/**
 * Streams every run (the person's and the agent's) into one output channel, line by line as it is
 * produced, with a header and a footer per run. Partial lines are held until their newline or the run ends, and
 * each is written as a terminal finally shows it (a progress bar once, in its last state; no colour codes, which
 * an output channel would show raw).
 */
export class RunOutputWriter implements vscode.Disposable {
  private readonly pending = new Map<string, string>();
  private readonly channel: Pick<vscode.OutputChannel, 'append' | 'appendLine'>;
  /** The tail of what was written, because VS Code offers no API to read a channel back. */
  private recent = '';
  /** How often the channel was brought into view, because VS Code offers no API to ask whether it is. */
  private revealCount = 0;

  /** `keepTranscript`: remember the tail of what was written (extension tests read it back; nothing else does). */
  constructor(
    private readonly target: vscode.OutputChannel,
    keepTranscript: boolean,
  ) {
    const keep = (text: string) => {
      this.recent = (this.recent + text).slice(-TRANSCRIPT_CHARS);
    };
    this.channel = !keepTranscript
      ? target
      : {
          append: (text) => {
            target.append(text);
            keep(text);
          },
          appendLine: (text) => {
            target.appendLine(text);
            keep(`${text}\n`);
          },
        };
  }

  /** Brings the channel into view; `preserveFocus` leaves the focus where it is. */
  reveal(preserveFocus = false): void {
    this.revealCount++;
    this.target.show(preserveFocus);
  }

  get reveals(): number {
    return this.revealCount;
  }

  /** The last characters written to the channel, when kept (the integration tests read the channel back this way). */
  transcript(): string {
    return this.recent;
  }

  handle(event: RunEvent): void {
    switch (event.type) {
      case 'started': {
        const time = new Date(event.startedAt).toLocaleTimeString();
        this.channel.appendLine(
          `── run ${event.runId} · ${backendLabel(event.backend)} · session "${event.session}" · ${originLabel(event)} · ${time} ──`,
        );
        break;
      }
      case 'stdout':
      case 'stderr':
        this.write(event.runId, event.text);
        break;
      case 'display':
        this.write(
          event.runId,
          `[display ${event.display.mime}${event.display.title ? `: ${event.display.title}` : ''}]\n`,
        );
        break;
      case 'finished': {
        const rest = this.pending.get(event.runId);
        this.pending.delete(event.runId);
        if (rest) this.channel.appendLine(finalText(rest));
        const { result } = event;
        this.writeTail('stdout', result.stdout);
        this.writeTail('stderr', result.stderr);
        // The value of the code's last expression, as the REPL shows it (its rich form, if any, is in the results).
        for (const item of result.outputs ?? []) if (item.type === 'execute_result') this.channel.appendLine(item.text);
        const d = result.diagnostics;
        if (d) {
          // A traceback ends with the message ("ZeroDivisionError: division by zero"): it is printed once, there.
          const traceback = d.traceback?.trim()
            ? d.traceback.endsWith('\n')
              ? d.traceback
              : `${d.traceback}\n`
            : undefined;
          if (!traceback?.trimEnd().endsWith(d.message.trim()))
            this.channel.appendLine(`[${d.error_type}] ${d.message}`);
          if (traceback) this.channel.append(traceback);
          // The output view turns path:line into a link that opens the file there; Python's own format it does not.
          const failing = d.traceback ? tracebackFrames(d.traceback).pop() : undefined;
          if (failing) this.channel.appendLine(`at ${failing.file}:${failing.line}`);
        }
        // The audit: every tool the code called, without its arguments.
        for (const call of result.tool_calls ?? []) this.channel.appendLine(`[tool] ${describeToolCall(call)}`);
        const status = result.success
          ? 'ok'
          : d?.error_type === 'INVALID_ARGUMENT'
            ? 'Not run'
            : `failed (${failureLabel(d)})`;
        this.channel.appendLine(
          `── ${status} in ${result.duration_ms} ms${result.truncated ? ' · output truncated' : ''} ──\n`,
        );
        break;
      }
    }
  }

  /**
   * Only the head of a capped stream was streamed live; the result holds its tail too, which is where the
   * answer usually is. It goes after the head, with a line saying how much is left out between them.
   */
  private writeTail(stream: 'stdout' | 'stderr', text: string): void {
    const cut = CUT_MARKER.exec(text);
    if (!cut) return;
    const tail = text.slice(cut.index + cut[0].length);
    const leftOut = Math.max(1, Math.round(Number(cut[1]) / 1024));
    this.channel.appendLine(
      `… ${leftOut} KB of ${stream} left out; the first and the last part are kept (setting codeMode.outputCapKB) …`,
    );
    const shown = finalText(tail);
    if (shown) this.channel.append(shown.endsWith('\n') ? shown : `${shown}\n`);
  }

  private write(runId: string, text: string): void {
    const buffered = (this.pending.get(runId) ?? '') + text;
    const lastNewline = buffered.lastIndexOf('\n');
    if (lastNewline < 0) {
      this.pending.set(runId, buffered);
      return;
    }
    this.channel.append(finalText(buffered.slice(0, lastNewline + 1)));
    this.pending.set(runId, buffered.slice(lastNewline + 1));
  }

  dispose(): void {
    this.pending.clear();
  }
}
