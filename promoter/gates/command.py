"""The ``command`` gate: a command that exits 0 (``kubectl wait ...``, a smoke test).

No shell unless ``shell: true``; the command gets PROMOTER_ENV, PROMOTER_COMMIT,
PROMOTER_PLATFORM_SHA, PROMOTER_PLATFORM_REPO, PROMOTER_PLATFORM_BRANCH,
PROMOTER_PLATFORM_PATH, PROMOTER_PLATFORM_CACHE (the promoter's local clone of the platform repo,
which holds M) and PROMOTER_CLUSTER_TYPES (a wave's, space-separated), and the promoter's own bin directory first on PATH so that
``promoter ...`` runs the same install; it never gets the promoter's repo credentials, nor the
notification receivers' URLs and keys (``PROMOTER_NOTIFICATIONS_ENV``, and the variables the
Pipeline's receivers name, which ``build_gate`` passes to ``withhold``). Each attempt runs in its
own process group, ended whole when the attempt times out.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterable
from typing import Any

from promoter.clock import format_duration, parse_duration
from promoter.gates.base import Gate, GateContext, Observation, spec_error
from promoter.masking import GATES_ENV, NOTIFICATIONS_ENV, mask
from promoter.model import Source

# The promoter's write access to the repos, its receivers' secrets (the block; the variables the
# Pipeline's receivers name are withheld too: ``withhold``), and the block the gates' variables
# came in: a health check never needs them. (Argo CD and Prometheus tokens stay:
# `argocd app wait` and friends are what gate commands are for.)
REPO_CREDENTIALS = frozenset(
    {
        "PROMOTER_GITHUB_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "PROMOTER_GITHUB_APP_PRIVATE_KEY",
        NOTIFICATIONS_ENV,
        GATES_ENV,  # its variables themselves stay: the promoter set each one (masking.load_gates_env)
    }
)


class CommandGate(Gate):
    type = "command"

    def __init__(
        self,
        argv: list[str],
        *,
        shell: bool,
        retry: bool,
        interval: float,
        attempt_timeout: float,
        source: Source,
    ) -> None:
        super().__init__(source, interval)
        self.argv = argv
        self.shell = shell
        self.retry = retry
        self.attempt_timeout = attempt_timeout
        self.withheld: frozenset[str] = frozenset()

    @classmethod
    def from_spec(cls, spec: Any, source: Source) -> CommandGate:
        if isinstance(spec, str | list):
            spec = {"run": spec}
        if not isinstance(spec, dict):
            raise spec_error(source, "command", "expects a command (string or list) or a mapping")
        unknown = set(spec) - {"run", "shell", "retry", "interval", "timeout"}
        if unknown:
            raise spec_error(source, "command", f"unknown field '{sorted(unknown)[0]}'")
        shell = _flag(spec, "shell", source)
        argv = _argv(spec.get("run"), shell, source)
        retry = _flag(spec, "retry", source)
        try:
            interval = parse_duration(spec.get("interval", "10s"))
            attempt_timeout = parse_duration(spec.get("timeout", "10m"))
        except ValueError as err:
            raise spec_error(source, "command", str(err)) from err
        return cls(
            argv,
            shell=shell,
            retry=retry,
            interval=interval,
            attempt_timeout=attempt_timeout,
            source=source,
        )

    def withhold(self, names: Iterable[str]) -> None:
        self.withheld |= frozenset(names)

    def describe(self) -> str:
        text = self.argv[0] if self.shell else shlex.join(self.argv)
        return f"command {text if len(text) <= 60 else text[:57] + '...'}"

    def environment(self, ctx: GateContext) -> dict[str, str]:
        """The promoter's environment without its own credentials and the notification
        receivers' variables, plus the promotion."""
        kept = REPO_CREDENTIALS | self.withheld
        env = {k: v for k, v in os.environ.items() if k not in kept}
        bindir = os.path.dirname(sys.executable)
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        env.update(
            PROMOTER_ENV=ctx.environment,
            PROMOTER_COMMIT=ctx.commit,
            PROMOTER_PLATFORM_SHA=ctx.platform_sha,
            PROMOTER_PLATFORM_REPO=ctx.platform_url,
            PROMOTER_PLATFORM_BRANCH=ctx.platform_branch,
            PROMOTER_PLATFORM_PATH=ctx.platform_path or ".",
            PROMOTER_CLUSTER_TYPES=" ".join(ctx.cluster_types),  # a wave's; empty: all of them
        )
        if ctx.platform is not None:  # the local clone holding M, also when the repo is a URL
            env["PROMOTER_PLATFORM_CACHE"] = str(ctx.platform.path)
        return env

    def check(self, ctx: GateContext) -> Observation:
        try:
            code, out, err = self._run(ctx)
        except OSError as error:
            return Observation("failure", f"cannot run: {error.strerror or error}")
        detail = _last_line(err) or _last_line(out)
        if code is None:
            took = format_duration(self.attempt_timeout)
            return self._not_ok(f"timed out after {took}" + (f": {detail}" if detail else ""))
        if code == 0:
            return Observation("success", _last_line(out) or "exit 0")
        return self._not_ok(f"exit {code}" + (f": {detail}" if detail else ""))

    def _run(self, ctx: GateContext) -> tuple[int | None, bytes, bytes]:
        """Exit code (None on timeout) and output. The command runs in its own process group,
        so that a timeout or an interrupt also ends what it started (a shell's children)."""
        proc = subprocess.Popen(
            self.argv if not self.shell else self.argv[0],
            shell=self.shell,
            env=self.environment(ctx),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=self.attempt_timeout)
            return proc.returncode, out, err
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            try:
                out, err = proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:  # a process left the group and holds the pipes
                out, err = b"", b""
            return None, out, err
        finally:
            if proc.poll() is None:
                _kill_group(proc)
                proc.wait()

    def _not_ok(self, message: str) -> Observation:
        return Observation("pending" if self.retry else "failure", message)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _last_line(data: bytes) -> str:
    lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
    return mask(lines[-1].strip()[:200]) if lines else ""


def _flag(spec: dict[str, Any], name: str, source: Source) -> bool:
    """A true/false field of the spec (false when not given)."""
    value = spec.get(name, False)
    if not isinstance(value, bool):
        raise spec_error(source, "command", f"'{name}' must be true or false")
    return value


def _argv(run: Any, shell: bool, source: Source) -> list[str]:
    """``run`` as the process's arguments: a string split as a shell would (or, with ``shell``,
    whole), or a list taken as it is (or, with ``shell``, joined into one command line)."""
    if isinstance(run, str) and run.strip():
        try:
            return [run] if shell else shlex.split(run)
        except ValueError as err:
            raise spec_error(source, "command", f"cannot split 'run': {err}") from err
    if isinstance(run, list) and run and all(isinstance(a, str) for a in run):
        return [shlex.join(run)] if shell else list(run)
    raise spec_error(source, "command", "'run' must be a non-empty string or list of strings")
