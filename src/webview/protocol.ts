// Messages between the extension host and the results webview page. Types only, plus the validator the host
// runs on everything the page sends: the page renders untrusted output, so the host treats it as untrusted too.
import type { Display, DroppedDisplays, RunEvent, RunInfo, RunRecord, RunResult } from '../engine/browser';

export type { RunInfo } from '../engine/browser';

/**
 * One run as the page shows it: a record of the history as the host sends it. The page may drop its displays too
 * (to bound its memory), saying so in `displaysDropped`.
 */
export type RunCard = RunRecord;

/** "3 displays (12.0 MB) of this run are no longer shown: <why>. Re-run to see them again." */
export function droppedText(dropped: DroppedDisplays): string {
  const one = dropped.count === 1;
  const size = dropped.bytes ? ` (${(dropped.bytes / 1e6).toFixed(1)} MB)` : '';
  return `${one ? '1 display' : `${dropped.count} displays`}${size} of this run ${one ? 'is' : 'are'} no longer shown: ${dropped.reason}. Re-run to see ${one ? 'it' : 'them'} again.`;
}

/** A tool the person can invoke from a form generated from its input schema. */
export interface ToolFormSpec {
  /** The external MCP server that owns the tool; absent for the extension's own tools. */
  server?: string;
  name: string;
  description: string;
  /** A JSON schema of `type: "object"`; the page reads it defensively. */
  inputSchema: Record<string, unknown>;
}

export type HostToPageMessage =
  /** A run waiting behind other work on its session (`run.waitingFor` says what): a queued card with Cancel. */
  | { type: 'runQueued'; run: RunInfo }
  | { type: 'runStarted'; run: RunInfo }
  | { type: 'runOutput'; runId: string; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'runDisplay'; runId: string; display: Display }
  /** The result is authoritative: its stdout/stderr (capped head and tail) replace what streamed. */
  | { type: 'runFinished'; runId: string; result: RunResult }
  /** Replaces every card; oldest run first. Sent in answer to `ready`, so a reloaded page catches up. */
  | { type: 'history'; runs: RunCard[] }
  /** Scrolls to a card and highlights it. */
  | { type: 'reveal'; runId: string }
  /** A page asked to interrupt the run: every page's card says "Interrupting…" until it finishes. */
  | { type: 'interrupting'; runId: string }
  | { type: 'toolForm'; tool: ToolFormSpec }
  /** `content` is a string, MCP content blocks (`{type:'text',text}` / `{type:'image',data,mimeType}`), or any JSON value. */
  | { type: 'toolResult'; requestId: string; ok: boolean; content: unknown }
  | { type: 'clear' }
  /** Asks what the page shows (the integration tests read the rendered cards through it). */
  | { type: 'probe'; requestId: string };

/** One rendered card as the person sees it. */
export interface ProbedCard {
  runId: string;
  status: string;
  text: string;
}

export type PageToHostMessage =
  | { type: 'ready' }
  | { type: 'invokeTool'; requestId: string; server?: string; name: string; args: Record<string, unknown> }
  | { type: 'rerun'; runId: string }
  | { type: 'interrupt'; runId: string }
  | { type: 'clear' }
  | { type: 'probeResult'; requestId: string; cards: ProbedCard[] }
  /** A traceback's link: open the file at the line. */
  | { type: 'openLocation'; file: string; line: number }
  /** A figure's Save: the host asks where and writes it (`data` as the display carries it: base64, or SVG markup). */
  | { type: 'saveImage'; mime: SavableImageMime; data: string; title?: string };

/** The image types a figure's Save writes, and the file extension of each. */
export const SAVABLE_IMAGES = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
} as const;
export type SavableImageMime = keyof typeof SAVABLE_IMAGES;
/** A display's data is at most 5 MB (runLimits.ts); as base64 a third more. */
const MAX_SAVED_IMAGE_CHARS = 8 * 1024 * 1024;

/** Ids and names the page sends back are ones the host gave it; anything longer is not one of them. */
const MAX_ID_LENGTH = 256;

function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Checks a message from the page and returns a copy holding only the known fields, or undefined when it is
 * not a well-formed page message. The host acts only on what this returns.
 */
export function parsePageMessage(value: unknown): PageToHostMessage | undefined {
  if (!isPlainObject(value)) return undefined;
  switch (value.type) {
    case 'ready':
    case 'clear':
      return { type: value.type };
    case 'rerun':
    case 'interrupt':
      return isId(value.runId) ? { type: value.type, runId: value.runId } : undefined;
    case 'probeResult': {
      const { requestId, cards } = value;
      if (!isId(requestId) || !Array.isArray(cards)) return undefined;
      const parsed = cards
        .filter(
          (c): c is Record<string, unknown> =>
            isPlainObject(c) && isId(c.runId) && typeof c.status === 'string' && typeof c.text === 'string',
        )
        .map((c) => ({ runId: c.runId as string, status: c.status as string, text: c.text as string }));
      return { type: 'probeResult', requestId, cards: parsed };
    }
    case 'openLocation': {
      const { file, line } = value;
      // Only an absolute path and a line number: the host also checks that it is an existing file.
      if (typeof file !== 'string' || file.length > 4096 || !/^(\/|[A-Za-z]:[\\/])/.test(file)) return undefined;
      if (typeof line !== 'number' || !Number.isInteger(line) || line < 1) return undefined;
      return { type: 'openLocation', file, line };
    }
    case 'saveImage': {
      const { mime, data, title } = value;
      if (typeof mime !== 'string' || !Object.hasOwn(SAVABLE_IMAGES, mime)) return undefined;
      if (typeof data !== 'string' || data.length === 0 || data.length > MAX_SAVED_IMAGE_CHARS) return undefined;
      if (title !== undefined && (typeof title !== 'string' || title.length > 1000)) return undefined;
      return { type: 'saveImage', mime: mime as SavableImageMime, data, ...(title ? { title } : {}) };
    }
    case 'invokeTool': {
      const { requestId, server, name, args } = value;
      if (!isId(requestId) || !isId(name) || !isPlainObject(args)) return undefined;
      if (server !== undefined && !isId(server)) return undefined;
      return server === undefined
        ? { type: 'invokeTool', requestId, name, args }
        : { type: 'invokeTool', requestId, server, name, args };
    }
    default:
      return undefined;
  }
}

/** The page message for an engine run event, so the host forwards events without re-deriving the shapes. */
export function messageForRunEvent(event: RunEvent): HostToPageMessage {
  switch (event.type) {
    case 'queued': {
      const { runId, session, backend, code, origin, startedAt, waitingFor } = event;
      return { type: 'runQueued', run: { runId, session, backend, code, origin, startedAt, waitingFor } };
    }
    case 'started': {
      const { runId, session, backend, code, origin, startedAt, tool } = event;
      return {
        type: 'runStarted',
        run: { runId, session, backend, code, origin, startedAt, ...(tool ? { tool } : {}) },
      };
    }
    case 'stdout':
    case 'stderr':
      return { type: 'runOutput', runId: event.runId, stream: event.type, text: event.text };
    case 'display':
      return { type: 'runDisplay', runId: event.runId, display: event.display };
    case 'finished':
      return { type: 'runFinished', runId: event.runId, result: event.result };
  }
}
