// Process groups this process started that must not outlive it: a workspace-Python driver, a local Jupyter
// Server. Each leads its own group (so it can be ended with everything it started), which also means nothing
// else ends it when this process does.

const ending = new Map<number, (pid: number) => void>();
let exitHookInstalled = false;

/** SIGKILL to `pid`'s group; to `pid` alone on Windows, which has no process groups to signal. */
export function killGroup(pid: number): void {
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** When this process exits, `end` (default: killGroup) is called for `pid`, unless it was forgotten first. */
export function endWithThisProcess(pid: number, end: (pid: number) => void = killGroup): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => ending.forEach((endOne, one) => endOne(one)));
  }
  ending.set(pid, end);
}

/** `pid` has exited: nothing is left to end. */
export function forgetProcess(pid: number): void {
  ending.delete(pid);
}
