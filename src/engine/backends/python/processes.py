"""The processes of a workspace-Python session and their bounds (the driver's alone; Pyodide has none).

On Linux the process the engine starts becomes the session's reaper and forks the driver: orphans that user
code leaves (a daemon's double fork, `setsid` children, a shell's background jobs) re-parent to the reaper,
not to init, so they stay findable below it, and it reaps them as they exit. It is a separate process so that
the driver's own children stay the user's to wait for: a driver that reaped them itself would take their exit
status from subprocess.Popen and multiprocessing. When the driver ends, however it ends, the reaper kills
everything left below it and ends the same way, so the engine sees the driver's exit.

Where the engine could give the session a PID namespace of its own (bubblewrap or unshare; see
containment.ts), the reaper is that namespace's init, pid 1: no process of the session can signal it (the
kernel drops every signal sent to a namespace's init from inside unless it handles it), none can leave the
namespace, and when the reaper ends, however it ends, the kernel kills every process in the namespace. The
engine ends a session by killing the process it started, which takes the namespace with it. Without a
namespace the reaper is an ordinary process of the user's, which user code can kill (and so leave processes
behind).

Elsewhere (no /proc or no prctl) the driver runs alone as the engine's child, and what ends a session's
processes is the engine's kill of its process group, which children that called setsid escape.

The reaper also bounds the memory of the session's processes taken together (see _MemoryWatch): RLIMIT_DATA
bounds each process's private memory, but not memory it shares (a shared anonymous mmap, /dev/shm), nor the
sum over processes.
"""
import builtins
import os
import signal
import sys
import time

# This module runs in the driver's process, after user code that may have replaced builtins or os functions:
# it uses its own references, taken when it is loaded.
__builtins__ = dict(vars(builtins))

_listdir = os.listdir
_open = os.open
_read = os.read
_pread = os.pread
_close = os.close
_kill = os.kill
_getpid = os.getpid
_waitpid = os.waitpid
_WNOHANG = os.WNOHANG
_monotonic = time.monotonic
_sleep = time.sleep
_SIGKILL = int(signal.SIGKILL)

# prctl(2) options: orphaned descendants re-parent to the nearest ancestor that set it, rather than to init;
# and whether other processes of the same user may ptrace this one.
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_DUMPABLE = 4
# How long a cleanup waits for killed processes to be reaped; one in uninterruptible sleep may never be.
_REAP_WAIT_S = 2.0
_HAS_PROC = sys.platform.startswith("linux") and os.path.isdir("/proc/self")
_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if _HAS_PROC else 100
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if _HAS_PROC else 4096
# How often the reaper adds up the session's memory when there is a limit.
MEMORY_CHECK_S = 0.1
# The exact count (smaps_rollup walks every page table) may take this share of the reaper's time at most.
_EXACT_SHARE = 0.02


def _prctl(option, value):
    if not _HAS_PROC:
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (ImportError, OSError, AttributeError):
        return False


def in_namespace():
    """This process is the init of a PID namespace (the engine gave the session one)."""
    return _HAS_PROC and os.getpid() == 1


def start_reaper(protocol_fds, memory_limit_mb):
    """Forks when a reaper is possible: returns the reaper's pid in the driver (1 in a PID namespace); the
    reaper never returns. None where there can be no reaper: the driver goes on as the process the engine started.
    """
    namespaced = in_namespace()
    # A namespace's init is every orphan's parent already; the flag costs nothing there either.
    if not _prctl(_PR_SET_CHILD_SUBREAPER, 1) and not namespaced:
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
    # No process of the session may ptrace the reaper (they run as the same user): it is what ends them.
    _prctl(_PR_SET_DUMPABLE, 0)
    watch = _MemoryWatch(memory_limit_mb * 1024 * 1024, driver, namespaced) if memory_limit_mb and _HAS_PROC else None
    status = 1 << 8
    try:
        status = _wait_for_driver(driver, watch)
        # The session's state went with the driver, so does everything it started. In a namespace the kernel
        # does it, and more surely, the moment this process ends.
        if not namespaced:
            end_below(os.getpid(), keep=())
    finally:
        _end_like(status, namespaced)


def _wait_for_driver(driver, watch):
    """Reaps every process that ends below the reaper until the driver does; returns the driver's status."""
    if watch is None:
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == driver:
                return status
    # SIGCHLD stays pending while blocked, so a child that ends between a reap and the wait wakes it at once.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    while True:
        while True:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == driver:
                return status
            if pid == 0:
                break
        watch.check()
        signal.sigtimedwait([signal.SIGCHLD], MEMORY_CHECK_S)


def _end_like(status, namespaced):
    """Ends this process as the driver ended, so the engine can tell a kill or a crash from an exit code."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if namespaced:
            # A namespace's init cannot be ended by a signal it sends itself: the shell's convention instead,
            # which bubblewrap and unshare pass on, and the engine reads back (containment.ts).
            os._exit(128 + number)
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


def _read_file(path, size=4096):
    # os.open and os.read: cheaper than open(), which counts with hundreds of processes on the system.
    try:
        fd = _open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return _read(fd, size)
    except OSError:
        return None
    finally:
        _close(fd)


def _read_stat(pid):
    return _read_file("/proc/%s/stat" % pid)


def _process_table():
    """{pid: (ppid, state, start time in clock ticks since boot)} for every process on the system."""
    table = {}
    for name in _listdir("/proc"):
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
_boot_clock = time.clock_gettime
_BOOTTIME = getattr(time, "CLOCK_BOOTTIME", None)


def mark():
    """Now, as something the start of a process can be compared with (see _started_since); None without /proc.

    /proc gives start times in clock ticks (10 ms), too coarse for runs that follow each other within one, so
    the last pid handed out (from /proc/loadavg) tells the processes of a run's first tick from earlier ones.
    """
    global _loadavg_fd
    if not _HAS_PROC:
        return None
    ticks = int(_boot_clock(_BOOTTIME) * _TICKS_PER_S)
    if _loadavg_fd is None:
        # Kept open: every run asks, and a pread costs a fraction of an open.
        _loadavg_fd = _open("/proc/loadavg", os.O_RDONLY)
    return ticks, int(_pread(_loadavg_fd, 256, 0).split()[-1])


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
    reapers = (_getpid(), root)
    doomed = [
        pid
        for pid in _below(root, table)
        if pid not in keep and _started_since(pid, table[pid][2], since) and (table[pid][1] != b"Z" or table[pid][0] in reapers)
    ]
    for pid in doomed:
        try:
            _kill(pid, _SIGKILL)
        except OSError:
            pass  # gone already
    return doomed


def end_below(root, keep, since=None):
    """kill_below, then waits, up to a bound, until each one is reaped: this process reaps its own children,
    the session's reaper (`root`) the rest. Scans again while new ones appear, since a process may fork
    between scan and kill.
    """
    deadline = _monotonic() + _REAP_WAIT_S
    while _monotonic() < deadline:
        pending = set(kill_below(root, keep, since))
        if not pending:
            return
        while pending and _monotonic() < deadline:
            pending = {pid for pid in pending if not _reaped(pid, root)}
            if pending:
                _sleep(0.005)


def _reaped(pid, root):
    try:
        if _waitpid(pid, _WNOHANG)[0] == pid:
            return True
    except ChildProcessError:
        pass  # not this process's child: its reaper's
    stat = _read_stat(pid)
    if stat is None:
        return True
    state, ppid = stat[stat.rindex(b")") + 2:].split()[:2]
    # A zombie re-parented outside the session (to init, where there is no reaper) is for its new parent.
    return state == b"Z" and int(ppid) not in (_getpid(), root)


# ---- memory -------------------------------------------------------------------------------------------


def limit_memory(megabytes, reaper):
    """Bounds this process's data (and, each on its own, that of the processes it starts) to `megabytes`.

    Returns the limit in force (0: none) and how it is applied or why not, for the engine's log.
    RLIMIT_DATA rather than RLIMIT_AS: since Linux 4.7 it counts private writable mappings, which is where Python
    objects and numpy arrays live, and not address space that is only reserved. RLIMIT_AS would count shared mappings
    too, but also every reservation, and numpy, every thread's malloc arena, Node, Java, WebAssembly and Chromium
    reserve far more address space than they use (docs/performance.md). An allocation beyond RLIMIT_DATA fails, which
    Python raises as MemoryError in the user's code. What it does not count (shared memory, and the sum over the
    session's processes) the reaper adds up (_MemoryWatch), when there is one.
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
    text = "memory limited to %d MB: each process's private data (RLIMIT_DATA)" % applied
    if reaper is not None and _HAS_PROC:
        text += "; all the session's processes together, shared memory included (checked by its reaper every %g s)" % MEMORY_CHECK_S
    return applied, text


def _status_fields(pid, names):
    """The values (kB) of the fields `names` in /proc/<pid>/status, or None once the process is gone."""
    data = _read_file("/proc/%d/status" % pid, 8192)
    if data is None:
        return None
    values = {}
    for line in data.split(b"\n"):
        name, _, rest = line.partition(b":")
        if name in names:
            values[name] = int(rest.split()[0])
    return values


class _MemoryWatch:
    """What the session's processes use together, against the limit: anonymous and shared memory (not file
    pages, which the kernel can drop and reread), each page counted once however many processes map it (PSS).

    Ten times a second the reaper reads a cheap upper bound (each process's resident anonymous and shared
    pages, from /proc/<pid>/status); only when that is over the limit does it read the exact figures
    (/proc/<pid>/smaps_rollup). Over the limit, the process using the most is killed, and the session is told
    on its stderr: a child of the interpreter, or the interpreter itself (which ends the session, announced
    like any crash). A process that hides its smaps (PR_SET_DUMPABLE 0) is counted by its resident pages.

    The bound counts a page once per process that maps it, so forked workers sharing their parent's memory
    can keep it over the limit while the exact figure is under. The exact count walks every page table, slow
    for a large parent and its forked children, so it is then taken no more often than keeps it within
    _EXACT_SHARE of the time.
    """

    _BOUND = (b"RssAnon", b"RssShmem")
    _EXACT = (b"Pss_Anon", b"Pss_Shmem")

    def __init__(self, limit_bytes, driver, namespaced):
        self._limit = limit_bytes
        self._driver = driver
        self._namespaced = namespaced
        self._me = os.getpid()
        self._next_exact = 0.0

    def check(self):
        pids = self._pids()
        bound = {}
        for pid in pids:
            fields = _status_fields(pid, self._BOUND)
            if fields:
                bound[pid] = sum(fields.values()) * 1024
        if sum(bound.values()) <= self._limit:
            return
        started = _monotonic()
        if started < self._next_exact:
            return
        used = {pid: self._exact(pid, bound[pid]) for pid in bound}
        took = _monotonic() - started
        self._next_exact = started + took / _EXACT_SHARE
        total = sum(used.values())
        if total <= self._limit:
            return
        biggest = max(used, key=used.get)
        what = "the interpreter, so the session's state is lost" if biggest == self._driver else _command_line(biggest)
        message = "[code-mode] the session's processes use %d MB of memory, over its memory limit of %d MB: ended pid %d (%s)\n" % (
            total >> 20, self._limit >> 20, biggest, what)
        try:
            _write_all(2, message.encode("utf-8", "backslashreplace"))
        except OSError:
            pass
        try:
            _kill(biggest, _SIGKILL)
        except OSError:
            pass

    def _pids(self):
        if self._namespaced:
            # The namespace's own /proc: every process in it is the session's.
            return [int(name) for name in _listdir("/proc") if name.isdigit() and int(name) != self._me]
        found = []
        pending = [self._me]
        while pending:
            pid = pending.pop()
            try:
                tasks = _listdir("/proc/%d/task" % pid)
            except OSError:
                continue
            for task in tasks:
                children = _read_file("/proc/%d/task/%s/children" % (pid, task), 1 << 16) or b""
                for child in children.split():
                    found.append(int(child))
                    pending.append(int(child))
        return found

    def _exact(self, pid, bound):
        data = _read_file("/proc/%d/smaps_rollup" % pid, 8192)
        if not data:
            return bound  # unreadable (not dumpable) or gone
        total = 0
        seen = 0
        for line in data.split(b"\n"):
            name, _, rest = line.partition(b":")
            if name in self._EXACT:
                total += int(rest.split()[0]) * 1024
                seen += 1
        return total if seen == len(self._EXACT) else bound  # before Linux 5.x: no breakdown


def _command_line(pid):
    data = _read_file("/proc/%d/cmdline" % pid) or b""
    text = data.replace(b"\0", b" ").strip().decode("utf-8", "backslashreplace")
    return text[:200] or "pid %d" % pid


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
