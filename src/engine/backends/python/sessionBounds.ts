import type { Logger } from '../../types';
import { processContainment, type ContainmentChoice, type ProcessContainment } from './containment';

/** How often the reaper adds up a session's memory (MEMORY_CHECK_S in processes.py). */
const MEMORY_CHECK_S = 0.1;

/**
 * What bounds the sessions of one backend: how their processes are held together (probed on first use) and
 * their memory, as the last interpreter to start reported it. `environment` shows it as `backends.python.bounds`.
 */
export class SessionBounds {
  private held?: ProcessContainment;
  /** How the last interpreter to start applied the memory limit, in its own words. */
  private memoryApplied?: string;
  private told = false;

  constructor(
    private readonly choice: ContainmentChoice,
    readonly memoryLimitMb: number,
  ) {}

  get containment(): ProcessContainment {
    this.held ??= processContainment(this.choice);
    return this.held;
  }

  /** Says once, in the log, what holds the sessions' processes, and loudly what does not. */
  tell(log: Logger): void {
    if (this.told) return;
    this.told = true;
    const held = this.containment;
    if (held.complete)
      log.info(
        `Python sessions: each in a PID namespace of its own (${held.via}), so no process a session starts outlives its reset, restart or this server`,
      );
    else for (const gap of held.gaps) log.warn(`Python sessions: ${gap}`);
  }

  applied(text: string): void {
    this.memoryApplied = text;
  }

  report(): Record<string, unknown> {
    const held = this.containment;
    return {
      processes: { mechanism: held.mechanism, via: held.via ?? null, complete: held.complete, gaps: held.gaps },
      memory: this.memoryReport(held),
    };
  }

  private memoryReport(held: ProcessContainment): Record<string, unknown> {
    const limit = this.memoryLimitMb;
    const base = { limit_mb: limit, applied: this.memoryApplied ?? null };
    if (!limit) return { ...base, per_process: null, session_total: null, gaps: ['no memory limit (0)'] };
    if (process.platform !== 'linux') {
      const why =
        process.platform === 'darwin'
          ? 'macOS does not enforce RLIMIT_DATA'
          : `${process.platform} has no resource limits Python can set`;
      return { ...base, per_process: null, session_total: null, gaps: [`not enforced: ${why}`] };
    }
    const gaps = [
      `the session's total is checked every ${MEMORY_CHECK_S} s, so a faster burst can pass the limit briefly before the largest process is ended`,
      "when the session's processes share much memory (forked workers), its exact total is taken less often (at most 2% of the reaper's time), so passing the limit can take longer to be noticed",
      'memory no process of the session maps (files in /dev/shm or another tmpfs) is not counted',
    ];
    if (held.mechanism !== 'pid-namespace')
      gaps.push("code that kills the session's reaper also ends the check of the session's total");
    return {
      ...base,
      per_process: 'RLIMIT_DATA: the private memory of each process; an allocation beyond the limit raises MemoryError',
      session_total: `the anonymous and shared memory of all the session's processes together (PSS), added up by its reaper every ${MEMORY_CHECK_S} s; over the limit the largest process is ended (the interpreter: the session's state is lost, and the run says so)`,
      gaps,
    };
  }
}
