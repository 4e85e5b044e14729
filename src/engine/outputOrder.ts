// The order a run made its output in: printed text and displays interleaved, as a notebook shows them
// ("a", then the table, then "done"), where `stdout`, `stderr` and `displays` of a result hold each kind apart.
// Text is recorded as byte ranges of its stream and cut from the stream's CappedOutput at the end, so the
// stream items of one stream joined are exactly that stream's text in the result, truncation marker included.
import type { CappedOutput } from './output';
import type { OutputItem, StreamName } from './types';

/**
 * Entries recorded per run. Past it, text joins the last entry of its stream: a run alternating stdout and
 * stderr a million times keeps a bounded list, its late text placed a little early.
 */
export const MAX_ORDER_ENTRIES = 10_000;

type Entry =
  { stream: StreamName; start: number; end: number } | { display: number } | { result: string; display?: number };

export class OutputOrder {
  private entries: Entry[] = [];
  private readonly lastOf: Partial<Record<StreamName, { stream: StreamName; start: number; end: number }>> = {};

  /** The stream received its bytes [start, end) (its byte length before and after the text was appended). */
  text(stream: StreamName, start: number, end: number): void {
    if (end <= start) return;
    const last = this.entries[this.entries.length - 1];
    const own = this.lastOf[stream];
    if ((last && 'stream' in last && last.stream === stream) || (own && this.entries.length >= MAX_ORDER_ENTRIES)) {
      own!.end = end;
      return;
    }
    const entry = { stream, start, end };
    this.entries.push(entry);
    this.lastOf[stream] = entry;
  }

  /** The display at `index` of the result's `displays` came next. */
  display(index: number): void {
    this.entries.push({ display: index });
  }

  /** The value of the code's last expression came next: its text, and its display at `index` when it has one. */
  result(text: string, index?: number): void {
    this.entries.push(index === undefined ? { result: text } : { result: text, display: index });
  }

  /** The run's output in order, its text taken from what `streams` kept. */
  items(streams: Record<StreamName, CappedOutput>): OutputItem[] {
    const kept = { stdout: streams.stdout.kept(), stderr: streams.stderr.kept() };
    const bytes = {
      stdout: Buffer.from(kept.stdout.head + kept.stdout.tail),
      stderr: Buffer.from(kept.stderr.head + kept.stderr.tail),
    };
    const markerShown: Record<StreamName, boolean> = { stdout: false, stderr: false };
    const items: OutputItem[] = [];
    for (const entry of this.entries) {
      if ('result' in entry) {
        items.push(
          entry.display === undefined
            ? { type: 'execute_result', text: entry.result }
            : { type: 'execute_result', text: entry.result, index: entry.display },
        );
        continue;
      }
      if ('display' in entry) {
        items.push({ type: 'display', index: entry.display });
        continue;
      }
      const { stream, start, end } = entry;
      const { headBytes, tailStart, marker } = kept[stream];
      let text = '';
      if (start < headBytes) text += bytes[stream].subarray(start, Math.min(end, headBytes)).toString();
      if (marker && !markerShown[stream] && end > headBytes) {
        text += marker;
        markerShown[stream] = true;
      }
      // The kept tail follows the head in `bytes`: stream offset tailStart is byte headBytes there.
      if (end > tailStart)
        text += bytes[stream]
          .subarray(headBytes + Math.max(start, tailStart) - tailStart, headBytes + end - tailStart)
          .toString();
      const previous = items[items.length - 1];
      if (!text) continue;
      if (previous?.type === 'stream' && previous.name === stream) previous.text += text;
      else items.push({ type: 'stream', name: stream, text });
    }
    // Dropped by a source before any text of the stream followed (the driver sends its tail last): said at the end.
    for (const stream of ['stdout', 'stderr'] as const) {
      if (kept[stream].marker && !markerShown[stream])
        items.push({ type: 'stream', name: stream, text: kept[stream].marker });
    }
    return items;
  }
}
