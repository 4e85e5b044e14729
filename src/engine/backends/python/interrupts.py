"""SIGINT in the workspace-Python driver (driver.py loads this under the private name _code_mode_interrupts).

SIGINT becomes KeyboardInterrupt only while user code runs, and never inside a "critical" section (writing
a frame, consuming bytes of the request pipe): an exception there would leave the frame stream out of step.
An interrupt that lands in one is raised when the section ends.
"""
import _signal
import _thread
import builtins
import signal

# As in driver.py: user code may replace builtins and module attributes, so this module takes its own
# references when it is loaded, before any user code, and never looks those names up again.
__builtins__ = dict(vars(builtins))

_get_ident = _thread.get_ident
_signal_handler = _signal.signal
# signal.getsignal converts its answer to an enum the slow way (a caught ValueError for a Python handler);
# the C function answers in a fraction of the time, and the driver asks after every run.
_getsignal = _signal.getsignal
_SIGINT = int(signal.SIGINT)
_default_int_handler = signal.default_int_handler

# Loaded by the driver's main thread, the only one signal handlers run in.
MAIN_THREAD = _get_ident()

# Set by the driver around the user's code.
user_code_running = False
_critical_depth = 0
_interrupt_pending = False
# This run was interrupted (a timeout, a cancel, the person), even if its code went on after the interrupt.
interrupted = False


def on_sigint(signum, frame):
    global _interrupt_pending, interrupted
    if not user_code_running:
        return  # between runs a late interrupt must not kill the driver
    interrupted = True
    if _critical_depth:
        _interrupt_pending = True
        return
    raise KeyboardInterrupt


def enter_critical():
    global _critical_depth
    if _get_ident() == MAIN_THREAD:  # signal handlers only ever run in the main thread
        _critical_depth += 1


def leave_critical():
    global _critical_depth, _interrupt_pending
    if _get_ident() != MAIN_THREAD:
        return
    if _critical_depth == 1 and _interrupt_pending:
        _interrupt_pending = False
        _critical_depth = 0
        raise KeyboardInterrupt
    _critical_depth -= 1


# The handler user code installed (signal.signal in a cell), reinstated for each run so cells behave as in
# a plain interpreter, while the driver's own handler guards the time between runs.
_user_sigint = None


def lend_sigint_to_user():
    """Before a run: not interrupted yet, and the user's handler in place if a cell installed one."""
    global interrupted
    interrupted = False
    if _user_sigint is not None:
        _signal_handler(_SIGINT, _user_sigint)


def take_back_sigint():
    """After a run: an interrupt deferred past its end is dropped, and the driver's handler is back."""
    global _user_sigint, _interrupt_pending
    _interrupt_pending = False
    current = _getsignal(_SIGINT)
    # None is a handler installed from C, which Python cannot reinstall; default_int_handler does what the
    # driver's own does, without its care for frames. Both mean: use the driver's.
    _user_sigint = None if current is None or current is on_sigint or current is _default_int_handler else current
    if current is not on_sigint:
        _signal_handler(_SIGINT, on_sigint)
