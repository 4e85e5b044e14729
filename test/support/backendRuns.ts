// Driving one backend session directly, below the engine, as the backend tests do: the one recording sink a run
// writes to, and a run that hands back its outcome with what the sink received.
import type { BackendSession, BackendSink } from '../../src/engine/backends/contract';

/** The output cap the backend tests give each run (bytes per stream). */
export const CAP = 64 * 1024;

/** The sink every backend test gives a run: records the output as it arrives and can wait for some of it. */
export class RecordingSink implements BackendSink {
  out = '';
  err = '';
  /** Bytes the source said it dropped from the middle of each stream. */
  droppedBytes = { stdout: 0, stderr: 0 };
  private waiters: { stream: 'out' | 'err'; text: string; resolve: () => void }[] = [];

  stdout(text: string): void {
    this.out += text;
    this.check();
  }

  stderr(text: string): void {
    this.err += text;
    this.check();
  }

  dropped(stream: 'stdout' | 'stderr', bytes: number): void {
    this.droppedBytes[stream] += bytes;
  }

  /** Displays are the output-order suite's concern (test/contract/output-order.test.ts), through the engine. */
  display(): void {}

  /** Resolves once `text` has reached the stream, while the run may still be going. */
  waitFor(text: string, stream: 'out' | 'err' = 'out'): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ stream, text, resolve });
      this.check();
    });
  }

  private check(): void {
    this.waiters = this.waiters.filter((w) => {
      if (!this[w.stream].includes(w.text)) return true;
      w.resolve();
      return false;
    });
  }
}

let runCounter = 0;

export async function run(session: BackendSession, code: string, sink = new RecordingSink(), outputCapBytes = CAP) {
  const outcome = await session.run({ runId: `run-${++runCounter}`, code, outputCapBytes }, sink);
  return { outcome, out: sink.out, err: sink.err, dropped: sink.droppedBytes };
}
