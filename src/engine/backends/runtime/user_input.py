"""input(), sys.stdin and getpass for user code, on both backends.

There is no terminal behind a session: the question goes, as a host call, to whoever started the run (an
input box in VS Code, an MCP client's elicitation) and the answer comes back. When nobody can answer, the
host's reason becomes the EOFError that input() raises at end of file anyway.
"""
import builtins
import getpass
import io
import sys

# As in cell.py: the builtins the functions below use are a private copy, taken before user code ran.
__builtins__ = dict(builtins.__dict__)
_INPUT_DOC = builtins.input.__doc__
_GETPASS_DOC = getpass.getpass.__doc__


def install(host_call, host_error):
    """Replace input() and getpass.getpass(); return the object to use as sys.stdin before every run."""

    def ask(prompt, password):
        try:
            answer = host_call("input", {"prompt": prompt, "password": password})
        except host_error as exc:
            raise EOFError(str(exc)) from None
        if answer is None:
            raise EOFError("input was cancelled: nobody answered %r" % prompt if prompt else "input was cancelled")
        return str(answer)

    def read_input(prompt=""):
        prompt = str(prompt)
        if prompt:
            sys.stdout.write(prompt)
        sys.stdout.flush()
        answer = ask(prompt, False)
        # As a terminal would show it: the prompt, then what was typed.
        sys.stdout.write(answer + "\n")
        return answer

    def read_password(prompt="Password: ", stream=None):
        return ask(str(prompt), True)

    read_input.__doc__ = _INPUT_DOC
    read_password.__doc__ = _GETPASS_DOC
    builtins.input = read_input
    getpass.getpass = read_password
    return _HostStdin(ask)


class _HostStdin(io.TextIOBase):
    """sys.stdin: each line is asked for; a cancelled question is the end of the file."""

    encoding = "utf-8"

    def __init__(self, ask):
        super().__init__()
        self._ask = ask

    def readable(self):
        return True

    def isatty(self):
        return False

    def readline(self, size=-1):
        try:
            return self._ask("", False) + "\n"
        except EOFError:
            return ""

    def read(self, size=-1):
        return self.readline()
