"""`display()` for user code, and the matplotlib figures a run leaves open, as displays of the run's result.

Shared by the CPython driver (loaded from its file) and the Pyodide worker (loaded as source), so both
backends show the same objects the same way. The backend calls install(emit) once, then begin_run() and
end_run() around every cell. `emit` receives {"mime", "data", "title"?}, with `data` base64 for images, and
sends it to the engine (BackendSink.display).

matplotlib is never imported here: figures are looked for only once user code has imported pyplot.

As in cell.py, what this module calls is taken when it is loaded and its builtins are a private copy, so user
code that replaces `base64.b64encode`, `io.BytesIO` or `builtins.isinstance` cannot break the end of a run.
"""
import binascii
import builtins
import io
import pprint
import sys
import warnings

__builtins__ = dict(builtins.__dict__)
_b2a_base64 = binascii.b2a_base64
_BytesIO = io.BytesIO
_pformat = pprint.pformat
_modules = sys.modules

# Every display of a run is held in memory by the MCP client and the results view, and images travel as
# base64: one display carries at most this many bytes of data (as UTF-8), and a run shows at most this many.
# The engine enforces both again (src/engine/runLimits.ts), since code in a run can change anything here:
# these save the sending, they are not the boundary.
MAX_DATA_BYTES = 5 * 1024 * 1024
MAX_PER_RUN = 20
# The protocols carry a title in a bounded field (the Pyodide host's is 1000 characters).
MAX_TITLE_CHARS = 1000
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
    # Figures are shown when the run ends, so plt.show() on the Agg backend is not the mistake it warns about.
    warnings.filterwarnings("ignore", message=r"(?s).*non-interactive, and thus cannot be shown", category=UserWarning)


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


def _send(shown, title):
    global _shown, _over_limit
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
    kind = type(obj).__module__ or ""
    if kind.startswith("PIL.") and hasattr(obj, "save"):
        return "image/png", _b64(_pil_png(obj))
    if kind.startswith("matplotlib.") and hasattr(obj, "savefig"):
        return "image/png", _b64(_figure_png(obj))
    # A class has these as plain functions that would need an instance.
    if not isinstance(obj, type):
        for method, mime in _REPR_METHODS:
            shown = _call_repr(obj, method, mime)
            if shown is not None:
                return shown
    return "text/plain", _pformat(obj, width=100)


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
