// The SDK opens every SSE response to a POST with a priming event: an id to resume from, and an empty data line.
// VS Code hands the data of every event on such a stream to JSON.parse, so each priming event logs
// "Failed to parse message: """ in the server's output channel. An event with an id and no data line sets the
// client's last event id all the same (the SSE rules dispatch no event without data, and keep its id), so for
// VS Code the priming event goes out without its data line. SDK clients track ids only of events they are given,
// so this is for VS Code's endpoint only.
import type * as http from 'node:http';

const PRIMING_EVENT = /^(id: [^\n]*\n(?:retry: \d+\n)?)data: \n\n$/;

/** Rewrites priming events that `res` writes (each one whole chunk, as the SDK enqueues it) into id-only events. */
export function idOnlyPrimingEvents(res: http.ServerResponse): void {
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (chunk instanceof Uint8Array && chunk.length < 256) {
      const priming = PRIMING_EVENT.exec(Buffer.from(chunk).toString('utf8'));
      if (priming) return write(Buffer.from(`${priming[1]}\n`), ...rest);
    }
    return write(chunk, ...rest);
  }) as typeof res.write;
}
