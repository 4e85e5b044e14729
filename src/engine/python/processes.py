"""The processes of a workspace-Python session and their bounds (the driver's alone; Pyodide has none).

On Linux the process the engine starts becomes the session's reaper and forks the driver: orphans that user
code leaves (a daemon's double fork, `setsid` children, a shell's background jobs) re-parent to the reaper,
not to init, so they stay findable below it, and it reaps them as they exit. It is a separate process so that
the driver's own children stay the user's to wait for: a driver that reaped them itself would take their exit
status from subprocess.Popen and multiprocessing. When the driver ends, however it ends, the reaper kills
everything left below it and ends the same way, so the engine sees the driver's exit.

Elsewhere (no /proc or no prctl) the driver runs alone as the engine's child, and what ends a session's
processes is the engine's kill of its process group, which children that called setsid escape.
"""
import os
import signal
import sys
import time

# prctl(2) option: orphaned descendants re-parent to the nearest ancestor that set it, rather than to init.
_PR_SET_CHILD_SUBREAPER = 36
# How long a cleanup waits for killed processes to be reaped; one in uninterruptible sleep may never be.
_REAP_WAIT_S = 2.0
_HAS_PROC = sys.platform.startswith("linux") and os.path.isdir("/proc/self")
_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if _HAS_PROC else 100


def _become_subreaper():
    if not _HAS_PROC:
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (ImportError, OSError, AttributeError):
        return False


def start_reaper(protocol_fds):
    """Forks when a reaper is possible: returns the reaper's pid in the driver; the reaper never returns.

    None where there can be no reaper: the driver goes on as the process the engine started.
    """
    if not _become_subreaper():
        return None
    driver = os.fork()
    if driver == 0:
        # The subreaper flag is not inherited across fork: the driver waits only for children it starts itself.
        return os.getppid()
    # The engine's pipes are the driver's alone.
    for fd in protocol_fds:
        os.close(fd)
    # Interrupts are for the driver; one sent to the whole group by user code must not end the reaper.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    status = 1 << 8
    try:
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == driver:
                break
        # The session's state went with the driver, so does everything it started.
        end_below(os.getpid(), keep=())
    finally:
        _end_like(status)


def _end_like(status):
    """Ends this process as the driver ended, so the engine can tell a kill or a crash from an exit code."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            import resource

            # The driver dumped core already if the system wanted one; a second dump would only be the reaper's.
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, ValueError, OSError):
            pass
        if number != signal.SIGKILL:  # whose handler cannot be set, nor needs to be
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


# ---- the process tree, from /proc --------------------------------------------------------------------


def _read_stat(pid):
    # os.open and os.read: half the cost of open(), which counts with hundreds of processes on the system.
    try:
        fd = os.open("/proc/%s/stat" % pid, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)


def _process_table():
    """{pid: (ppid, state, start time in clock ticks since boot)} for every process on the system."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _read_stat(name)
        if stat is None:
            continue  # ended since the listing
        # The command name (field 2) may hold spaces and parentheses; the fields after its last ")" do not.
        fields = stat[stat.rindex(b")") + 2:].split()
        table[int(name)] = (int(fields[1]), fields[0], int(fields[19]))
    return table


def _below(root, table):
    """Every pid below `root` in `table`, parents before their children."""
    children = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = []
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), ()):
            found.append(child)
            pending.append(child)
    return found


_loadavg_fd = None


def mark():
    """Now, as something the start of a process can be compared with (see _started_since); None without /proc.

    /proc gives start times in clock ticks (10 ms), too coarse for runs that follow each other within one, so
    the last pid handed out (from /proc/loadavg) tells the processes of a run's first tick from earlier ones.
    """
    global _loadavg_fd
    if not _HAS_PROC:
        return None
    ticks = int(time.clock_gettime(time.CLOCK_BOOTTIME) * _TICKS_PER_S)
    if _loadavg_fd is None:
        # Kept open: every run asks, and a pread costs a fraction of an open.
        _loadavg_fd = os.open("/proc/loadavg", os.O_RDONLY)
    return ticks, int(os.pread(_loadavg_fd, 256, 0).split()[-1])


def _started_since(pid, start_ticks, since):
    if since is None:
        return True
    ticks, last_pid = since
    return start_ticks > ticks or (start_ticks == ticks and pid > last_pid)


def kill_below(root, keep, since=None):
    """SIGKILLs every process below `root` started after the mark `since` (all without one), except those in
    `keep`; returns their pids, with the zombies among them that this process or the reaper (`root`) is to
    reap. Does nothing without /proc.
    """
    if not _HAS_PROC:
        return []
    table = _process_table()
    reapers = (os.getpid(), root)
    doomed = [
        pid
        for pid in _below(root, table)
        if pid not in keep and _started_since(pid, table[pid][2], since) and (table[pid][1] != b"Z" or table[pid][0] in reapers)
    ]
    for pid in doomed:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass  # gone already
    return doomed


def end_below(root, keep, since=None):
    """kill_below, then waits, up to a bound, until each one is reaped: this process reaps its own children,
    the session's reaper (`root`) the rest. Scans again while new ones appear, since a process may fork
    between scan and kill.
    """
    deadline = time.monotonic() + _REAP_WAIT_S
    while time.monotonic() < deadline:
        pending = set(kill_below(root, keep, since))
        if not pending:
            return
        while pending and time.monotonic() < deadline:
            pending = {pid for pid in pending if not _reaped(pid, root)}
            if pending:
                time.sleep(0.005)


def _reaped(pid, root):
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
    except ChildProcessError:
        pass  # not this process's child: its reaper's
    stat = _read_stat(pid)
    if stat is None:
        return True
    state, ppid = stat[stat.rindex(b")") + 2:].split()[:2]
    # A zombie re-parented outside the session (to init, where there is no reaper) is for its new parent.
    return state == b"Z" and int(ppid) not in (os.getpid(), root)


# ---- memory -------------------------------------------------------------------------------------------


def limit_memory(megabytes):
    """Bounds this process's data (and, each on its own, that of the processes it starts) to `megabytes`.

    Returns the limit in force (0: none) and how it is applied or why not, for the engine's log.
    RLIMIT_DATA rather than RLIMIT_AS: since Linux 4.7 it counts private writable mappings, which is where
    Python objects and numpy arrays live, and not address space that is only reserved (glibc reserves 64 MB
    per malloc arena: numpy with 32 OpenBLAS threads measured 1.3 GB of address space for 0.3 GB of data).
    An allocation beyond it fails, which Python raises as MemoryError in the user's code.
    """
    if not megabytes:
        return 0, "no memory limit"
    if sys.platform == "darwin":
        return 0, "no memory limit: macOS does not enforce RLIMIT_DATA (allocations are mmap-backed)"
    try:
        import resource
    except ImportError:
        return 0, "no memory limit: the resource module is not available on %s" % sys.platform
    wanted = megabytes * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
    except (ValueError, OSError) as error:
        return 0, "no memory limit: RLIMIT_DATA could not be set (%s)" % error
    applied = soft // (1024 * 1024)
    return applied, "memory limited to %d MB of data (RLIMIT_DATA)" % applied
