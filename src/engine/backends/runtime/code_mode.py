"""Call the tools of MCP servers (and of VS Code) from Python as ordinary functions.

    from code_mode import tools
    print(tools.search("file"))                 # what can I call?
    help(tools.filesystem.read_text_file)       # signature and docs
    text = tools.filesystem.read_text_file(path="/tmp/notes.txt")

Every call is synchronous: the interpreter waits while the host performs it (and, for a tool that may change
something, while a person is asked). A tool's error raises ToolError with the server's message; a call the
tool-approval policy or a person refused raises ToolCallRefused, a PermissionError, and nothing reached the tool.
"""
import builtins

import _code_mode_host

__all__ = ["tools", "ToolError", "ToolCallRefused"]

# Taken at import, so user code that later replaces a builtin or the host module's functions cannot break calls.
__builtins__ = dict(builtins.__dict__)
_host_call = _code_mode_host.call
_HostCallError = _code_mode_host.HostCallError


class ToolError(Exception):
    """A tool call failed: the server reported an error, or the tool is unknown or not allowed."""


class ToolCallRefused(PermissionError):
    """A tool call was not made: the tool-approval policy refused it, or a person said no. The message says which
    tool and why; nothing was sent to the tool, so the program may go on without it."""


def _host(method, params):
    try:
        return _host_call(method, params)
    except _HostCallError as exc:
        raise ToolError(str(exc)) from None


def _make_function(server_name, entry):
    """A real function with the tool's keyword-only signature, so help() and inspect show it properly."""
    params = entry["params"]
    required = [p["ident"] for p in params if p["required"]]
    optional = [p["ident"] for p in params if not p["required"]]
    arg_list = ", ".join(required + [f"{name}=_MISSING" for name in optional])
    mapping = {p["ident"]: p["name"] for p in params}
    source = (
        f"def {entry['ident']}({'*, ' + arg_list if arg_list else ''}):\n"
        f"    _args = {{}}\n"
        + "".join(
            f"    if {ident} is not _MISSING: _args[{name!r}] = {ident}\n" for ident, name in mapping.items()
        )
        + "    return _call(_args)\n"
    )
    tool_name = entry["name"]

    def _call(args):
        reply = _host("tools.call", {"server": server_name, "tool": tool_name, "args": args})
        if "refused" in reply:
            raise ToolCallRefused(reply["refused"])
        return reply.get("value")

    namespace = {"_MISSING": _MISSING, "_call": _call}
    exec(compile(source, f"<tool {server_name}.{tool_name}>", "exec"), namespace)
    function = namespace[entry["ident"]]
    function.__doc__ = entry["doc"]
    function.__qualname__ = f"tools.{entry['serverIdent']}.{entry['ident']}"
    function.__module__ = "code_mode"
    return function


class _Missing:
    def __repr__(self):
        return "<omitted>"


_MISSING = _Missing()


class _Server:
    def __init__(self, info, entries):
        self._info = info
        self.__doc__ = info.get("description") or f"Tools of the MCP server {info['name']!r}."
        for entry in entries:
            setattr(self, entry["ident"], _make_function(info["name"], entry))
        self._names = [e["ident"] for e in entries]

    def __dir__(self):
        return list(self._names)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        status = self._info.get("status", {})
        why = f" (server {status.get('state')}: {status.get('error')})" if status.get("error") else ""
        raise AttributeError(
            f"MCP server {self._info['name']!r} has no tool {name!r}{why}. Known: {', '.join(self._names) or 'none'}"
        )

    def __repr__(self):
        return f"<MCP server {self._info['name']!r}: {len(self._names)} tools>"


class _Tools:
    """`tools.<server>.<tool>(**kwargs)`; `tools.search(query)` lists what is callable."""

    def __init__(self):
        self._servers = None

    def _load(self):
        catalog = _host("tools.catalog", {})
        by_server = {}
        for entry in catalog["tools"]:
            by_server.setdefault(entry["server"], []).append(entry)
        self._servers = {s["ident"]: _Server(s, by_server.get(s["name"], [])) for s in catalog["servers"]}

    def refresh(self):
        """Forget the cached tool list (servers were added or changed)."""
        self._servers = None

    def search(self, query="", server=None):
        """Python signatures with one-line docs of the tools whose name or docs match every word of `query`."""
        params = {"query": query}
        if server is not None:
            params["server"] = server
        return _host("tools.search", params)

    def servers(self):
        """Names of the servers code can call."""
        if self._servers is None:
            self._load()
        return sorted(self._servers)

    def __dir__(self):
        return ["search", "refresh", "servers"] + (sorted(self._servers) if self._servers else [])

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if self._servers is None or name not in self._servers:
            # A server may have been configured since the last look: ask once more before failing.
            self._load()
        if name not in self._servers:
            raise AttributeError(f"no MCP server {name!r}; callable servers: {', '.join(sorted(self._servers)) or 'none'}")
        return self._servers[name]

    def __repr__(self):
        return "<code_mode.tools: tools.search(query) lists the callable tools>"


tools = _Tools()
