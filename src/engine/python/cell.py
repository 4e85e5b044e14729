"""Runs one cell of user code in a persistent namespace.

Shared by the CPython driver (imported) and the Pyodide worker (loaded as source), so both backends
classify errors and format tracebacks the same way.
"""
import linecache
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


def run_cell(source, namespace, filename):
    """Compile and exec `source` in `namespace`; return an outcome dict (see BackendOutcome)."""
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError) as exc:
        return _error("SyntaxError", exc, "".join(traceback.format_exception_only(type(exc), exc)))
    _remember_source(filename, source)
    try:
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
