import * as vscode from 'vscode';
import { tracebackFrames } from '../engine/tracebackFrames';
import type { RunEvent } from '../engine/types';

const TRANSCRIPT_CHARS = 256 * 1024;

/**
 * Streams every run (the person's and the agent's) into one output channel, line by line as it is
 * produced, with a header and a footer per run. Partial lines are held until their newline or the run ends.
 */
export class RunOutputWriter implements vscode.Disposable {
  private readonly pending = new Map<string, string>();
  private readonly channel: Pick<vscode.OutputChannel, 'append' | 'appendLine'>;
  /** The tail of what was written, because VS Code offers no API to read a channel back. */
  private recent = '';

  constructor(channel: vscode.OutputChannel) {
    const keep = (text: string) => {
      this.recent = (this.recent + text).slice(-TRANSCRIPT_CHARS);
    };
    this.channel = {
      append: (text) => {
        channel.append(text);
        keep(text);
      },
      appendLine: (text) => {
        channel.appendLine(text);
        keep(`${text}\n`);
      },
    };
  }

  /** The last characters written to the channel (the integration tests read the channel back this way). */
  transcript(): string {
    return this.recent;
  }

  handle(event: RunEvent): void {
    switch (event.type) {
      case 'started': {
        const time = new Date(event.startedAt).toLocaleTimeString();
        this.channel.appendLine(`── run ${event.runId} · ${event.backend} · session "${event.session}" · ${event.origin} · ${time} ──`);
        break;
      }
      case 'stdout':
      case 'stderr':
        this.write(event.runId, event.text);
        break;
      case 'display':
        this.write(event.runId, `[display ${event.display.mime}${event.display.title ? `: ${event.display.title}` : ''}]\n`);
        break;
      case 'finished': {
        const rest = this.pending.get(event.runId);
        this.pending.delete(event.runId);
        if (rest) this.channel.appendLine(rest);
        const { result } = event;
        const d = result.diagnostics;
        if (d) {
          this.channel.appendLine(`[${d.error_type}] ${d.message}`);
          if (d.traceback && d.traceback.trim() !== d.message) this.channel.append(d.traceback.endsWith('\n') ? d.traceback : `${d.traceback}\n`);
          // The output view turns path:line into a link that opens the file there; Python's own format it does not.
          const failing = d.traceback ? tracebackFrames(d.traceback).pop() : undefined;
          if (failing) this.channel.appendLine(`at ${failing.file}:${failing.line}`);
        }
        const status = result.success ? 'ok' : `failed (${d?.exception ?? d?.error_type})`;
        this.channel.appendLine(`── ${status} in ${result.duration_ms} ms${result.truncated ? ' · output truncated' : ''} ──\n`);
        break;
      }
    }
  }

  private write(runId: string, text: string): void {
    const buffered = (this.pending.get(runId) ?? '') + text;
    const lastNewline = buffered.lastIndexOf('\n');
    if (lastNewline < 0) {
      this.pending.set(runId, buffered);
      return;
    }
    this.channel.append(buffered.slice(0, lastNewline + 1));
    this.pending.set(runId, buffered.slice(lastNewline + 1));
  }

  dispose(): void {
    this.pending.clear();
  }
}
