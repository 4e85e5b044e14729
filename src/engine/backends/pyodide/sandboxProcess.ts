// The Pyodide sandbox's process as the server holds it from outside, whatever the code inside does: its memory
// (all of it, not only the WebAssembly heap: JavaScript reached from Python can allocate ArrayBuffers, other
// WebAssembly memories and Workers) is read while a run goes and before each stop, and it is stopped (SIGSTOP) a
// moment after nothing the server asked of it is under way: between runs, and while a run waits for the server's
// answer to a host call (a question to a person stops the run's clock, so the sandbox must not compute meanwhile).
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';

/** How often the sandbox's memory is read while a run goes. */
export const MEMORY_CHECK_MS = 50;
/**
 * How long the sandbox has nothing to do before it is stopped. Stopping and starting wakes each of the runtime's
 * threads (a cost on a run's critical path if done at once); a moment later, a run that follows at once
 * pays nothing, and code left computing gets at most this much CPU before the stop.
 */
export const STOP_AFTER_MS = 20;
const KIB = 1024;
const MIB = 1024 * 1024;

/** What the sandbox process may use beyond the WebAssembly heap: the runtime, its isolates and Pyodide's JS. */
export const RUNTIME_ALLOWANCE_MB = 1536;

/**
 * V8's heap limit in each of the runtime's isolates. Left to itself V8 sizes it from the machine's memory and lets
 * garbage grow to gigabytes before collecting it, past the sandbox's limit while nothing is held.
 */
export const JS_HEAP_MB = 1024;

/** The sandbox's memory limit for a WebAssembly heap cap of `heapLimitMb`. */
export function sandboxMemoryLimitMb(heapLimitMb: number): number {
  return heapLimitMb + RUNTIME_ALLOWANCE_MB;
}

/**
 * RLIMIT_DATA for the sandbox process: what a burst between two reads can reach. It counts address space that is
 * writable and private, committed or not: V8 reserves WebAssembly memories inaccessible (not counted until grown),
 * but Deno maps a large writable code range per isolate, so Deno gets more room.
 */
export function sandboxDataLimitBytes(memoryLimitMb: number, mechanism: 'deno' | 'node'): number {
  return (memoryLimitMb + (mechanism === 'deno' ? 2048 : 1024)) * MIB;
}

/** Large enough for all of /proc/<pid>/status; reused, as the read is on every run's path. */
const statusBuffer = Buffer.alloc(8192);

/** The memory of `pid` that is its own: anonymous resident pages, shared memory it made, and what is swapped out. */
export function processMemoryBytes(pid: number): number | undefined {
  let status: string;
  try {
    const fd = fs.openSync(`/proc/${pid}/status`, 'r');
    try {
      status = statusBuffer.toString('latin1', 0, fs.readSync(fd, statusBuffer, 0, statusBuffer.length, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return (kib('RssAnon') + kib('RssShmem') + kib('VmSwap')) * KIB;
}

/** The last process down the first-child line from `pid`: under bubblewrap, the runtime inside the sandbox. */
function innermost(pid: number): number | undefined {
  let current = pid;
  for (let depth = 0; depth < 4; depth++) {
    let children: string;
    try {
      children = fs.readFileSync(`/proc/${current}/task/${current}/children`, 'latin1').trim();
    } catch {
      return depth === 0 ? undefined : current;
    }
    if (!children) return current;
    current = Number(children.split(' ')[0]);
  }
  return current;
}

export class SandboxProcess {
  private runtimePid: number | undefined;
  private frozen = false;
  private watch: NodeJS.Timeout | undefined;
  private stopping: NodeJS.Timeout | undefined;

  /**
   * `nested`: the runtime runs beneath the child (bubblewrap), found from the host side. `breach` is told, once,
   * in the server's own words, when the memory is over `memoryLimitMb`.
   */
  constructor(
    private readonly child: ChildProcess,
    private readonly nested: boolean,
    readonly memoryLimitMb: number,
    private readonly breach: (reason: string) => void,
  ) {}

  /**
   * Stops the sandbox STOP_AFTER_MS from now, unless the server sends it something first: what it sends must
   * `thaw()` it. Only on platforms with SIGSTOP.
   */
  freeze(): void {
    if (this.frozen || this.stopping || process.platform === 'win32') return;
    this.stopping = setTimeout(() => this.stopNow(), STOP_AFTER_MS);
    this.stopping.unref();
  }

  private stopNow(): void {
    this.stopping = undefined;
    const pid = this.pid();
    if (pid === undefined || !this.withinLimit()) return;
    try {
      process.kill(pid, 'SIGSTOP');
      this.frozen = true;
    } catch {
      // Gone already: its exit is reported by the child's 'exit'.
    }
  }

  thaw(): void {
    clearTimeout(this.stopping);
    this.stopping = undefined;
    if (!this.frozen) return;
    this.frozen = false;
    try {
      process.kill(this.runtimePid!, 'SIGCONT');
    } catch {
      // Gone already.
    }
  }

  /** While a run goes, its memory is read every MEMORY_CHECK_MS (Linux only: elsewhere there is no /proc). */
  watchMemory(): void {
    if (this.watch || process.platform !== 'linux') return;
    this.watch = setInterval(() => this.withinLimit(), MEMORY_CHECK_MS);
    this.watch.unref();
  }

  /**
   * A run or a package request ended. With nothing else under way (`busy` false), the sandbox is stopped a moment
   * later, once its memory is checked (a read of /proc on a run's path would add to every warm run).
   */
  rest(busy: boolean): void {
    clearInterval(this.watch);
    this.watch = undefined;
    if (!busy) this.freeze();
  }

  /** False, after telling `breach`, when the sandbox holds more memory than its limit. */
  withinLimit(): boolean {
    if (process.platform !== 'linux') return true;
    const pid = this.pid();
    const used = pid === undefined ? undefined : processMemoryBytes(pid);
    if (used === undefined || used <= this.memoryLimitMb * MIB) return true;
    clearInterval(this.watch);
    this.watch = undefined;
    this.breach(
      `the Pyodide sandbox used ${Math.round(used / MIB)} MB of memory, over its limit of ${this.memoryLimitMb} MB (the WebAssembly heap cap plus ${RUNTIME_ALLOWANCE_MB} MB for the JavaScript runtime)`,
    );
    return false;
  }

  private pid(): number | undefined {
    if (this.runtimePid !== undefined) return this.runtimePid;
    const pid = this.child.pid;
    if (pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null) return undefined;
    // Found once the instance is ready: by then bubblewrap has started the runtime, and it can start nothing else.
    this.runtimePid = this.nested ? innermost(pid) : pid;
    return this.runtimePid;
  }
}
