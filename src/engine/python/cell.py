"""Runs one cell of user code in a persistent namespace.

Shared by the CPython driver (imported) and the Pyodide worker (loaded as source), so both backends
classify errors and format tracebacks the same way.
"""
import contextlib
import linecache
import os
import sys
import traceback

_KEPT_SOURCES = 200
_cell_names = []


def _remember_source(filename, source):
    # Tracebacks show source lines only if linecache knows the cell; keep a bounded number of cells.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    _cell_names.append(filename)
    if len(_cell_names) > _KEPT_SOURCES:
        linecache.cache.pop(_cell_names.pop(0), None)


def _user_traceback(exc):
    # The first frame is run_cell's own exec call; the user's frames start after it.
    tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _error(error_type, exc, tb_text):
    name = type(exc).__name__
    text = str(exc)
    return {
        "status": "error",
        "errorType": error_type,
        "excName": name,
        "message": f"{name}: {text}" if text else name,
        "traceback": tb_text,
    }


class _Script:
    """What running a file (or lines of one) changes for the length of a run, as `python file.py` would have it:
    the working folder, `__file__`, `sys.argv`, and the file's folder first on `sys.path`. Put back afterwards,
    so the session is as it was for the next run.
    """

    def __init__(self, script, namespace):
        self._path = script["path"]
        self._cwd = script.get("cwd")
        self._namespace = namespace
        self._saved = None

    def __enter__(self):
        folder = os.path.dirname(self._path)
        self._saved = (os.getcwd(), self._namespace.get("__file__", _MISSING), list(sys.argv), folder)
        if self._cwd is not None:
            try:
                os.chdir(self._cwd)
            except OSError as exc:
                # Pyodide sees only the workspace folders: a file elsewhere still runs, from where the session is.
                sys.stderr.write("[code-mode] cannot run in %s (%s); running in %s\n" % (self._cwd, exc.strerror, os.getcwd()))
        self._namespace["__file__"] = self._path
        sys.argv[:] = [self._path]
        sys.path.insert(0, folder)
        return self

    def __exit__(self, *exc_info):
        cwd, file, argv, folder = self._saved
        try:
            os.chdir(cwd)
        except OSError:
            pass
        if file is _MISSING:
            self._namespace.pop("__file__", None)
        else:
            self._namespace["__file__"] = file
        sys.argv[:] = argv
        if folder in sys.path:
            sys.path.remove(folder)
        return False


_MISSING = object()



def run_cell(source, namespace, filename, script=None):
    """Compile and exec `source` in `namespace`; return an outcome dict (see BackendOutcome).

    With `script` ({"path", "firstLine", "cwd"?}), the code is that file's (or its lines from `firstLine`):
    tracebacks name the file and its line numbers, and the run has the script's surroundings (see _Script).
    """
    if script is not None:
        filename = script["path"]
        # Blank lines in front put every line at its own line number in the file.
        source = "\n" * (max(1, int(script.get("firstLine", 1))) - 1) + source
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError) as exc:
        return _error("SyntaxError", exc, "".join(traceback.format_exception_only(type(exc), exc)))
    if script is None:
        # A file's own lines come from the file itself.
        _remember_source(filename, source)
    try:
        with _Script(script, namespace) if script is not None else contextlib.nullcontext():
            exec(code, namespace)
    except KeyboardInterrupt:
        return {"status": "interrupted"}
    except SystemExit as exc:
        if exc.code in (None, 0):
            return {"status": "ok"}
        return _error("RuntimeError", exc, _user_traceback(exc))
    except BaseException as exc:  # noqa: BLE001 - every user error becomes a structured result
        return _error("RuntimeError", exc, _user_traceback(exc))
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a user-replaced stream must not break the result
                pass
    return {"status": "ok"}
