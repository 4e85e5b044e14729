"""The persistent driver of the workspace-Python backend (Python 3.8+, standard library only).

Usage: python -u driver.py REQUEST_FD EVENT_FD MEMORY_LIMIT_MB   (0: no limit)

The engine talks to it in length-prefixed JSON frames (src/engine/framing.ts) over two extra pipes, so fds
0/1/2 stay the user's: requests arrive on REQUEST_FD, events and results leave on EVENT_FD.

Frames in:  {"type": "run", "id", "code", "script"?, "echoLastExpression"?, "outputCapBytes"}
            {"type": "hostResult", "callId", "ok", "result" | "error"}
Frames out: {"type": "hello", "pid", "version", "pythonVersion", "executable", "marker", "reaper", "namespace",
             "memoryLimitMb", "memoryLimit"}
            {"type": "stdout" | "stderr", "text"}
            {"type": "display", "display": {"mime", "data", "title"?, "text"?, "result"?}}  (displays.py)
            {"type": "hostCall", "callId", "method", "params"}
            {"type": "result", "id", "outcome", "rawMarkers": [bool, bool]}

Output written below sys.stdout (os.write(1, ...), subprocesses) reaches the engine on the real fd 1/2 pipes.
So that no such byte arrives after its run's result, a run ends by writing a marker (a random token named
in the hello frame) to each pipe the engine has not yet read to the end, before the result frame; the
result says which pipes got one, and the engine waits for those markers.

Where it can, the process the engine starts stays above the driver as the session's reaper (processes.py).

Its parts, each loaded from beside this file under a private name: interrupts.py (SIGINT), frames.py (the
frames and their limits), run_output.py (sys.stdout and sys.stderr, fds 0-2, the end-of-run markers) and
host_calls.py (calls into the host); the reaper and the memory limit are processes.py's.
"""
import sys

# Checked before anything newer is imported, so an old interpreter says why it cannot serve.
if sys.version_info < (3, 8):
    sys.stderr.write("the code-mode driver needs Python 3.8 or newer; %s is Python %s\n" % (sys.executable, sys.version.split()[0]))
    sys.exit(1)

import _signal
import builtins
import errno
import faulthandler
import importlib.util
import io
import os
import select
import signal
import threading
import types

# ---- the driver's own references ---------------------------------------------------------------------
# User code runs in this process and may replace anything it can reach: builtins (str, len, open), module
# attributes (os.write, os.getpid, json.loads, signal.signal), sys.stdout. The driver must go on serving
# whatever a run did, so it takes what it needs now, before any user code, and never looks those names up
# again (its parts do the same). Functions defined below look builtins up in this copy, not in the builtins
# module.
__builtins__ = dict(vars(builtins))

_close = os.close
_getpid = os.getpid
_getpgrp = os.getpgrp
_killpg = os.killpg
_exit = os._exit
_open = io.open
_spec_from_file_location = importlib.util.spec_from_file_location
_poll = select.poll
_POLL_EVENTS = getattr(select, "POLLRDHUP", 0) | select.POLLHUP
_pthread_sigmask = _signal.pthread_sigmask
_SIGINT = int(signal.SIGINT)
_SIGKILL = int(signal.SIGKILL)
_SIG_BLOCK = signal.SIG_BLOCK
_sys_modules = sys.modules
_type_name = type.__dict__["__name__"].__get__
_exact_str = str.__str__
_ENOMEM_TEXT = "[Errno %d]" % errno.ENOMEM

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_shared(name, filename):
    # Loaded under a private name rather than put on sys.path, so user code never imports driver files, and
    # no module of the user's by the same name can stand in for one.
    spec = importlib.util.spec_from_file_location(name, os.path.join(_HERE, filename))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# In the order they import each other.
_interrupts = _load_shared("_code_mode_interrupts", "interrupts.py")
_frames = _load_shared("_code_mode_frames", "frames.py")
_run_output = _load_shared("_code_mode_run_output", "run_output.py")
_host_calls = _load_shared("_code_mode_host_calls", "host_calls.py")

# Set once main() knows which process the driver is: the one the engine started, or the reaper's child.
_DRIVER_PID = None
# The top of the session's process tree: the reaper, else the driver.
_session_root = None
_processes = None
_writer = None


def _engine_gone():
    # Nobody is left to read results: end the driver and everything the session started, setsid children
    # included; the group is the session's own when the engine started it (it leads its own group).
    try:
        _processes.kill_below(_session_root, keep=(_getpid(),))
        if _getpgrp() == _session_root:
            _killpg(_session_root, _SIGKILL)
    finally:
        _exit(1)


def _send_display(display):
    # A forked child has closed the frame pipe: its displays have nowhere to go.
    if _getpid() == _DRIVER_PID:
        _writer.send({"type": "display", "display": _frames.fit_display(display)})


class _ShippedModules:
    """Makes the modules shipped for user code (`from code_mode import tools`) importable by name.

    The driver's folder is not on sys.path, so its other files stay out of reach. Consulted after the
    standard finders: as with any module, one of the user's own by the same name comes first.
    """

    def __init__(self):
        # Where each one is, found now: a run may break os.path or importlib.util, and imports must still work.
        self._locations = {}
        for name in ("code_mode",):
            location = os.path.join(_HERE, name + ".py")
            if os.path.exists(location):
                self._locations[name] = location

    def find_spec(self, name, path=None, target=None):
        location = self._locations.get(name) if type(name) is str else None
        return None if location is None else _spec_from_file_location(name, location)


def _watch_engine(fd):
    # The request pipe hangs up when the engine's process ends, however it ends. Only this thread notices
    # while user code is busy, and without it a `while True` cell would outlive the engine.
    # SIGINT must reach the main thread, where it can interrupt a blocking call such as time.sleep.
    _pthread_sigmask(_SIG_BLOCK, {_SIGINT})
    poller = _poll()
    poller.register(fd, _POLL_EVENTS)
    while True:
        if poller.poll():
            _engine_gone()


def _multiprocessing_helpers():
    # multiprocessing waits for its forkserver and resource tracker itself and cannot cope with anyone else
    # reaping them (the forkserver's waitpid would raise ChildProcessError); idle, they cost nothing.
    helpers = set()
    for module, instance, attribute in (
        ("multiprocessing.forkserver", "_forkserver", "_forkserver_pid"),
        ("multiprocessing.resource_tracker", "_resource_tracker", "_pid"),
    ):
        try:
            pid = getattr(getattr(_sys_modules.get(module), instance, None), attribute, None)
        except BaseException:  # noqa: BLE001 - modules a run may have replaced or broken
            continue
        if type(pid) is int:
            helpers.add(pid)
    return helpers


def _unreported(exc):
    """The outcome of a run whose own report failed (run_cell catches everything user code raises)."""
    try:
        name = _exact_str(_type_name(type(exc)))
    except BaseException:  # noqa: BLE001
        name = "BaseException"
    return {
        "status": "error",
        "errorType": "RuntimeError",
        "excName": name,
        "message": "%s while reporting the run's outcome" % name,
        "traceback": "",
    }


def main():
    global _writer, _DRIVER_PID, _session_root, _processes
    request_fd, event_fd, memory_limit_mb = (int(arg) for arg in sys.argv[1:4])
    _processes = _load_shared("_code_mode_processes", "processes.py")
    # First, while this is the only thread: from here on this process may be the reaper's child.
    reaper = _processes.start_reaper((request_fd, event_fd), memory_limit_mb)
    _DRIVER_PID = os.getpid()
    _session_root = reaper or _DRIVER_PID
    memory_limit_mb, memory_limit = _processes.limit_memory(memory_limit_mb, reaper)
    # Nothing the user starts may inherit the protocol pipes.
    os.set_inheritable(request_fd, False)
    os.set_inheritable(event_fd, False)
    reader = _frames.FrameReader(request_fd, _engine_gone)
    _writer = _frames.FrameWriter(event_fd)
    marker = ("\0code-mode-run-end-%s\0" % os.urandom(12).hex()).encode("ascii")

    run_cell = _load_shared("_code_mode_cell", "cell.py").run_cell
    displays = _load_shared("_code_mode_displays", "displays.py")
    displays.install(_send_display)
    show_result = displays.show_result
    streams = _run_output.StandardStreams(_writer)
    _frames.report_to(streams.saved_fds[2])
    streams.restore()
    faulthandler.enable(file=sys.__stderr__)
    signal.signal(signal.SIGINT, _interrupts.on_sigint)

    def after_fork_in_child():
        # A forked child (multiprocessing, os.fork) writes to the real pipes; the frame stream is the
        # parent's alone.
        _close(request_fd)
        _close(event_fd)
        sys.stdout = _open(1, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)
        sys.stderr = _open(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)

    os.register_at_fork(after_in_child=after_fork_in_child)

    # The user's namespace is a real __main__ module, so pickling and multiprocessing find what cells define.
    sys.modules["_code_mode_driver"] = sys.modules["__main__"]
    user_main = types.ModuleType("__main__")
    user_main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = user_main
    host = _host_calls.host_module(reader, _writer, _DRIVER_PID)
    sys.modules["_code_mode_host"] = host
    host_stdin = _load_shared("_code_mode_input", "user_input.py").install(host.call, host.HostCallError)
    sys.meta_path.append(_ShippedModules())
    # As in the interactive interpreter: imports resolve from the working directory, not the driver's.
    sys.path[0] = ""
    sys.argv = [""]

    threading.Thread(target=_watch_engine, args=(request_fd,), name="code-mode-watchdog", daemon=True).start()
    _writer.send({
        "type": "hello",
        "pid": _DRIVER_PID,
        "version": sys.version,
        "pythonVersion": "%d.%d.%d" % sys.version_info[:3],
        "executable": sys.executable,
        "marker": marker.decode("ascii"),
        "reaper": reaper,
        # The reaper is the init of a PID namespace of the session's own (containment.ts).
        "namespace": reaper == 1,
        "memoryLimitMb": memory_limit_mb,
        "memoryLimit": memory_limit,
    })

    cells = 0
    while True:
        request = reader.read(interruptible=False)
        if request.get("type") != "run":
            continue  # a late hostResult for a call abandoned by an interrupt
        cells += 1
        cap = request.get("outputCapBytes")
        if not isinstance(cap, int) or cap < 0:
            cap = _run_output.DEFAULT_OUTPUT_CAP
        streams.restore()
        sys.stdin = host_stdin
        streams.stdout.begin_run(cap)
        streams.stderr.begin_run(cap)
        displays.begin_run()
        _interrupts.lend_sigint_to_user()
        started = _processes.mark()
        try:
            _interrupts.user_code_running = True
            show = show_result if request.get("echoLastExpression") is not False else None
            outcome = run_cell(request["code"], user_main.__dict__, "<cell %d>" % cells, request.get("script"), show)
            _interrupts.user_code_running = False
        except KeyboardInterrupt:
            # Raised outside the user's frames (during the final flush, or a deferred interrupt).
            _interrupts.user_code_running = False
            outcome = {"status": "interrupted"}
        except BaseException as exc:  # noqa: BLE001 - run_cell reports whatever user code does; this is a last resort
            _interrupts.user_code_running = False
            outcome = _unreported(exc)
        if _getpid() != _DRIVER_PID:
            # A child forked by the cell returned from it: the parent owns the session.
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except BaseException:  # noqa: BLE001
                    pass
            _exit(0)
        _interrupts.take_back_sigint()
        if memory_limit_mb and outcome["status"] == "error" and (
            outcome["excName"] == "MemoryError" or outcome["message"].startswith("OSError: " + _ENOMEM_TEXT)
        ):
            # Most likely the limit rather than the machine: say so, so the code's author knows what bounds it.
            outcome["message"] += " (this session's memory limit is %d MB)" % memory_limit_mb
        if _interrupts.interrupted or outcome["status"] == "interrupted":
            # A run stopped for taking too long (or asked to stop) leaves nothing running: every process it
            # started ends, setsid ones and zombies included. Processes earlier runs started are kept, as
            # they are after a run that ends by itself: a server started in one cell serves the next.
            _processes.end_below(_session_root, keep={_DRIVER_PID} | _multiprocessing_helpers(), since=started)
        # After the user's SIGINT handler is put away: drawing figures is the driver's work, not the cell's.
        try:
            displays.end_run()
        except BaseException as exc:  # noqa: BLE001 - a patched or broken plotting library
            streams.stderr.write("[code-mode] the run's figures could not be shown: %s\n" % _unreported(exc)["message"])
        streams.stdout.finish_run()
        streams.stderr.finish_run()
        raw_markers = streams.mark_end_of_run(marker)
        _writer.send({"type": "result", "id": request.get("id"), "outcome": _frames.bounded_outcome(outcome), "rawMarkers": raw_markers})


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        # A driver failure is reported on the real stderr, where the engine reads why a driver died.
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        raise
