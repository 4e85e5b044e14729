"""The driver's frames to and from the engine (driver.py loads this under the private name _code_mode_frames).

Length-prefixed JSON (src/engine/framing.ts), within the limits both sides keep: a frame that breaks them
ends the session, so what the driver sends is split or cut to fit before it is framed.
"""
import _thread
import builtins
import collections
import os
import select
import struct

# Loaded by driver.py before this module, under its private name: never looked for on sys.path.
import _code_mode_interrupts as _interrupts

# As in driver.py: this module's own references, taken before any user code ran.
__builtins__ = dict(vars(builtins))

_write = os.write
_read = os.read
_select = select.select
_deque = collections.deque
_RLock = _thread.RLock
_enter_critical = _interrupts.enter_critical
_leave_critical = _interrupts.leave_critical

_HEADER = struct.Struct(">I")


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


encode_json, _decode_json = _json_codec()
# Frames the engine sends: DEFAULT_MAX_FRAME_BYTES in framing.ts.
_MAX_REQUEST_FRAME_BYTES = 64 * 1024 * 1024
# Frames this driver sends: MAX_FRAME_FROM_INTERPRETER_BYTES in framing.ts. The engine ends a driver that sends a
# larger one, so output is split (run_output.py), displays and outcomes are cut to fit, and a host call too large is
# refused (host_calls.py).
MAX_EVENT_FRAME_BYTES = 8 * 1024 * 1024
# An outcome's message, and its traceback, as sent (head and tail kept): at most 1.5 MiB each as JSON.
_MAX_ERROR_TEXT_CHARS = 128 * 1024
# Room in a display's frame for all but its data.
_DISPLAY_ENVELOPE_BYTES = 16 * 1024
# The repr beside a rich form of a last expression's value (MAX_RESULT_TEXT_CHARS in displays.py).
_MAX_RESULT_TEXT_CHARS = 64 * 1024

# Where the driver says what went wrong on its side: a copy of the stderr pipe the engine gave it, out of
# user code's reach (see report_to).
_report_fd = 2


def report_to(fd):
    global _report_fd
    _report_fd = fd


def report(text):
    try:
        write_all(_report_fd, ("code-mode driver: %s\n" % text).encode("utf-8", "backslashreplace"))
    except BaseException:  # noqa: BLE001 - nothing is left to tell
        pass


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[_write(fd, view):]


class FrameWriter:
    def __init__(self, fd):
        self._fd = fd
        self._lock = _RLock()
        self._queue = _deque()
        self._writing = False

    def send(self, message):
        body = encode_json(message).encode("ascii")
        if len(body) > MAX_EVENT_FRAME_BYTES:
            raise ValueError("message of %d bytes exceeds the frame limit of %d bytes" % (len(body), MAX_EVENT_FRAME_BYTES))
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
                        write_all(self._fd, self._queue.popleft())
                finally:
                    self._writing = False
        finally:
            _leave_critical()


class FrameReader:
    def __init__(self, fd, engine_gone):
        self._fd = fd
        # Called when the engine can no longer be read from (it never returns).
        self._engine_gone = engine_gone
        self._buffer = bytearray()

    def read(self, interruptible):
        """The next message. With `interruptible`, KeyboardInterrupt may end the wait without losing bytes."""
        while True:
            if len(self._buffer) >= _HEADER.size:
                (length,) = _HEADER.unpack_from(self._buffer)
                if length > _MAX_REQUEST_FRAME_BYTES:
                    report("request frame of %d bytes exceeds the limit" % length)
                    self._engine_gone()
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
                    self._engine_gone()
                self._buffer += data
            finally:
                _leave_critical()


def fit_display(display):
    """`display` with its data within a display frame's budget as JSON: text cut, anything else replaced by a note.

    displays.py bounds the data's size already, but escapes make JSON up to twelve bytes per character."""
    budget = MAX_EVENT_FRAME_BYTES - _DISPLAY_ENVELOPE_BYTES
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
            budget -= len(encode_json(fitted["text"]))
    size = len(encode_json(data))
    if size <= budget:
        return fitted
    original_size, original_chars = size, len(data)
    if mime.startswith("text/") and mime != "text/html":
        # Cut in proportion until it fits; uneven escaping may take a few rounds.
        for _ in range(8):
            data = data[:len(data) * (budget - 256) // size]
            size = len(encode_json(data)) + 128
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


def bounded_outcome(outcome):
    """The outcome with its message and traceback within _MAX_ERROR_TEXT_CHARS each, so its frame fits."""
    for key in ("message", "traceback"):
        if key in outcome:
            outcome[key] = _head_and_tail(outcome[key], _MAX_ERROR_TEXT_CHARS)
    return outcome
