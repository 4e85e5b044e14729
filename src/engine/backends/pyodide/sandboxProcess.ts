// The Pyodide sandbox's process as the server holds it from outside, whatever the code inside does: its memory
// (all of it, not only the WebAssembly heap: JavaScript reached from Python can allocate ArrayBuffers, other
// WebAssembly memories and Workers) is watched while a run goes, and it is stopped (SIGSTOP) whenever nothing
// the server asked of it is under way, between runs and while a run waits for the server's answer to a host
// call (a question to a person stops the run's clock, so it must not let the sandbox compute meanwhile).
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';

/** How often the sandbox's memory is read while a run goes. */
export const MEMORY_CHECK_MS = 50;
const KIB = 1024;
const MIB = 1024 * 1024;

/** What the sandbox process may use beyond the WebAssembly heap: the runtime, its isolates and Pyodide's JS. */
export const RUNTIME_ALLOWANCE_MB = 768;

/** The sandbox's memory limit for a WebAssembly heap cap of `heapLimitMb`. */
export function sandboxMemoryLimitMb(heapLimitMb: number): number {
  return heapLimitMb + RUNTIME_ALLOWANCE_MB;
}

/**
 * RLIMIT_DATA for the sandbox process: what a burst between two reads can reach. It counts address space that is
 * writable and private, committed or not: V8 reserves WebAssembly memories inaccessible (not counted until grown),
 * but Deno maps a 510 MB writable code range per isolate, so Deno gets more room.
 */
export function sandboxDataLimitBytes(memoryLimitMb: number, mechanism: 'deno' | 'node'): number {
  return (memoryLimitMb + (mechanism === 'deno' ? 2048 : 1024)) * MIB;
}

/** The memory of `pid` that is its own: anonymous resident pages, shared memory it made, and what is swapped out. */
export function processMemoryBytes(pid: number): number | undefined {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'latin1');
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

  /** Stops the sandbox; what the server sends it must `thaw()` it first. Only on platforms with SIGSTOP. */
  freeze(): void {
    if (this.frozen || process.platform === 'win32') return;
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
   * A run or a package request ended: the memory it left is checked once more, and with nothing else under way
   * (`busy` false) the sandbox is stopped until the server next sends it something.
   */
  rest(busy: boolean): void {
    clearInterval(this.watch);
    this.watch = undefined;
    if (!busy) this.freeze();
    else this.withinLimit();
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
