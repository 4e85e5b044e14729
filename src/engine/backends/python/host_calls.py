"""Calls from user code into the host (driver.py loads this under the private name _code_mode_host_calls).

User code reaches them through the module `_code_mode_host` (host_module): code_mode.py's tools, and input()
through user_input.py. A call is a hostCall frame out, and the matching hostResult frame back on the pipe the
driver reads requests from.
"""
import _thread
import builtins
import itertools
import os
import types

# Loaded by driver.py before this module, under their private names: never looked for on sys.path.
import _code_mode_frames as _frames
import _code_mode_interrupts as _interrupts

# As in driver.py: this module's own references, taken before any user code ran.
__builtins__ = dict(vars(builtins))

_getpid = os.getpid
_get_ident = _thread.get_ident
_encode_json = _frames.encode_json
_MAX_EVENT_FRAME_BYTES = _frames.MAX_EVENT_FRAME_BYTES

# Set by host_module, before user code runs.
_reader = None
_writer = None
_driver_pid = None


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
    if _get_ident() != _interrupts.MAIN_THREAD or _getpid() != _driver_pid:
        raise HostCallError("host calls can only be made from the main thread of the session's interpreter")
    if not _interrupts.user_code_running:
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


def host_module(reader, writer, driver_pid):
    """The module `_code_mode_host`, whose calls go over `reader` and `writer` from the driver's process only."""
    global _reader, _writer, _driver_pid
    _reader, _writer, _driver_pid = reader, writer, driver_pid
    module = types.ModuleType("_code_mode_host", "Calls from Python into the code-mode host (the tool bridge).")
    module.call = call
    module.HostCallError = HostCallError
    return module
