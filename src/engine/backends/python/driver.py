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
"""
import sys

# Checked before anything newer is imported, so an old interpreter says why it cannot serve.
if sys.version_info < (3, 8):
    sys.stderr.write("the code-mode driver needs Python 3.8 or newer; %s is Python %s\n" % (sys.executable, sys.version.split()[0]))
    sys.exit(1)

import _signal
import _thread
import builtins
import codecs
import collections
import errno
import faulthandler
import importlib.util
import io
import itertools
import json
import os
import select
import signal
import struct
import threading
import types

try:
    import fcntl
    import termios

    _OUTQ_REQUEST = termios.TIOCOUTQ
    _ioctl = fcntl.ioctl
except (ImportError, AttributeError):  # not a POSIX system with TIOCOUTQ: always write markers
    _ioctl = None

# ---- the driver's own references ---------------------------------------------------------------------
# User code runs in this process and may replace anything it can reach: builtins (str, len, open), module
# attributes (os.write, os.getpid, json.loads, signal.signal), sys.stdout. The driver must go on serving
# whatever a run did, so it takes what it needs now, before any user code, and never looks those names up
# again. Functions defined below look builtins up in this copy, not in the builtins module.
__builtins__ = dict(vars(builtins))

_write = os.write
_read = os.read
_close = os.close
_dup = os.dup
_dup2 = os.dup2
_fstat = os.fstat
_getpid = os.getpid
_getpgrp = os.getpgrp
_killpg = os.killpg
_kill = os.kill
_exit = os._exit
_set_inheritable = os.set_inheritable
_urandom = os.urandom
_open = io.open
_spec_from_file_location = importlib.util.spec_from_file_location
_select = select.select
_poll = select.poll
_POLL_EVENTS = getattr(select, "POLLRDHUP", 0) | select.POLLHUP
_get_ident = _thread.get_ident
_signal_handler = _signal.signal
# signal.getsignal converts its answer to an enum the slow way (a caught ValueError for a Python handler);
# the C function answers in a fraction of the time, and the driver asks after every run.
_getsignal = _signal.getsignal
_pthread_sigmask = _signal.pthread_sigmask
_SIGINT = int(signal.SIGINT)
_SIGKILL = int(signal.SIGKILL)
_SIG_BLOCK = signal.SIG_BLOCK
_default_int_handler = signal.default_int_handler
_deque = collections.deque
_RLock = _thread.RLock
_sys_modules = sys.modules
_type_name = type.__dict__["__name__"].__get__
_exact_str = str.__str__
_ENOMEM_TEXT = "[Errno %d]" % errno.ENOMEM

_HEADER = struct.Struct(">I")
_INT = struct.Struct("i")


def _json_codec():
    """An encoder and a decoder built once, from the json package's parts as they are now: json.dumps and
    friends look up module globals (c_make_encoder, encode_basestring_ascii) on every call."""
    from json import decoder, encoder

    def unserializable(value):
        raise TypeError("Object of type %s is not JSON serializable" % type(value).__name__)

    make_c_encoder = encoder.c_make_encoder
    if make_c_encoder is not None:
        escape = encoder.encode_basestring_ascii

        def encode(value):
            # A fresh one per message, as json.dumps makes: its record of containers being encoded (which
            # refuses circular references) must not outlive a message that failed half-way.
            return "".join(make_c_encoder({}, unserializable, escape, None, ":", ",", False, False, True)(value, 0))
    else:  # no C accelerator: the pure-Python encoder, which binds what it uses when it is made
        make_encoder = encoder._make_iterencode
        escape = encoder.py_encode_basestring_ascii
        float_text = float.__repr__

        def encode(value):
            return "".join(make_encoder({}, unserializable, escape, None, float_text, ":", ",", False, False, True)(value, 0))

    # The scanner alone: JSONDecoder.decode is Python code that finds len() and friends in the builtins module.
    scan = decoder.JSONDecoder().scan_once

    def decode(text):
        try:
            value, end = scan(text, 0)
        except StopIteration:
            raise ValueError("not a JSON value") from None
        if end != len(text):
            raise ValueError("extra data after a JSON value")
        return value

    return encode, decode


_encode_json, _decode_json = _json_codec()
# Frames the engine sends: DEFAULT_MAX_FRAME_BYTES in framing.ts.
_MAX_REQUEST_FRAME_BYTES = 64 * 1024 * 1024
# Frames this driver sends: MAX_FRAME_FROM_INTERPRETER_BYTES in framing.ts. The engine ends a driver that sends a
# larger one, so output is split, displays and outcomes are cut to fit, and a host call too large is refused here.
_MAX_EVENT_FRAME_BYTES = 8 * 1024 * 1024
_DEFAULT_OUTPUT_CAP = 64 * 1024
# A frame's JSON may take 12 bytes per character (an escaped surrogate pair); this keeps every output frame within
# 6 MiB, below the frame limit.
_MAX_CHUNK_CHARS = 1 << 19
# An outcome's message, and its traceback, as sent (head and tail kept): at most 1.5 MiB each as JSON.
_MAX_ERROR_TEXT_CHARS = 128 * 1024
# Room in a display's frame for all but its data.
_DISPLAY_ENVELOPE_BYTES = 16 * 1024
# The repr beside a rich form of a last expression's value (MAX_RESULT_TEXT_CHARS in displays.py).
_MAX_RESULT_TEXT_CHARS = 64 * 1024
# Output without a newline is still sent once this much piles up, so a long line never waits for the run's end.
_PENDING_SEND_CHARS = 8192

_MAIN_THREAD = threading.get_ident()
# Set once main() knows which process the driver is: the one the engine started, or the reaper's child.
_DRIVER_PID = None
# The top of the session's process tree: the reaper, else the driver.
_session_root = None
_processes = None

# ---- interrupts ------------------------------------------------------------------------------------------
# SIGINT becomes KeyboardInterrupt only while user code runs, and never inside a "critical" section (writing
# a frame, consuming bytes of the request pipe): an exception there would leave the frame stream out of step.
# An interrupt that lands in one is raised when the section ends.

_user_code_running = False
_critical_depth = 0
_interrupt_pending = False
# This run was interrupted (a timeout, a cancel, the person), even if its code went on after the interrupt.
_interrupted = False


def _on_sigint(signum, frame):
    global _interrupt_pending, _interrupted
    if not _user_code_running:
        return  # between runs a late interrupt must not kill the driver
    _interrupted = True
    if _critical_depth:
        _interrupt_pending = True
        return
    raise KeyboardInterrupt


def _enter_critical():
    global _critical_depth
    if _get_ident() == _MAIN_THREAD:  # signal handlers only ever run in the main thread
        _critical_depth += 1


def _leave_critical():
    global _critical_depth, _interrupt_pending
    if _get_ident() != _MAIN_THREAD:
        return
    if _critical_depth == 1 and _interrupt_pending:
        _interrupt_pending = False
        _critical_depth = 0
        raise KeyboardInterrupt
    _critical_depth -= 1


# The handler user code installed (signal.signal in a cell), reinstated for each run so cells behave as in
# a plain interpreter, while the driver's own handler guards the time between runs.
_user_sigint = None


def _lend_sigint_to_user():
    if _user_sigint is not None:
        _signal_handler(_SIGINT, _user_sigint)


def _take_back_sigint():
    global _user_sigint
    current = _getsignal(_SIGINT)
    # None is a handler installed from C, which Python cannot reinstall; default_int_handler does what the
    # driver's own does, without its care for frames. Both mean: use the driver's.
    _user_sigint = None if current is None or current is _on_sigint or current is _default_int_handler else current
    if current is not _on_sigint:
        _signal_handler(_SIGINT, _on_sigint)


# ---- frames ----------------------------------------------------------------------------------------------


# Where the driver says what went wrong on its side: a copy of the stderr pipe the engine gave it, out of
# user code's reach (set in main).
_report_fd = 2


def _report(text):
    try:
        _write_all(_report_fd, ("code-mode driver: %s\n" % text).encode("utf-8", "backslashreplace"))
    except BaseException:  # noqa: BLE001 - nothing is left to tell
        pass


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[_write(fd, view):]


def _engine_gone():
    # Nobody is left to read results: end the driver and everything the session started, setsid children
    # included; the group is the session's own when the engine started it (it leads its own group).
    try:
        _processes.kill_below(_session_root, keep=(_getpid(),))
        if _getpgrp() == _session_root:
            _killpg(_session_root, _SIGKILL)
    finally:
        _exit(1)


class _FrameWriter:
    def __init__(self, fd):
        self._fd = fd
        self._lock = _RLock()
        self._queue = _deque()
        self._writing = False

    def send(self, message):
        body = _encode_json(message).encode("ascii")
        if len(body) > _MAX_EVENT_FRAME_BYTES:
            raise ValueError("message of %d bytes exceeds the frame limit of %d bytes" % (len(body), _MAX_EVENT_FRAME_BYTES))
        frame = _HEADER.pack(len(body)) + body
        _enter_critical()
        try:
            with self._lock:
                self._queue.append(frame)
                if self._writing:
                    # Re-entered in the same thread mid-write (a finalizer or signal handler that prints):
                    # the outer call sends this frame after its own, so frames never interleave.
                    return
                self._writing = True
                try:
                    while self._queue:
                        _write_all(self._fd, self._queue.popleft())
                finally:
                    self._writing = False
        finally:
            _leave_critical()


class _FrameReader:
    def __init__(self, fd):
        self._fd = fd
        self._buffer = bytearray()

    def read(self, interruptible):
        """The next message. With `interruptible`, KeyboardInterrupt may end the wait without losing bytes."""
        while True:
            if len(self._buffer) >= _HEADER.size:
                (length,) = _HEADER.unpack_from(self._buffer)
                if length > _MAX_REQUEST_FRAME_BYTES:
                    _report("request frame of %d bytes exceeds the limit" % length)
                    _engine_gone()
                end = _HEADER.size + length
                if len(self._buffer) >= end:
                    body = bytes(self._buffer[_HEADER.size:end])
                    del self._buffer[:end]
                    return _decode_json(body.decode("utf-8"))
            if interruptible:
                # The wait happens here, where an interrupt consumes nothing; the read below cannot block.
                _select([self._fd], [], [])
            _enter_critical()
            try:
                data = _read(self._fd, 1 << 16)
                if not data:
                    _engine_gone()
                self._buffer += data
            finally:
                _leave_critical()


# ---- output ----------------------------------------------------------------------------------------------


def _utf8_len(text):
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _utf8_head(text, limit):
    """The longest prefix of `text` whose UTF-8 form fits in `limit` bytes, never splitting a character."""
    if text.isascii():
        return text[:limit]
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    cut = limit
    while cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return data[:cut].decode("utf-8", "surrogatepass")


def _utf8_tail(text, limit):
    """The longest suffix of `text` whose UTF-8 form fits in `limit` bytes, never splitting a character."""
    if limit <= 0:
        return ""
    if text.isascii():
        return text[-limit:]
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    cut = len(data) - limit
    while cut < len(data) and (data[cut] & 0xC0) == 0x80:
        cut += 1
    return data[cut:].decode("utf-8", "surrogatepass")


class _RunStream(io.TextIOBase):
    """sys.stdout / sys.stderr while the driver runs.

    Text is sent as event frames as it is produced: on each newline, on flush, when a long line piles up,
    and at the end of the run. Per run, at most half the output cap is sent live; after that only the last
    half-cap is kept and sent at the end, after a frame saying how much was dropped, so a flood of output
    costs neither the pipe nor the engine more than the cap.
    """

    def __init__(self, kind, fd, writer):
        super().__init__()
        self._kind = kind
        self._fd = fd
        self._writer = writer
        self._lock = _RLock()
        self._pending = []
        self._pending_chars = 0
        self._binary = None
        self._limit(_DEFAULT_OUTPUT_CAP)

    def _limit(self, cap):
        self._cap = cap
        self._live_left = cap // 2
        self._tail_cap = cap - cap // 2
        self._tail = _deque()
        self._tail_bytes = 0
        self._dropped = 0

    # -- the driver's side

    def begin_run(self, cap):
        with self._lock:
            self._send_pending()
            self._limit(cap)

    def finish_run(self):
        """Sends what is still buffered, then the kept tail; output after this counts toward the next run."""
        _enter_critical()
        try:
            with self._lock:
                self._send_pending()
                if self._tail:
                    text = "".join(piece for piece, _ in self._tail)
                    if self._tail_bytes > self._tail_cap:
                        kept = _utf8_tail(text, self._tail_cap)
                        self._dropped += self._tail_bytes - _utf8_len(kept)
                        text = kept
                    if self._dropped:
                        self._writer.send({"type": "dropped", "stream": self._kind, "bytes": self._dropped})
                    self._send(text)
                self._limit(self._cap)
        finally:
            _leave_critical()

    # -- the file API user code sees

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "strict"

    @property
    def buffer(self):
        if self._binary is None:
            self._binary = _BinaryStream(self)
        return self._binary

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        # Subprocesses handed sys.stdout write to the real pipe, which the engine captures as well.
        return self._fd

    def reconfigure(self, **_options):
        # Scripts call sys.stdout.reconfigure(encoding="utf-8") to be safe on Windows; this stream already
        # carries text losslessly, so there is nothing to change.
        pass

    def write(self, text):
        if not issubclass(type(text), str):
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        # An exact copy: no method of a str subclass runs while the stream holds the text.
        text = _exact_str(text)
        if text:
            _enter_critical()
            try:
                with self._lock:
                    self._accept(text)
            finally:
                _leave_critical()
        return len(text)

    def flush(self):
        _enter_critical()
        try:
            with self._lock:
                self._send_pending()
        finally:
            _leave_critical()

    # -- internals, called with the lock held

    def _accept(self, text):
        size = _utf8_len(text)
        if size <= self._live_left:
            self._live_left -= size
            self._pending.append(text)
            self._pending_chars += len(text)
            if "\n" in text or self._pending_chars >= _PENDING_SEND_CHARS:
                self._send_pending()
            return
        if self._live_left > 0:
            head = _utf8_head(text, self._live_left)
            self._live_left = 0
            self._pending.append(head)
            self._send_pending()
            text = text[len(head):]
            size = _utf8_len(text)
        if size > self._tail_cap:
            kept = _utf8_tail(text, self._tail_cap)
            self._dropped += size - _utf8_len(kept)
            text, size = kept, _utf8_len(kept)
        self._tail.append((text, size))
        self._tail_bytes += size
        while self._tail and self._tail_bytes - self._tail[0][1] >= self._tail_cap:
            _, first = self._tail.popleft()
            self._tail_bytes -= first
            self._dropped += first

    def _send_pending(self):
        if not self._pending:
            return
        # Swap before sending: a finalizer that prints during the send appends to the fresh list.
        pending, self._pending = self._pending, []
        self._pending_chars = 0
        self._send("".join(pending))

    def _send(self, text):
        for start in range(0, len(text), _MAX_CHUNK_CHARS):
            self._writer.send({"type": self._kind, "text": text[start:start + _MAX_CHUNK_CHARS]})


class _BinaryStream(io.RawIOBase):
    """sys.stdout.buffer: bytes written past text mode, decoded as UTF-8 into the text stream."""

    def __init__(self, text_stream):
        super().__init__()
        self._text = text_stream
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def writable(self):
        return True

    def fileno(self):
        return self._text.fileno()

    def write(self, data):
        self._text.write(self._decoder.decode(bytes(data)))
        return len(data)

    def flush(self):
        self._text.flush()


def _file_identity(fd):
    try:
        status = _fstat(fd)
    except OSError:
        return None  # closed
    return status.st_dev, status.st_ino


class _StandardStreams:
    """The session's fds 0-2 and sys.std* objects, put back before every run.

    A run may close or replace them (os.close(1), os.dup2 onto 2, sys.stdout = None, sys.__stderr__.close()),
    and nothing after it would print otherwise. Within a run they are the code's to redirect (e.g.
    contextlib.redirect_stdout); the next run starts with the session's own again.
    """

    _MODES = ("r", "w", "w")
    _FDS = (0, 1, 2)

    def __init__(self, writer):
        self._writer = writer
        # Private copies of the pipes the engine gave as fds 0-2, out of user code's reach. They also carry
        # the end-of-run markers, whatever a run did to fds 1 and 2.
        self.saved_fds = tuple(_dup(fd) for fd in self._FDS)
        self._identities = tuple(_file_identity(fd) for fd in self.saved_fds)
        self._originals = [sys.__stdin__, sys.__stdout__, sys.__stderr__]
        self.stdout = _RunStream("stdout", 1, writer)
        self.stderr = _RunStream("stderr", 2, writer)

    def restore(self):
        originals = self._originals
        for fd in self._FDS:
            if _file_identity(fd) != self._identities[fd]:
                _dup2(self.saved_fds[fd], fd)
            if originals[fd] is None or originals[fd].closed:
                # The standard streams never own their fd, so closing one leaves the fd open to wrap again.
                originals[fd] = _open(fd, self._MODES[fd], encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = originals
        if self.stdout.closed:
            self.stdout = _RunStream("stdout", 1, self._writer)
        if self.stderr.closed:
            self.stderr = _RunStream("stderr", 2, self._writer)
        sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, self.stdout, self.stderr


# ---- host calls ------------------------------------------------------------------------------------------


class HostCallError(Exception):
    """The host rejected a call, or the call could not be made."""


HostCallError.__module__ = "_code_mode_host"
_call_ids = itertools.count(1)


def call(method, params=None):
    """Calls `method` on the host with JSON-serializable `params`; returns the host's JSON result.

    Only from the main thread of the session's interpreter while a cell runs: replies arrive on the pipe
    the driver reads requests from, and only the main thread may read it.
    """
    if not isinstance(method, str):
        raise TypeError("method must be a str, not %s" % type(method).__name__)
    if _get_ident() != _MAIN_THREAD or _getpid() != _DRIVER_PID:
        raise HostCallError("host calls can only be made from the main thread of the session's interpreter")
    if not _user_code_running:
        raise HostCallError("host calls can only be made while a cell runs")
    call_id = next(_call_ids)
    message = {"type": "hostCall", "callId": call_id, "method": method, "params": params}
    if len(_encode_json(message)) > _MAX_EVENT_FRAME_BYTES:
        raise HostCallError("the parameters of this host call are too large to send (at most %d MB as JSON)" % (_MAX_EVENT_FRAME_BYTES // (1024 * 1024)))
    _writer.send(message)
    while True:
        message = _reader.read(interruptible=True)
        if message.get("type") == "hostResult" and message.get("callId") == call_id:
            if message.get("ok"):
                return message.get("result")
            raise HostCallError(message.get("error") or "host call %r failed" % method)
        # Anything else is the late reply to a call abandoned by an interrupt.


def _host_module():
    module = types.ModuleType("_code_mode_host", "Calls from Python into the code-mode host (the tool bridge).")
    module.call = call
    module.HostCallError = HostCallError
    return module


# ---- the driver ------------------------------------------------------------------------------------------

_reader = None
_writer = None


_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_shared(name, filename):
    # Loaded under a private name rather than put on sys.path, so user code never imports driver files.
    spec = importlib.util.spec_from_file_location(name, os.path.join(_HERE, filename))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _send_display(display):
    # A forked child has closed the frame pipe: its displays have nowhere to go.
    if _getpid() == _DRIVER_PID:
        _writer.send({"type": "display", "display": _fit_display(display, _MAX_EVENT_FRAME_BYTES - _DISPLAY_ENVELOPE_BYTES)})


def _fit_display(display, budget):
    """`display` with its data within `budget` bytes as JSON: text cut, anything else replaced by a note.

    displays.py bounds the data's size already, but escapes make JSON up to twelve bytes per character."""
    mime = str(display.get("mime"))[:200]
    data = display.get("data")
    data = data if isinstance(data, str) else str(data)
    title = display.get("title")
    fitted = {"mime": mime, "data": data}
    if title:
        fitted["title"] = str(title)[:1000]
    if display.get("result") is True:
        # The value of the run's last expression; its repr beside a richer form is bounded by displays.py.
        fitted["result"] = True
        text = display.get("text")
        if isinstance(text, str):
            fitted["text"] = text[:_MAX_RESULT_TEXT_CHARS]
            budget -= len(_encode_json(fitted["text"]))
    size = len(_encode_json(data))
    if size <= budget:
        return fitted
    original_size, original_chars = size, len(data)
    if mime.startswith("text/") and mime != "text/html":
        # Cut in proportion until it fits; uneven escaping may take a few rounds.
        for _ in range(8):
            data = data[:len(data) * (budget - 256) // size]
            size = len(_encode_json(data)) + 128
            if size <= budget:
                fitted["data"] = "%s\n... [%d characters not shown: a display's frame carries at most %d MB]" % (
                    data, original_chars - len(data), budget // (1024 * 1024))
                return fitted
    fitted["mime"] = "text/plain"
    fitted["data"] = "%s of %.1f MB not shown: a display carries at most 5 MB" % (mime, original_size / 1e6)
    return fitted


def _head_and_tail(text, limit):
    if not isinstance(text, str) or len(text) <= limit:
        return text
    half = (limit - 80) // 2
    return "%s\n... [%d characters not shown] ...\n%s" % (text[:half], len(text) - 2 * half, text[-half:])


def _bounded_outcome(outcome):
    """The outcome with its message and traceback within _MAX_ERROR_TEXT_CHARS each, so its frame fits."""
    for key in ("message", "traceback"):
        if key in outcome:
            outcome[key] = _head_and_tail(outcome[key], _MAX_ERROR_TEXT_CHARS)
    return outcome


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


def _engine_has_read_all(fd):
    # For the engine's socket pipes, TIOCOUTQ (SIOCOUTQ) counts what was written through the socket and not
    # yet read, by anyone holding it (subprocesses too). Zero means the engine already took in every raw
    # byte of this run, so it needs no marker to know the raw output is complete: the usual case costs one
    # ioctl instead of a write and a wake-up of the engine.
    if _ioctl is None:
        return False
    try:
        return _INT.unpack(_ioctl(fd, _OUTQ_REQUEST, b"\0\0\0\0"))[0] == 0
    except OSError:
        return False


def _mark_end_of_run(fd, marker):
    """Whether the engine must wait for `marker` on this pipe before the run's raw output is complete."""
    if _engine_has_read_all(fd):
        return False
    try:
        _write_all(fd, marker)
        return True
    except OSError:
        return False


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
    global _reader, _writer, _user_code_running, _interrupt_pending, _interrupted, _DRIVER_PID, _session_root, _processes
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
    _reader = _FrameReader(request_fd)
    _writer = _FrameWriter(event_fd)
    marker = ("\0code-mode-run-end-%s\0" % os.urandom(12).hex()).encode("ascii")

    run_cell = _load_shared("_code_mode_cell", "cell.py").run_cell
    displays = _load_shared("_code_mode_displays", "displays.py")
    displays.install(_send_display)
    show_result = displays.show_result
    streams = _StandardStreams(_writer)
    global _report_fd
    _report_fd = streams.saved_fds[2]
    streams.restore()
    faulthandler.enable(file=sys.__stderr__)
    signal.signal(signal.SIGINT, _on_sigint)

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
    sys.modules["_code_mode_host"] = _host_module()
    host_stdin = _load_shared("_code_mode_input", "user_input.py").install(call, HostCallError)
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
        request = _reader.read(interruptible=False)
        if request.get("type") != "run":
            continue  # a late hostResult for a call abandoned by an interrupt
        cells += 1
        cap = request.get("outputCapBytes")
        if not isinstance(cap, int) or cap < 0:
            cap = _DEFAULT_OUTPUT_CAP
        streams.restore()
        sys.stdin = host_stdin
        streams.stdout.begin_run(cap)
        streams.stderr.begin_run(cap)
        displays.begin_run()
        _lend_sigint_to_user()
        _interrupted = False
        started = _processes.mark()
        try:
            _user_code_running = True
            show = show_result if request.get("echoLastExpression") is not False else None
            outcome = run_cell(request["code"], user_main.__dict__, "<cell %d>" % cells, request.get("script"), show)
            _user_code_running = False
        except KeyboardInterrupt:
            # Raised outside the user's frames (during the final flush, or a deferred interrupt).
            _user_code_running = False
            outcome = {"status": "interrupted"}
        except BaseException as exc:  # noqa: BLE001 - run_cell reports whatever user code does; this is a last resort
            _user_code_running = False
            outcome = _unreported(exc)
        if _getpid() != _DRIVER_PID:
            # A child forked by the cell returned from it: the parent owns the session.
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except BaseException:  # noqa: BLE001
                    pass
            _exit(0)
        _interrupt_pending = False
        _take_back_sigint()
        if memory_limit_mb and outcome["status"] == "error" and (
            outcome["excName"] == "MemoryError" or outcome["message"].startswith("OSError: " + _ENOMEM_TEXT)
        ):
            # Most likely the limit rather than the machine: say so, so the code's author knows what bounds it.
            outcome["message"] += " (this session's memory limit is %d MB)" % memory_limit_mb
        if _interrupted or outcome["status"] == "interrupted":
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
        raw_markers = [_mark_end_of_run(fd, marker) for fd in streams.saved_fds[1:]]
        _writer.send({"type": "result", "id": request.get("id"), "outcome": _bounded_outcome(outcome), "rawMarkers": raw_markers})


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        # A driver failure is reported on the real stderr, where the engine reads why a driver died.
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        raise
