"""The engine's side inside a Jupyter kernel (ipykernel): runs each request as the other backends do.

Loaded once per kernel by the Jupyter backend (src/engine/backends/jupyter/supportCells.ts), as the module
`_code_mode_kernel`, with the sources the other backends share (cell.py, user_input.py, code_mode.py,
displays.py).

A run is the cell `__import__("_code_mode_kernel").run("<base64 JSON request>")`: no user text is ever
spliced into code. Its outcome comes back in the cell's execute_reply, as a payload of PAYLOAD_SOURCE, after the
run's output. Calls into the host (the code-mode tool bridge, input()) ask on the kernel's stdin channel with a
prompt that starts with this kernel's marker; the engine answers with the JSON reply. The stdin channel is
the one channel a busy kernel still reads, so calls are synchronous, as on the other backends.
"""
import base64
import builtins
import json
import sys
import threading
import types

PAYLOAD_SOURCE = "code-mode-outcome"
# Taken now: user code that replaces json.loads or base64.b64decode must not break the runs after it.
_dumps = json.dumps
_loads = json.loads
_b64decode = base64.b64decode

_marker = None
# The kernel's own sys.stdout and sys.stderr (ipykernel's streams to IOPub), put back before every run.
_streams = None
_cell = None
_user_input = None
_displays = None
_show_result = None
_cells = 0
_host_calls = 0
_MAIN_THREAD = threading.get_ident()


class HostCallError(Exception):
    """The host could not perform a call (unknown method, a tool failed)."""


HostCallError.__module__ = "_code_mode_host"


def _publish(value):
    """Hands `value` to the engine in this cell's execute_reply, as a payload (IPython's way for a cell to answer its
    requester alone): a message less per run than a display_data on IOPub, and nothing for other frontends to show."""
    from IPython import get_ipython

    get_ipython().payload_manager.write_payload({"source": PAYLOAD_SOURCE, "value": value})


def _load(name, source):
    module = types.ModuleType(name)
    module.__file__ = "<code-mode %s>" % name
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    sys.modules[name] = module
    return module


def setup(marker, sources, cwd=None, scratch=None):
    """Called once per kernel: `sources` are the shared modules' texts by name; the session starts in `cwd` when
    the kernel can enter that folder (a local server: the workspace), else in its own folder, and says so;
    CODE_MODE_SCRATCH names the session's scratch folder when the machine has it. Publishes the kernel's pid,
    its interpreter and that note."""
    import os

    global _marker, _cell, _user_input, _streams, _displays, _show_result
    _marker = marker
    _streams = (sys.stdout, sys.stderr)
    note = None
    if cwd:
        try:
            os.chdir(cwd)
        except OSError as exc:
            # A hub's kernel runs as another user, often on another machine, than the editor with the workspace.
            note = "the workspace folder %s is not usable by the kernel (%s: %s); it runs in its own folder %s" % (
                cwd, type(exc).__name__, exc.strerror or exc, os.getcwd())
    if scratch and os.path.isdir(scratch):
        os.environ["CODE_MODE_SCRATCH"] = scratch
    host = types.ModuleType("_code_mode_host", "Calls from Python into the code-mode host (the tool bridge).")
    host.call = call
    host.HostCallError = HostCallError
    sys.modules["_code_mode_host"] = host
    _cell = _load("_code_mode_cell", sources["cell"])
    _user_input = _load("_code_mode_input", sources["user_input"])
    _load("code_mode", sources["code_mode"])
    _displays = _load("_code_mode_displays", sources["displays"])
    _displays.install(_show, builtin=False)
    _show_result = _displays.show_result
    _publish({"pid": os.getpid(), "executable": sys.executable, "note": note})


def _show(display):
    """A display of displays.py (display(), a figure) as IPython sends one: base64 for images. The value of the
    code's last expression goes as IPython's own is sent, an execute_result with its text/plain."""
    from IPython.display import publish_display_data

    bundle = {display["mime"]: display["data"]}
    if display.get("result"):
        bundle.setdefault("text/plain", display.get("text", ""))
        if _send_execute_result(bundle):
            return
    publish_display_data(bundle)


def _send_execute_result(bundle):
    """Sends `bundle` as an execute_result through ipykernel's display hook, as IPython's sys.displayhook would
    (without its `;` check, which reads the history a silent cell is not in); False where the hook cannot."""
    from IPython import get_ipython

    hook = get_ipython().displayhook
    try:
        hook.start_displayhook()
        hook.write_output_prompt()
        hook.write_format_data(bundle, {})
        hook.finish_displayhook()
        return True
    except Exception:  # noqa: BLE001 - not ipykernel's hook: shown as a display instead
        return False


def _show_figures():
    """Shows the figures a run left open under a non-interactive matplotlib backend (matplotlib.use("Agg")), then
    closes them, as the other backends do; ipykernel's inline backend shows its own after the cell."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    try:
        from matplotlib.rcsetup import non_interactive_bk

        shown_here = pyplot.get_backend().lower() in non_interactive_bk
    except Exception:  # noqa: BLE001 - a patched or half-imported matplotlib must not break the run's result
        return
    if shown_here:
        _displays.end_run()


def call(method, params=None):
    """Asks the host and waits for its answer; raises HostCallError with the host's reason, and TypeError for
    params that are not JSON (before the host hears of the call), as on the other backends."""
    global _host_calls
    if threading.get_ident() != _MAIN_THREAD:
        raise HostCallError("host calls can only be made from the kernel's main thread while a cell runs")
    from IPython import get_ipython

    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        raise HostCallError("host calls need an ipykernel kernel")
    _host_calls += 1
    call_id = _host_calls
    question = _marker + _dumps({"id": call_id, "method": method, "params": params})
    while True:
        try:
            answer = kernel.raw_input(question)
        except Exception as exc:  # StdinNotImplementedError: not inside a run of the engine's
            raise HostCallError("host calls can only be made while a cell runs (%s)" % exc) from None
        reply = _loads(answer)
        # Another id: the late answer to a call an interrupt abandoned. Asked again, the host answers this
        # call from the one it already made (kernelInput.ts).
        if reply.get("id", call_id) == call_id:
            break
    if reply.get("ok"):
        return reply.get("result")
    raise HostCallError(reply.get("error") or "the host call failed")


def run(encoded):
    """Runs one request of the engine in the user's namespace and publishes its outcome."""
    global _cells
    from IPython import get_ipython

    request = _loads(_b64decode(encoded).decode("utf-8"))
    _cells += 1
    shell = get_ipython()
    # The engine sends its cells silent (no execute_input echoed on IOPub: a message less per run, and other
    # frontends of the kernel do not show the support cell), which makes IPython skip pre_run_cell and
    # post_run_cell: they are triggered here, for the user's code, so hooks such as autoreload run as for a typed cell.
    info = _execution_info(request["code"])
    if info is not None:
        shell.events.trigger("pre_run_cell", info)
    # ipykernel puts its own input() in place for every request; the engine's asks the same way on every backend.
    saved = (builtins.input, sys.stdin)
    sys.stdin = _user_input.install(call, HostCallError)
    _displays.begin_run()
    try:
        show = _show_result if request.get("echoLastExpression") is not False else None
        outcome = _cell.run_cell(request["code"], shell.user_ns, "<cell %d>" % _cells, request.get("script"), show)
    finally:
        builtins.input, sys.stdin = saved
        # What the cell did to the streams (None, a closed file) must not reach ipykernel, which flushes them
        # after every request and hangs on one it cannot flush; nor the next cell, as on the other backends.
        sys.stdout, sys.stderr = _streams
    _show_figures()
    if info is not None:
        shell.events.trigger("post_run_cell", _execution_result(info, outcome))
    _publish(outcome)


def _execution_info(code):
    """IPython's description of a cell about to run, as its hooks receive it; None where IPython has none."""
    try:
        from IPython.core.interactiveshell import ExecutionInfo
    except ImportError:
        return None
    try:
        return ExecutionInfo(code, False, False, True, None)
    except TypeError:  # an older IPython, whose cells have no id
        return ExecutionInfo(code, False, False, True)


def _execution_result(info, outcome):
    from IPython.core.interactiveshell import ExecutionResult

    result = ExecutionResult(info)
    if outcome["status"] == "error":
        result.error_in_exec = RuntimeError(outcome.get("message", ""))
    elif outcome["status"] == "interrupted":
        result.error_in_exec = KeyboardInterrupt()
    return result


def process(encoded):
    """Runs this kernel's interpreter with the given arguments (pip, for installs) and publishes what it did."""
    import os
    import subprocess

    request = _loads(_b64decode(encoded).decode("utf-8"))
    kept = request["keptChars"]
    try:
        done = subprocess.run(
            [sys.executable] + request["args"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=dict(os.environ, **request["env"]),
            timeout=request["timeoutMs"] / 1000,
        )
        result = {"code": done.returncode, "stdout": done.stdout.decode("utf-8", "replace")[-kept:],
                  "stderr": done.stderr.decode("utf-8", "replace")[-kept:], "timedOut": False}
    except subprocess.TimeoutExpired as exc:
        result = {"code": None, "stdout": (exc.stdout or b"").decode("utf-8", "replace")[-kept:],
                  "stderr": (exc.stderr or b"").decode("utf-8", "replace")[-kept:], "timedOut": True}
    except OSError as exc:
        result = {"code": None, "stdout": "", "stderr": "", "timedOut": False, "spawnError": str(exc)}
    _publish(result)


def refresh(encoded):
    """After pip installed into this kernel's environment: puts the user's site folder on sys.path when pip made it
    after the kernel started (Python adds it at start only if it exists), forgets the import system's cached
    folder listings, and publishes which of the named distributions this process still cannot see."""
    import importlib
    import importlib.metadata
    import os
    import site

    names = _loads(_b64decode(encoded).decode("utf-8"))["names"]
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site and os.path.isdir(user_site) and user_site not in sys.path:
        # Where Python would have put it: before the interpreter's own site folders.
        shared = [i for i, entry in enumerate(sys.path) if entry in set(site.getsitepackages())]
        sys.path.insert(shared[0] if shared else len(sys.path), user_site)
        site.addsitedir(user_site)  # its .pth files
    importlib.invalidate_caches()
    unseen = []
    for name in names:
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            unseen.append(name)
    _publish({"unseen": unseen})
