"""The ``command`` gate: a command that exits 0 (``kubectl wait ...``, a smoke test).

No shell unless ``shell: true``; the command gets PROMOTER_ENV, PROMOTER_COMMIT,
PROMOTER_PLATFORM_SHA, PROMOTER_PLATFORM_REPO, PROMOTER_PLATFORM_BRANCH and
PROMOTER_PLATFORM_PATH, and the promoter's
own bin directory first on PATH so that ``promoter ...`` runs the same install.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from typing import Any

from promoter.clock import parse_duration
from promoter.gates.base import Gate, GateContext, Observation, spec_error
from promoter.masking import mask
from promoter.model import Source


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

    @classmethod
    def from_spec(cls, spec: Any, source: Source) -> CommandGate:
        if isinstance(spec, str | list):
            spec = {"run": spec}
        if not isinstance(spec, dict):
            raise spec_error(source, "command", "expects a command (string or list) or a mapping")
        unknown = set(spec) - {"run", "shell", "retry", "interval", "timeout"}
        if unknown:
            raise spec_error(source, "command", f"unknown field '{sorted(unknown)[0]}'")
        run = spec.get("run")
        shell = spec.get("shell", False)
        if not isinstance(shell, bool):
            raise spec_error(source, "command", "'shell' must be true or false")
        if isinstance(run, str) and run.strip():
            try:
                argv = [run] if shell else shlex.split(run)
            except ValueError as err:
                raise spec_error(source, "command", f"cannot split 'run': {err}") from err
        elif isinstance(run, list) and run and all(isinstance(a, str) for a in run):
            argv = [shlex.join(run)] if shell else list(run)
        else:
            raise spec_error(source, "command", "'run' must be a non-empty string or list of strings")
        retry = spec.get("retry", False)
        if not isinstance(retry, bool):
            raise spec_error(source, "command", "'retry' must be true or false")
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

    def describe(self) -> str:
        text = self.argv[0] if self.shell else shlex.join(self.argv)
        return f"command {text if len(text) <= 60 else text[:57] + '...'}"

    def environment(self, ctx: GateContext) -> dict[str, str]:
        env = dict(os.environ)
        bindir = os.path.dirname(sys.executable)
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        env.update(
            PROMOTER_ENV=ctx.environment,
            PROMOTER_COMMIT=ctx.commit,
            PROMOTER_PLATFORM_SHA=ctx.platform_sha,
            PROMOTER_PLATFORM_REPO=ctx.platform_url,
            PROMOTER_PLATFORM_BRANCH=ctx.platform_branch,
            PROMOTER_PLATFORM_PATH=ctx.platform_path or ".",
        )
        return env

    def check(self, ctx: GateContext) -> Observation:
        try:
            proc = subprocess.run(
                self.argv if not self.shell else self.argv[0],
                shell=self.shell,
                env=self.environment(ctx),
                capture_output=True,
                timeout=self.attempt_timeout,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return self._not_ok(f"timed out after {self.attempt_timeout:.0f}s")
        except OSError as err:
            return Observation("failure", f"cannot run: {err.strerror or err}")
        if proc.returncode == 0:
            return Observation("success", _last_line(proc.stdout) or "exit 0")
        detail = _last_line(proc.stderr) or _last_line(proc.stdout)
        return self._not_ok(f"exit {proc.returncode}" + (f": {detail}" if detail else ""))

    def _not_ok(self, message: str) -> Observation:
        return Observation("pending" if self.retry else "failure", message)


def _last_line(data: bytes) -> str:
    lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
    return mask(lines[-1].strip()[:200]) if lines else ""
