"""Per-instance setup of the Pyodide worker, run after the memory snapshot is restored.

JavaScript objects cannot be part of a snapshot, so everything that reaches back into the worker (host calls,
the interruptible sleep) is wired up here, on every fresh instance.

User code shares this interpreter and may replace what the harness would otherwise look up when a run ends:
`json.dumps`, `os.fstat`, `builtins.isinstance`. So everything called after install is taken here, before any
user code has run, and the harness's lookups of builtins go to a private copy of them (as in cell.py).
"""
import builtins
import errno
import importlib.util
import io
import json
import os
import sys
import time
import types

__builtins__ = dict(builtins.__dict__)

# Off sys.path: user code reaches these modules only by the names the finder below serves.
_SHIPPED_DIR = "/lib/code-mode"
_spec_from_file_location = importlib.util.spec_from_file_location
_join = os.path.join
# Whether an fd is open, at a tenth of os.fstat's cost (no stat result is built); raises OSError when it is not.
_fd_open = os.get_inheritable
_os_open = os.open
_dup2 = os.dup2
_close = os.close
_O_WRONLY = os.O_WRONLY
_open = io.open


def _unserializable(value):
    raise TypeError("Object of type %s is not JSON serializable" % type(value).__name__)


def _json_codec():
    """(encode, encode_strict, decode), made from the JSON accelerator's C functions: they look nothing up in
    the json module, nor in builtins, when called. Pure-Python json objects are the fallback where the C
    functions take other arguments."""
    fallback = (
        json.JSONEncoder(separators=(",", ":")).encode,
        json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode,
        json.JSONDecoder().decode,
    )
    try:
        from _json import encode_basestring_ascii, make_encoder, make_scanner

        scan = make_scanner(json.JSONDecoder())

        def encoder(allow_nan):
            def encode(value):
                # A new encoder each time: its record of the objects being encoded (for cycles) starts empty.
                return "".join(make_encoder({}, _unserializable, encode_basestring_ascii, None, ":", ",", False, False, allow_nan)(value, 0))

            return encode

        def decode(text):
            try:
                value, end = scan(text, 0)
            except StopIteration:
                raise ValueError("not JSON: %r" % text[:100]) from None
            if end != len(text):
                raise ValueError("extra data after the JSON value at %d" % end)
            return value

        encode, encode_strict = encoder(True), encoder(False)
        sample = {"a": [1, 2.5, None, True, "\u00e9"]}
        if decode(encode(sample)) != sample:
            return fallback
        return encode, encode_strict, decode
    except Exception:  # noqa: BLE001 - another Python's accelerator
        return fallback


_encode_json, _encode_json_strict, _decode_json = _json_codec()


def _quietly(function):
    """Harness work around a run that must not fail it: user code may have broken what it relies on."""
    try:
        function()
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - see above
        pass


def install(cell_code, shipped_json, js_host_call, js_sleep_ms, displays_code, js_display, scratch_dir, network_off_message, user_input_code):
    """Install the cell runner, `_code_mode_host`, the shipped modules (`code_mode`), the interruptible
    `time.sleep` and `display()`; return `run(source, filename, script_json, echo)`. The harness's modules arrive
    compiled (harnessCode.ts)."""
    cell = types.ModuleType("_code_mode_cell")
    exec(cell_code, cell.__dict__)
    sys.modules[cell.__name__] = cell

    displays = types.ModuleType("_code_mode_displays")
    exec(displays_code, displays.__dict__)
    sys.modules[displays.__name__] = displays
    displays.install(lambda display: js_display(_encode_json(display)))
    # Pyodide's own matplotlib backend draws into a browser page; there is none, figures come back as PNGs.
    os.environ.setdefault("MPLBACKEND", "Agg")
    if scratch_dir is not None:
        os.environ["CODE_MODE_SCRATCH"] = scratch_dir

    host = _host_module(js_host_call)
    sys.modules["_code_mode_host"] = host
    user_input = types.ModuleType("_code_mode_input")
    exec(user_input_code, user_input.__dict__)
    host_stdin = user_input.install(host.call, host.HostCallError)
    time.sleep = _interruptible_sleep(js_sleep_ms)
    if network_off_message is not None:
        _refuse_sockets(network_off_message)

    # Real files (in Pyodide's in-memory file system), so tracebacks, inspect and help() show their source.
    os.makedirs(_SHIPPED_DIR, exist_ok=True)
    shipped = _decode_json(shipped_json)
    for name, source in shipped.items():
        with open(os.path.join(_SHIPPED_DIR, name + ".py"), "w", encoding="utf-8") as file:
            file.write(source)
    sys.meta_path.append(_ShippedModules(tuple(shipped)))

    # A real module object as __main__, so pickle, dataclasses and typing find what the cells define.
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    namespace = main.__dict__
    # The interpreter's builtins, which user code may change, as in any __main__ (not the harness's copy).
    namespace["__builtins__"] = builtins
    run_cell = cell.run_cell
    begin_run, end_run, show_result = displays.begin_run, displays.end_run, displays.show_result
    streams = _StandardStreams(host_stdin)

    def run(source, filename, script_json, echo):
        _quietly(streams.restore)
        _quietly(begin_run)
        try:
            script = None if script_json is None else _decode_json(script_json)
            outcome = run_cell(source, namespace, filename, script, show_result if echo else None)
        finally:
            _quietly(end_run)
        return _encode_json(outcome)

    return run


class _ShippedModules:
    """Serves the modules shipped for user code (`from code_mode import tools`), as the CPython driver does.

    Consulted after the standard finders: as with any module, one of the user's own by the same name comes first.
    """

    def __init__(self, names):
        self._names = names

    def find_spec(self, name, path=None, target=None):
        if name not in self._names:
            return None
        return _spec_from_file_location(name, _join(_SHIPPED_DIR, name + ".py"))


def _host_module(js_host_call):
    module = types.ModuleType("_code_mode_host", "Synchronous calls from Python into the code-mode host.")

    class HostCallError(Exception):
        """The host rejected a call; the message is the host's error text."""

    HostCallError.__module__ = module.__name__

    def call(method, params=None):
        """Call `method` on the host with JSON-compatible `params`; return its JSON-compatible result."""
        if not isinstance(method, str):
            raise TypeError(f"method must be a str, not {type(method).__name__}")
        # JSON both ways keeps the contract exact: None/null, no NaN, and a clear error for anything else.
        ok, value = _decode_json(js_host_call(method, _encode_json_strict(params)))
        if not ok:
            raise HostCallError(value)
        return value

    module.HostCallError = HostCallError
    module.call = call
    return module


def _interruptible_sleep(js_sleep_ms):
    # Pyodide's own time.sleep busy-waits in C, which neither KeyboardInterrupt nor the CPU budget survives.
    original = time.sleep

    def sleep(secs):
        if isinstance(secs, (str, bytes, bytearray)):
            raise TypeError(f"'{type(secs).__name__}' object cannot be interpreted as an integer or float")
        secs = float(secs)
        if secs != secs or secs < 0:
            raise ValueError("sleep length must be non-negative")
        js_sleep_ms(secs * 1000.0)

    sleep.__doc__ = original.__doc__
    sleep.__module__ = "time"
    return sleep


def _refuse_sockets(message):
    # The sandbox has no network either way (the process's network namespace is empty); this only turns the
    # bare "network unreachable" into an error that says which setting allows it.
    import socket

    def refuse(self, *args, **kwargs):
        raise PermissionError(errno.EACCES, message)

    socket.socket.__init__ = refuse
    socket.getaddrinfo = lambda *args, **kwargs: refuse(None)


class _StandardStreams:
    """The session's fds 1-2 and sys.std* objects (stdin asks the host: user_input.py), put back before every
    run, as the CPython driver does.

    A run may close or replace them (os.close(1), sys.stdout = None, sys.__stderr__.close()), and nothing after
    it would print otherwise. Within a run they are the code's to redirect; the next run starts with the
    session's own again. Pyodide's fds 1 and 2 are its /dev/stdout and /dev/stderr devices, which reach the
    worker's output hooks however often they are reopened.
    """

    _DEVICES = {1: "/dev/stdout", 2: "/dev/stderr"}

    def __init__(self, stdin):
        self._originals = {"stdout": sys.stdout, "stderr": sys.stderr}
        self._stdin = stdin

    def restore(self):
        sys.stdin = sys.__stdin__ = self._stdin
        for fd, device in self._DEVICES.items():
            try:
                _fd_open(fd)
            except OSError:
                reopened = _os_open(device, _O_WRONLY)
                if reopened != fd:
                    _dup2(reopened, fd)
                    _close(reopened)
        for name, fd in (("stdout", 1), ("stderr", 2)):
            original = self._originals[name]
            if original.closed:
                original = _open(fd, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)
                self._originals[name] = original
            setattr(sys, name, original)
            setattr(sys, "__%s__" % name, original)
