// What bounds the Pyodide sandbox's memory and CPU on this machine, as `environment` shows it
// (`backends.pyodide.bounds`): what sandboxProcess.ts and the RLIMIT_DATA of sandbox/index.ts hold here, and what not.
import { sandboxLimits, type SandboxReport } from '../../sandbox/index';
import {
  MEMORY_CHECK_MS,
  RUNTIME_ALLOWANCE_MB,
  STOP_AFTER_MS,
  sandboxDataLimitBytes,
  sandboxMemoryLimitMb,
} from './sandboxProcess';

const MIB = 1024 * 1024;

export function sandboxBounds(mechanism: SandboxReport['mechanism'], heapLimitMb: number): Record<string, unknown> {
  const limitMb = sandboxMemoryLimitMb(heapLimitMb);
  const linux = process.platform === 'linux';
  const prlimit = sandboxLimits() !== undefined;
  const dataLimitMb = sandboxDataLimitBytes(limitMb, mechanism === 'deno' ? 'deno' : 'node') / MIB;
  const gaps: string[] = [];
  if (!linux)
    gaps.push(
      `only the WebAssembly heap (${heapLimitMb} MB) is bounded: memory JavaScript reached from Python holds is not, for ${process.platform === 'darwin' ? 'macOS does not enforce RLIMIT_DATA and has no /proc to read it from' : `${process.platform} has neither resource limits nor /proc`}`,
    );
  else {
    gaps.push(
      `the sandbox's memory is read every ${MEMORY_CHECK_MS} ms while a run goes and before each stop, so a faster burst can pass the limit${prlimit ? `, up to RLIMIT_DATA (${dataLimitMb} MB of writable address space), ` : ' '}before the process is ended`,
      "files in the sandbox's own tmpfs (/tmp and /dev under bubblewrap) are not counted; Node's permission model refuses writing there",
    );
    if (!prlimit) gaps.push('prlimit (util-linux) is not installed: no RLIMIT_DATA holds a burst between two reads');
  }
  const stops = process.platform !== 'win32';
  if (!stops)
    gaps.push(
      'Windows has no SIGSTOP: code that leaves a Worker computing keeps a CPU busy between runs, and computes while a question waits',
    );
  return {
    wasm_heap_mb: heapLimitMb,
    memory_limit_mb: linux ? limitMb : null,
    memory: linux
      ? `all of the sandbox process's own memory (anonymous, shared and swapped pages), every thread and Worker: the WebAssembly heap cap plus ${RUNTIME_ALLOWANCE_MB} MB for the JavaScript runtime; over it the interpreter is ended and the run says session_reset`
      : null,
    per_process: linux && prlimit ? `RLIMIT_DATA ${dataLimitMb} MB: an allocation beyond it fails` : null,
    cpu: stops
      ? `the sandbox process is stopped (SIGSTOP) ${STOP_AFTER_MS} ms after a run ends and after a run starts waiting for the answer to a host call (a tool call, its approval, input()), until the server next sends it something: code left computing gets at most that much CPU`
      : null,
    gaps,
  };
}
