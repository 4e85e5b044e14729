"""Runs one cell of user code in a persistent namespace.

Shared by the CPython driver (imported), the Pyodide worker and the Jupyter kernel (loaded as source), so all
backends classify errors and format tracebacks the same way.

User code runs in this same interpreter and may replace anything it reaches: a builtin (`builtins.str = ...`),
a module's function (`traceback.format_exception = ...`, `os.getcwd = ...`), `sys.path`, `linecache.cache`;
and its exceptions may refuse to be printed (`__str__` that raises). None of that may break the next run. So
what this module calls is taken when it is loaded, before any user code has run; its own lookups of builtins go
to a private copy of them; and whatever still touches user objects is guarded. `run_cell` raises nothing but
KeyboardInterrupt.
"""
import ast
import builtins
import contextlib
import linecache
import os
import sys
import traceback

# Functions defined below look builtins up here, not in the builtins module user code can change.
__builtins__ = dict(builtins.__dict__)
_BUILTINS_MODULE = builtins
_format_exception = traceback.format_exception
_format_exception_only = traceback.format_exception_only
_nullcontext = contextlib.nullcontext
_getcwd = os.getcwd
_chdir = os.chdir
_dirname = os.path.dirname
# Read through the base types' own descriptors, so a metaclass or subclass property cannot answer instead.
_class_name = type.__dict__["__name__"].__get__
_exit_code = SystemExit.__dict__["code"].__get__
_traceback_of = BaseException.__dict__["__traceback__"].__get__
_ONLY_AST = ast.PyCF_ONLY_AST
_Expr = ast.Expr
_Expression = ast.Expression

_KEPT_SOURCES = 200
# The protocols carry an exception's type name in a bounded field (the Pyodide host's is 200 characters).
_MAX_NAME_CHARS = 200
_cell_names = []
# The same lines, for the traceback this module makes itself when the traceback module cannot.
_cell_lines = {}


def _remember_source(filename, source):
    # Tracebacks show source lines only if linecache knows the cell; keep a bounded number of cells. The cache
    # is looked up now, as traceback does: one user code put in its place must do without the cell's lines.
    lines = source.splitlines(True)
    _cell_lines[filename] = lines
    if len(_cell_lines) > _KEPT_SOURCES:
        del _cell_lines[next(iter(_cell_lines))]
    try:
        cache = linecache.cache
        cache[filename] = (len(source), None, lines, filename)
        _cell_names.append(filename)
        if len(_cell_names) > _KEPT_SOURCES:
            cache.pop(_cell_names.pop(0), None)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - a replaced linecache costs the source lines, not the run
        pass


def _type_name(exc):
    try:
        name = _class_name(type(exc))
        if type(name) is str:
            return name
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - a metaclass may make even the name fail
        pass
    return "Exception"


def _text_of(exc):
    """str(exc), or what traceback prints when it raises."""
    try:
        text = str(exc)
        if type(text) is str:
            return text
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - a user's __str__ may raise anything
        pass
    return "<exception str() failed>"


def _exception_line(exc):
    name, text = _type_name(exc), _text_of(exc)
    return "%s: %s\n" % (name, text) if text else name + "\n"


def _plain_traceback(tb, exc):
    """The frames and the exception without the traceback module: what is left when it was replaced or fails."""
    lines = ["Traceback (most recent call last):\n"]
    while tb is not None:
        code = tb.tb_frame.f_code
        lines.append('  File "%s", line %s, in %s\n' % (code.co_filename, tb.tb_lineno, code.co_name))
        source = _cell_lines.get(code.co_filename)
        if source is not None and type(tb.tb_lineno) is int and 0 < tb.tb_lineno <= len(source):
            lines.append("    %s\n" % source[tb.tb_lineno - 1].strip())
        tb = tb.tb_next
    lines.append(_exception_line(exc))
    return "".join(lines)


def _user_traceback(exc):
    # The first frame is run_cell's own exec call; the user's frames start after it.
    tb = _traceback_of(exc)
    tb = tb.tb_next if tb is not None else None
    try:
        return "".join(_format_exception(type(exc), exc, tb))
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - linecache, builtins or the exception itself broken by user code
        return _plain_traceback(tb, exc)


def _syntax_traceback(exc):
    try:
        return "".join(_format_exception_only(type(exc), exc))
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - see _user_traceback
        return _exception_line(exc)


def _error(error_type, exc, traceback_of):
    name = _type_name(exc)
    text = _text_of(exc)
    try:
        tb_text = traceback_of(exc)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - the last resort: the exception's own line
        tb_text = _exception_line(exc)
    return {
        "status": "error",
        "errorType": error_type,
        "excName": name[:_MAX_NAME_CHARS],
        "message": "%s: %s" % (name, text) if text else name,
        "traceback": tb_text,
    }


def _clean_exit(exc):
    """SystemExit() and SystemExit(0) end a run as success, as they end a script."""
    try:
        return bool(_exit_code(exc) in (None, 0))
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - a user object as the code, whose __eq__ raises
        return False


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
        folder = _dirname(self._path)
        try:
            cwd = _getcwd()
        except OSError:
            cwd = None  # the folder the session was in is gone; the run starts where it is told to
        argv = sys.argv
        # A list is changed in place, as before, so references to it see the script's arguments; anything else
        # user code put there is set aside for the run.
        argv_items = argv[:] if type(argv) is list else None
        path = sys.path
        self._saved = (cwd, self._namespace.get("__file__", _MISSING), argv, argv_items, folder, path if type(path) is list else None)
        if self._cwd is not None:
            try:
                _chdir(self._cwd)
            except OSError as exc:
                # Pyodide sees only the workspace folders: a file elsewhere still runs, from where the session is.
                _warn("[code-mode] cannot run in %s (%s); running in %s\n" % (self._cwd, exc.strerror, cwd))
        self._namespace["__file__"] = self._path
        if argv_items is not None:
            argv[:] = [self._path]
        else:
            sys.argv = [self._path]
        if type(path) is list:
            path.insert(0, folder)
        return self

    def __exit__(self, *exc_info):
        cwd, file, argv, argv_items, folder, path = self._saved
        if cwd is not None:
            try:
                _chdir(cwd)
            except OSError:
                pass
        if file is _MISSING:
            self._namespace.pop("__file__", None)
        else:
            self._namespace["__file__"] = file
        if argv_items is not None:
            argv[:] = argv_items
        sys.argv = argv
        if path is not None:
            try:
                path.remove(folder)
            except KeyboardInterrupt:
                raise
            except BaseException:  # noqa: BLE001 - removed by the script, or an entry whose __eq__ raises
                pass
        return False


def _warn(text):
    try:
        sys.stderr.write(text)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - a user-replaced stream
        pass


_MISSING = object()


def _last_expression(source, filename):
    """The code to exec, and the last statement's expression compiled on its own when the code ends with one whose
    value is to be shown (not when a `;` follows it, as in IPython); else None in its place."""
    tree = compile(source, filename, "exec", _ONLY_AST, dont_inherit=True)
    body = tree.body
    last = None
    if body and type(body[-1]) is _Expr and not _quieted(source, body[-1]):
        last = compile(_Expression(body.pop().value), filename, "eval", dont_inherit=True)
    try:
        return compile(tree, filename, "exec", dont_inherit=True), last
    except SyntaxError:
        # Found past the parser ('return' outside a function): compiled from the text, its error shows the line.
        compile(source, filename, "exec", dont_inherit=True)
        raise


def _quieted(source, statement):
    """Whether a `;` follows the statement: what can follow the last one is blanks, comments, `;` and `\\`."""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")[statement.end_lineno - 1:]
    # The column is in bytes of UTF-8.
    lines[0] = lines[0].encode("utf-8", "surrogatepass")[statement.end_col_offset:].decode("utf-8", "replace")
    return any(";" in line.split("#", 1)[0] for line in lines)


def run_cell(source, namespace, filename, script=None, show=None):
    """Compile and exec `source` in `namespace`; return an outcome dict (see BackendOutcome).

    With `script` ({"path", "firstLine", "cwd"?}), the code is that file's (or its lines from `firstLine`):
    tracebacks name the file and its line numbers, and the run has the script's surroundings (see _Script).
    With `show`, the value of the code's last statement, when it is an expression whose value is not None and no
    `;` ends it, is passed to `show` after the rest has run, as a notebook cell shows it; an error in it (in the
    expression or in its repr) is the run's error.
    """
    if script is not None:
        filename = script["path"]
        # Blank lines in front put every line at its own line number in the file.
        source = "\n" * (max(1, int(script.get("firstLine", 1))) - 1) + source
    last = None
    try:
        if show is None:
            code = compile(source, filename, "exec", dont_inherit=True)
        else:
            code, last = _last_expression(source, filename)
    except (SyntaxError, ValueError, OverflowError) as exc:
        return _error("SyntaxError", exc, _syntax_traceback)
    except KeyboardInterrupt:
        return {"status": "interrupted"}
    except BaseException as exc:  # noqa: BLE001 - MemoryError, RecursionError: the compiler gave up
        return _error("RuntimeError", exc, _syntax_traceback)
    if script is None:
        # A file's own lines come from the file itself.
        _remember_source(filename, source)
    # Without it, exec would give the code this module's private builtins rather than the interpreter's.
    if "__builtins__" not in namespace:
        namespace["__builtins__"] = _BUILTINS_MODULE
    try:
        with _Script(script, namespace) if script is not None else _nullcontext():
            exec(code, namespace)
            if last is not None:
                value = eval(last, namespace)
                if value is not None:
                    show(value)
    except KeyboardInterrupt:
        return {"status": "interrupted"}
    except SystemExit as exc:
        if _clean_exit(exc):
            return {"status": "ok"}
        return _error("RuntimeError", exc, _user_traceback)
    except BaseException as exc:  # noqa: BLE001 - every user error becomes a structured result
        return _error("RuntimeError", exc, _user_traceback)
    finally:
        _flush()
    return {"status": "ok"}


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - a user-replaced stream must not break the result
            pass
