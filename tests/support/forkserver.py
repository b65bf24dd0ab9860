"""Promoter processes for the tests, forked from one that has already imported the promoter.

A test that needs a real process (one a SIGKILL can end mid-write, or one whose whole output and
exit code it reads) used to start ``python -m MODULE``, and about three quarters of such a
run's CPU was Python importing the promoter, PyGithub, jinja2 and the rest, again each time.
Here each pytest worker starts one server process (``python -m tests.support.forkserver``) that
imports all of that once and then forks a process per request. The forked process is a real
process like the one it replaces: its own pid, stdin from /dev/null, stdout and stderr to the
caller's files, the caller's environment and working directory, ``sys.argv`` of
``python -m MODULE ARGS``, the module run as ``__main__``; it ends as an interpreter ends
(atexit, threads joined, buffers flushed), or dies by a signal with nothing flushed. What the
server imported is neither collected nor torn down in a forked process (``gc.freeze``,
``_end``): both walked the whole inherited heap, and copy-on-write copied each page they
touched, 300 ms of CPU for ``promoter --version`` against 30 ms now.

``run`` has ``subprocess.run``'s shape: a ``CompletedProcess`` with text output and the exit
code (negative for a signal), ``TimeoutExpired`` after killing the process.

The server forks a waiter per request, and the waiter forks the process: the waiter sends the
process's pid, waits for it and sends its exit code, so the server (one thread, no locks held
while forking) only accepts and forks.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import io
import json
import locale
import os
import runpy
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

from tests.support.paths import ROOT

# What the forked processes run: imported once by the server (the command modules are what
# ``promoter.cli.main`` imports only when their command runs).
PRELOAD = (
    "promoter.cli.main",
    "promoter.ghactions.runner",
    "promoter.ghactions.publish",
    "promoter.forges.github.forge",
    "promoter.forges.local",
    "promoter.cli.commands.promote",
    "promoter.cli.commands.render",
    "promoter.cli.commands.hold",
    "promoter.cli.commands.validate",
    "tests.support.killhook",
    "tests.support.killhook_github",
)

_lock = threading.Lock()
_server: _Server | None = None


class _Server:
    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="promoter-fork-")  # short: a socket's path has a limit
        self.path = os.path.join(self.dir, "s")
        # stdin: the server exits when this worker does (its end of the pipe closes)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.forkserver", self.path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline() != b"ready\n":
            raise RuntimeError(f"the fork server did not start (exit code {self.proc.wait()})")
        atexit.register(self.stop)

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)


def _the_server() -> _Server:
    global _server
    with _lock:
        if _server is None or _server.proc.poll() is not None:
            _server = _Server()
        return _server


def run(
    module: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` (stdout and stderr captured as text), forked from the server."""
    command = [sys.executable, "-m", module, *args]
    request = {
        "module": module,
        "args": list(args),
        "env": dict(os.environ if env is None else env),
        "cwd": str(cwd if cwd is not None else os.getcwd()),
    }
    server = _the_server()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(server.path)
            socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], [out.fileno(), err.fileno()])
            conn.settimeout(timeout)
            answers = conn.makefile("rb")
            pid = int(answers.readline())
            try:
                code = int(answers.readline())
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(command, timeout, _text(out), _text(err)) from None
        return subprocess.CompletedProcess(command, code, _text(out), _text(err))


# The ``promoter`` command of an installed action in the workflow harness: a client of this
# worker's server (``python -IS``: no site, a few milliseconds), which hands the server its own
# stdout and stderr, relays SIGTERM and SIGINT, and ends as the forked process ended.
_COMMAND = """#!{python} -IS
import json, os, signal, socket, sys
request = {{"module": "promoter", "args": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}}
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect({path!r})
socket.send_fds(conn, [json.dumps(request).encode() + b"\\n"], [1, 2])
answers = conn.makefile("rb")
pid = int(answers.readline())
for number in (signal.SIGTERM, signal.SIGINT):
    signal.signal(number, lambda number, frame: os.kill(pid, number))
code = int(answers.readline())
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def command(path: Path) -> Path:
    """Write at ``path`` a ``promoter`` executable whose runs are forked from this worker's
    server: the promoter of this checkout, as ``python -m promoter`` runs it."""
    path.write_text(_COMMAND.format(python=sys.executable, path=_the_server().path))
    path.chmod(0o755)
    return path


def _text(file: IO[bytes]) -> str:
    """What ``subprocess.run(text=True)`` makes of the bytes: the locale's encoding, universal newlines."""
    file.seek(0)
    data = file.read()
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


# ------------------------------------------------------------------ the server


def _warm() -> None:
    """What every promoter process works out once, the same each time, before its first
    render: the memo's digest of the rendering code (hashing the Kubernetes schemas) and the
    built-in templates, read and compiled. Done here once, each forked process inherits it: it
    was about a sixth of a harness run's CPU."""
    from promoter.rendering import memo
    from promoter.rendering.builtins import builtin_templates
    from promoter.rendering.render import Renderer

    memo.code_digest()
    Renderer(builtin_templates()).compile_all()


def _serve(path: str) -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    _warm()
    # What the server made stays out of the collector's way in each forked process: a collection
    # there walked (and so copied, page by page) the whole inherited heap.
    gc.freeze()
    encoding, errors = sys.stdout.encoding, sys.stdout.errors
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [], 1.0)
        _reap()
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            os._exit(0)  # the worker is gone
        if listener in ready:
            conn, _ = listener.accept()
            request, fds = _receive(conn)
            if os.fork() == 0:
                listener.close()
                _wait_for(conn, request, fds, encoding, errors)
            conn.close()
            for fd in fds:
                os.close(fd)


def _reap() -> None:
    """The waiters that have finished."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 2)
    while not data.endswith(b"\n"):
        more = conn.recv(1 << 16)
        if not more:
            raise RuntimeError("the fork server's request ended early")
        data += more
    return json.loads(data), list(fds)


def _wait_for(
    conn: socket.socket, request: dict[str, Any], fds: list[int], encoding: str, errors: str
) -> NoReturn:
    """In the waiter: fork the process, send its pid, wait for it, send its exit code, exit."""
    pid = os.fork()
    if pid == 0:
        conn.close()
        _become(request, fds, encoding, errors)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
    os._exit(0)


def _become(request: dict[str, Any], fds: list[int], encoding: str, errors: str) -> NoReturn:
    """This process turns into ``python -m MODULE ARGS`` with the request's environment; its
    SystemExit (or exception) unwinds to the top and ends the interpreter as ``python`` ends."""
    stdin = os.open(os.devnull, os.O_RDONLY)
    for fd, target in ((stdin, 0), (fds[0], 1), (fds[1], 2)):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # TMPDIR of this process, not the server's
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    sys.stdin = sys.__stdin__ = open(0, encoding=encoding, closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = _stream(1, encoding, errors, unbuffered, line=False)
    sys.stderr = sys.__stderr__ = _stream(2, encoding, "backslashreplace", unbuffered, line=True)
    sys.argv = [request["module"], *request["args"]]
    try:
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        _end(0)
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            _end(done.code or 0)
        print(done.code, file=sys.stderr)  # as the interpreter prints SystemExit("message")
        _end(1)
    except KeyboardInterrupt:
        _end(None)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        _end(1)


def _end(code: int | None) -> NoReturn:
    """End as the interpreter ends, without tearing down what the server imported (each
    module, object by object: most of a short process's CPU, as copy-on-write copied every page
    it touched): non-daemon threads joined, atexit functions run, the standard streams flushed,
    then out with ``code``, or by SIGINT for an unhandled KeyboardInterrupt (``None``)."""
    threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter calls first at exit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    if code is None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code if code is not None else 1)


def _stream(fd: int, encoding: str, errors: str, unbuffered: bool, *, line: bool) -> io.TextIOWrapper:
    """A standard stream as Python makes one on a pipe: stdout block-buffered, stderr by line."""
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=encoding,
        errors=errors,
        line_buffering=line or unbuffered,
        write_through=unbuffered,
    )


if __name__ == "__main__":
    _serve(sys.argv[1])
