// What a kernel's messages mean for a run: its outcome (published by kernel_support.py in the execute_reply, or
// read from the reply's status when the code never reached it) and the displays of display_data / execute_result
// bundles.
import type { Display } from '../../types';
import type { BackendDisplay, BackendOutcome } from '../contract';
import type { ExecuteReply, KernelMessages } from './kernelTypes';

/** The source of the reply payload kernel_support.py publishes a cell's outcome in (its PAYLOAD_SOURCE). */
const PAYLOAD_SOURCE = 'code-mode-outcome';

/** Mime types shown as displays, most preferred first; binary ones arrive base64 as Display wants them. */
const SHOWN_MIMES = ['image/png', 'image/jpeg', 'image/svg+xml', 'text/html'];

// eslint-disable-next-line no-control-regex -- IPython colours its tracebacks with ANSI escapes
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/**
 * For the engine's own support cells (setup, pip, import refresh): what they print is not wanted, their result
 * comes in the reply (publishedValue), and a question on stdin gets an empty answer rather than a wait.
 */
export const SUPPORT_CELL_MESSAGES: KernelMessages = {
  iopub: () => undefined,
  input: (_prompt, _password, answer) => answer(''),
};

/** What kernel_support.py published for the cell `reply` answers, or undefined when it published nothing. */
export function publishedValue(reply: ExecuteReply): unknown {
  const payload: unknown[] = Array.isArray(reply.payload) ? reply.payload : [];
  for (const entry of payload) {
    if (typeof entry === 'object' && entry !== null && (entry as { source?: unknown }).source === PAYLOAD_SOURCE)
      return (entry as { value?: unknown }).value;
  }
  return undefined;
}

/** A kernel's own word for an outcome is checked before it is believed: a remote server is not this process. */
export function outcomeOf(value: unknown): BackendOutcome {
  const outcome = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (outcome.status === 'ok' || outcome.status === 'interrupted') return { status: outcome.status };
  const text = (key: string) => (typeof outcome[key] === 'string' ? (outcome[key] as string) : '');
  if (outcome.status === 'error' && (outcome.errorType === 'SyntaxError' || outcome.errorType === 'RuntimeError')) {
    return {
      status: 'error',
      errorType: outcome.errorType,
      excName: text('excName') || 'Exception',
      message: text('message'),
      traceback: text('traceback'),
    };
  }
  return {
    status: 'crashed',
    message: `the kernel sent an outcome this backend does not understand: ${JSON.stringify(value).slice(0, 200)}`,
  };
}

/** The outcome when the code stopped before kernel_support.py could publish one (an interrupt between statements). */
export function replyOutcome(reply: ExecuteReply): BackendOutcome {
  if (reply.status === 'error') {
    const name = reply.ename ?? 'Exception';
    if (name === 'KeyboardInterrupt') return { status: 'interrupted' };
    const traceback = stripAnsi((reply.traceback ?? []).join('\n'));
    return {
      status: 'error',
      errorType: 'RuntimeError',
      excName: name,
      message: reply.evalue ? `${name}: ${reply.evalue}` : name,
      traceback,
    };
  }
  if (reply.status === 'aborted') return { status: 'interrupted' };
  return { status: 'crashed', message: 'the kernel finished the run without reporting its outcome' };
}

/** A bundle's best display, its plain text when it has nothing else, or undefined when it is empty. */
export function displayOf(
  data: Record<string, unknown>,
): { kind: 'display'; display: Display } | { kind: 'text'; text: string } | undefined {
  for (const mime of SHOWN_MIMES) {
    const value = data[mime];
    if (typeof value !== 'string') continue;
    // Jupyter sends PNG and JPEG as base64 (sometimes wrapped in lines) and SVG as text; displays carry images base64.
    const encoded =
      mime === 'image/svg+xml'
        ? Buffer.from(value).toString('base64')
        : mime.startsWith('image/')
          ? value.replace(/\s+/g, '')
          : value;
    return { kind: 'display', display: { mime, data: encoded } };
  }
  const text = data['text/plain'];
  return typeof text === 'string' ? { kind: 'text', text } : undefined;
}

/**
 * An execute_result bundle (kernel_support.py sends the value of the code's last expression as one, as IPython
 * does) as the engine takes it: its best display with its text/plain beside it, or its text/plain alone.
 */
export function resultOf(data: Record<string, unknown>): BackendDisplay | undefined {
  const shown = displayOf(data);
  const text = typeof data['text/plain'] === 'string' ? data['text/plain'] : undefined;
  if (shown?.kind === 'display') return { ...shown.display, result: true, ...(text !== undefined ? { text } : {}) };
  return text === undefined ? undefined : { mime: 'text/plain', data: text, result: true };
}
