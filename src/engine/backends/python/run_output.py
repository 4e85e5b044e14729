"""The output of runs in the workspace-Python driver (driver.py loads this under the private name
_code_mode_run_output): sys.stdout and sys.stderr as event frames within each run's output cap, the session's
fds 0-2 put back before every run, and the markers that end a run's raw output on the real pipes.
"""
import _thread
import builtins
import codecs
import collections
import io
import os
import struct
import sys

# Loaded by driver.py before this module, under their private names: never looked for on sys.path.
import _code_mode_frames as _frames
import _code_mode_interrupts as _interrupts

try:
    import fcntl
    import termios

    _OUTQ_REQUEST = termios.TIOCOUTQ
    _ioctl = fcntl.ioctl
except (ImportError, AttributeError):  # not a POSIX system with TIOCOUTQ: always write markers
    _ioctl = None

# As in driver.py: this module's own references, taken before any user code ran.
__builtins__ = dict(vars(builtins))

_dup = os.dup
_dup2 = os.dup2
_fstat = os.fstat
_open = io.open
_deque = collections.deque
_RLock = _thread.RLock
_exact_str = str.__str__
_enter_critical = _interrupts.enter_critical
_leave_critical = _interrupts.leave_critical
_write_all = _frames.write_all

_INT = struct.Struct("i")

DEFAULT_OUTPUT_CAP = 64 * 1024
# A frame's JSON may take 12 bytes per character (an escaped surrogate pair); this keeps every output frame within
# 6 MiB, below the frame limit.
_MAX_CHUNK_CHARS = 1 << 19
# Output without a newline is still sent once this much piles up, so a long line never waits for the run's end.
_PENDING_SEND_CHARS = 8192


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
        self._limit(DEFAULT_OUTPUT_CAP)

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


class StandardStreams:
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

    def mark_end_of_run(self, marker):
        """For stdout and stderr: whether the engine must wait for `marker` on that pipe before the run's raw
        output is complete."""
        return [_mark_end_of_run(fd, marker) for fd in self.saved_fds[1:]]


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
    if _engine_has_read_all(fd):
        return False
    try:
        _write_all(fd, marker)
        return True
    except OSError:
        return False
