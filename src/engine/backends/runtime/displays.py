"""`display()` for user code, the value of a run's last expression, and matplotlib figures (at each `plt.show()`
and those a run leaves open), as displays of the run's result.

Shared by the CPython driver (loaded from its file), the Pyodide worker (loaded as source) and the Jupyter kernel
(kernel_support.py), so all backends show the same objects the same way. The backend calls install(emit) once,
then begin_run() and end_run() around every cell, and gives show_result to cell.run_cell. `emit` receives
{"mime", "data", "title"?}, with `data` base64 for images, and sends it to the engine (BackendSink.display); the
value of the last expression comes as {"mime", "data", "text"?, "result": True}, `text` its repr beside a richer
`mime` (Jupyter's execute_result).

matplotlib is never imported here: figures are looked for only once user code has imported pyplot, whose `show`
is then wrapped (when the figures are drawn off screen, as on Agg) to show the open figures where the program
asks for them, as Jupyter's inline backend does.

As in cell.py, what this module calls is taken when it is loaded and its builtins are a private copy, so user
code that replaces `base64.b64encode`, `io.BytesIO` or `builtins.isinstance` cannot break the end of a run.
"""
import binascii
import builtins
import functools
import io
import pprint
import sys
import warnings

__builtins__ = dict(builtins.__dict__)
_b2a_base64 = binascii.b2a_base64
_BytesIO = io.BytesIO
_pformat = pprint.pformat
_wraps = functools.wraps
_modules = sys.modules
_meta_path = sys.meta_path

# Every display of a run is held in memory by the MCP client and the results view, and images travel as
# base64: one display carries at most this many bytes of data (as UTF-8), and a run shows at most this many.
# The engine enforces both again (src/engine/runLimits.ts), since code in a run can change anything here:
# these save the sending, they are not the boundary.
MAX_DATA_BYTES = 5 * 1024 * 1024
MAX_PER_RUN = 20
# The protocols carry a title in a bounded field (the Pyodide host's is 1000 characters).
MAX_TITLE_CHARS = 1000
# The repr of a last expression's value is read as text (by a model too), as printed output is: its head and tail
# are kept beyond this many characters (MAX_RESULT_TEXT_CHARS in runLimits.ts).
MAX_RESULT_TEXT_CHARS = 64 * 1024
# How end_run() reports the displays left out over MAX_PER_RUN: the engine counts them with any it leaves out
# itself and shows one note (DISPLAYS_DROPPED_MIME in runLimits.ts).
DROPPED_MIME = "application/vnd.code-mode.displays-dropped"
FIGURE_DPI = 100

_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
# Richest first, as IPython orders them; images first because an MCP client can show them to the model.
_REPR_METHODS = (
    ("_repr_png_", "image/png"),
    ("_repr_jpeg_", "image/jpeg"),
    ("_repr_svg_", "image/svg+xml"),
    ("_repr_html_", "text/html"),
    ("_repr_markdown_", "text/markdown"),
)

_emit = None
_shown = 0
_over_limit = 0


def install(emit, builtin=True):
    """Send displays to `emit`, and make `display` a builtin that shows objects that way (not in a Jupyter
    kernel, which has IPython's own)."""
    global _emit
    _emit = emit
    if builtin:
        builtins.display = display
    # Figures are shown anyway, so plt.show() on the Agg backend is not the mistake it warns about.
    warnings.filterwarnings("ignore", message=r"(?s).*non-interactive, and thus cannot be shown", category=UserWarning)
    pyplot = _modules.get("matplotlib.pyplot")
    if pyplot is not None:
        _wrap_show(pyplot)
    _meta_path.insert(0, _PyplotFinder())


def begin_run():
    global _shown, _over_limit
    _shown = _over_limit = 0


def end_run():
    """Show the figures the run left open (then close them) and report how many displays went over the limit."""
    _show_open_figures()
    if _over_limit:
        _emit({"mime": DROPPED_MIME, "data": str(_over_limit)})


def display(*objs, title=None):
    """Show each object in the run's result, as the richest of: an image (PNG/JPEG/GIF bytes, a PIL image,
    a matplotlib figure, `_repr_png_`/`_repr_jpeg_`/`_repr_svg_`), HTML (`_repr_html_`, e.g. a pandas
    DataFrame), Markdown (`_repr_markdown_`) or text. `title` captions the display."""
    if title is not None:
        title = str(title)[:MAX_TITLE_CHARS]
    for obj in objs:
        _send(_represent(obj), title)


def show_result(value):
    """Shows `value` as the value of the run's last expression: its richest form beside its repr, else its repr.
    An error in its repr is the run's, as in Python's own REPL; a rich form that fails is left out, as IPython does
    (with a note on stderr)."""
    text = repr(value)
    if type(text) is not str:
        raise TypeError("__repr__ returned non-string (type %s)" % type(text).__name__)
    rich = None
    # Text and bytes are shown as the REPL shows them, quoted, never as the image or text they hold.
    if not isinstance(value, (str, bytes, bytearray, memoryview)):
        try:
            rich = _rich(value)
        except Exception as exc:  # noqa: BLE001 - a user's _repr_html_ may raise anything
            _note("[code-mode] the rich form of the value could not be made (%s: %s); its repr is shown\n" % (
                type(exc).__name__, exc))
    text = _head_and_tail(text, MAX_RESULT_TEXT_CHARS)
    if rich is None:
        _send(("text/plain", text), None, {"result": True}, counted=False)
    else:
        _send(rich, None, {"result": True, "text": text}, counted=False)


def _rich(obj):
    """(mime, data) of `obj`'s richest form other than text, or None."""
    kind = type(obj).__module__ or ""
    if kind.startswith("PIL.") and hasattr(obj, "save"):
        return "image/png", _b64(_pil_png(obj))
    if kind.startswith("matplotlib.") and hasattr(obj, "savefig"):
        return "image/png", _b64(_figure_png(obj))
    if isinstance(obj, type):
        return None
    for method, mime in _REPR_METHODS:
        shown = _call_repr(obj, method, mime)
        if shown is not None:
            return shown
    return None


def _head_and_tail(text, limit):
    if len(text) <= limit:
        return text
    half = (limit - 80) // 2
    return "%s\n... [%d characters not shown] ...\n%s" % (text[:half], len(text) - 2 * half, text[-half:])


def _note(text):
    try:
        sys.stderr.write(text)
    except Exception:  # noqa: BLE001 - a stream the code closed or replaced
        pass


def _send(shown, title, extra=None, counted=True):
    global _shown, _over_limit
    if counted:
        if _shown >= MAX_PER_RUN:
            _over_limit += 1
            return
        _shown += 1
    mime, data = shown
    size = _utf8_size(data)
    if size > MAX_DATA_BYTES:
        if mime.startswith("text/") and mime != "text/html":
            head = _utf8_head(data, MAX_DATA_BYTES - 64)
            data = "%s\n... [%d characters not shown]" % (head, len(data) - len(head))
        else:
            mime, data = "text/plain", "%s of %.1f MB not shown: a display carries at most %d MB" % (
                mime, size / 1e6, MAX_DATA_BYTES // (1024 * 1024))
    message = {"mime": mime, "data": data}
    if title:
        message["title"] = title
    if extra:
        message.update(extra)
    _flush_text()
    _emit(message)


def _flush_text():
    """Text printed before a display is sent before it, so the result keeps the order the code made them in."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            # A stream the code closed or replaced with something without flush(): nothing of it is held back here.
            pass


def _represent(obj):
    """(mime, data) for `obj`; data is base64 for images."""
    if isinstance(obj, (bytes, bytearray, memoryview)):
        raw = bytes(obj)
        for magic, mime in _IMAGE_MAGIC:
            if raw.startswith(magic):
                return mime, _b64(raw)
        return "text/plain", repr(raw)
    if isinstance(obj, str):
        return "text/plain", obj
    return _rich(obj) or ("text/plain", _pformat(obj, width=100))


def _call_repr(obj, method, mime):
    function = getattr(obj, method, None)
    if not callable(function):
        return None
    value = function()
    # IPython's protocol allows (data, metadata); None means "not available for this object".
    if isinstance(value, tuple) and value:
        value = value[0]
    if value is None:
        return None
    if mime == "image/svg+xml":
        return mime, _b64(value.encode("utf-8") if isinstance(value, str) else bytes(value))
    if mime.startswith("image/"):
        # Raw bytes, or already base64 text as IPython also accepts.
        return mime, _b64(value) if isinstance(value, (bytes, bytearray)) else str(value).strip()
    return mime, str(value)


def _pil_png(image):
    buffer = _BytesIO()
    try:
        image.save(buffer, format="PNG")
    except (OSError, ValueError):
        # Modes PNG cannot hold (CMYK, some float modes).
        buffer = _BytesIO()
        image.convert("RGBA").save(buffer, format="PNG")
    return buffer.getvalue()


def _figure_png(figure):
    buffer = _BytesIO()
    figure.savefig(buffer, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
    return buffer.getvalue()


def _show_open_figures():
    pyplot = _modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    try:
        numbers = pyplot.get_fignums()
    except Exception:  # noqa: BLE001 - a half-imported or patched pyplot must not break the run's result
        return
    for number in numbers:
        try:
            figure = pyplot.figure(number)
            title = figure.get_label() or "Figure %d" % number
        except Exception:  # noqa: BLE001 - see above
            continue
        try:
            _send(("image/png", _b64(_figure_png(figure))), title)
        except Exception as exc:  # noqa: BLE001 - one figure that cannot be drawn must not hide the others
            _send(("text/plain", "%s could not be drawn: %s: %s" % (title, type(exc).__name__, exc)), title)
    try:
        # Shown once: the next run starts without them, as with Jupyter's inline backend.
        pyplot.close("all")
    except Exception:  # noqa: BLE001 - see above
        pass


# Backends that draw off screen, whose show() would show nothing (matplotlib.rcsetup.non_interactive_bk).
_OFF_SCREEN = ("agg", "cairo", "pdf", "pgf", "ps", "svg", "template")


def _wrap_show(pyplot):
    """Makes pyplot's show() show the open figures there and then (and close them), when figures are drawn off
    screen: print, plot, show, print, plot, show gives text, figure, text, figure. Another backend (a window, the
    Jupyter inline backend) keeps its own show()."""
    try:
        original = pyplot.show
        if getattr(original, "_code_mode_show", False):
            return

        @_wraps(original)
        def show(*args, **kwargs):
            try:
                off_screen = str(pyplot.get_backend()).lower() in _OFF_SCREEN
            except Exception:  # noqa: BLE001 - a patched or half-imported pyplot
                off_screen = False
            if not off_screen:
                return original(*args, **kwargs)
            _show_open_figures()
            return None

        show._code_mode_show = True
        pyplot.show = show
    except Exception:  # noqa: BLE001 - figures are then shown when the run ends, as before
        pass


class _PyplotFinder:
    """On sys.meta_path: finds matplotlib.pyplot as the other finders do, and has its show() wrapped once it is
    loaded (_wrap_show). Finds nothing itself."""

    def find_spec(self, name, path=None, target=None):
        if name != "matplotlib.pyplot":
            return None
        try:
            for finder in sys.meta_path:
                find = None if finder is self else getattr(finder, "find_spec", None)
                spec = find(name, path, target) if find is not None else None
                if spec is not None:
                    break
            else:
                return None
            if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _PyplotLoader(spec.loader)
            return spec
        except Exception:  # noqa: BLE001 - the import goes on without this finder, and raises its own error
            return None


class _PyplotLoader:
    """pyplot's own loader, its show() wrapped once the module has run."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _wrap_show(module)

    def __getattr__(self, name):
        # get_source, get_filename, get_resource_reader...: the module's own loader answers.
        return getattr(self._loader, name)


def _b64(raw):
    return _b2a_base64(raw, newline=False).decode("ascii")


def _utf8_size(text):
    """Bytes of `text` as UTF-8; below MAX_DATA_BYTES / 4 characters, its length (enough to know it fits)."""
    if len(text) * 4 <= MAX_DATA_BYTES or text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def _utf8_head(text, limit):
    """The longest prefix of `text` within `limit` bytes of UTF-8, never splitting a character."""
    if text.isascii():
        return text[:limit]
    return text.encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")
