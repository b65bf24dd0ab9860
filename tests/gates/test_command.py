"""The command gate: what it runs, what it is given, and what is left of it after a timeout."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from promoter.clock import FakeClock
from promoter.gates import GateContext
from promoter.gates.command import CommandGate
from promoter.model import Source

SRC = Source("promoter.yaml", 9)


def _ctx() -> GateContext:
    return GateContext("qa", "c" * 40, "m" * 40, "/srv/platform.git", "qa", FakeClock(0), "envs/qa")


def _gone(pid: int) -> bool:
    """No such process, or a zombie waiting to be reaped (killed either way)."""
    stat = Path(f"/proc/{pid}/stat")
    if not stat.exists():
        return True
    return stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_a_timed_out_attempt_ends_everything_it_started(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    gate = CommandGate.from_spec(
        {"run": f"sleep 60 & echo $! > {pidfile}; echo started; wait", "shell": True, "timeout": "1s"}, SRC
    )
    observation = gate.check(_ctx())
    assert (observation.state, observation.message) == ("failure", "timed out after 1.0s: started")
    pid = int(pidfile.read_text())
    for _ in range(100):  # SIGKILL is sent before check returns; the reaping may lag a little
        if _gone(pid):
            break
        time.sleep(0.05)
    assert _gone(pid), f"the shell's child {pid} outlived the attempt"


def test_the_whole_promotion_is_in_the_environment(tmp_path: Path) -> None:
    out = tmp_path / "env"
    names = ("PROMOTER_ENV", "PROMOTER_COMMIT", "PROMOTER_PLATFORM_SHA", "PROMOTER_PLATFORM_REPO")
    names += ("PROMOTER_PLATFORM_BRANCH", "PROMOTER_PLATFORM_PATH")
    script = f"import os; open({str(out)!r}, 'w').write(' '.join(os.environ[k] for k in {names!r}))"
    gate = CommandGate.from_spec([sys.executable, "-c", script], SRC)
    assert gate.check(_ctx()).state == "success"
    assert out.read_text() == f"qa {'c' * 40} {'m' * 40} /srv/platform.git qa envs/qa"


def test_failure_shows_the_last_line_of_error_output() -> None:
    gate = CommandGate.from_spec(
        [sys.executable, "-c", "import sys; print('checking'); sys.exit('error: deployment api not ready')"],
        SRC,
    )
    observation = gate.check(_ctx())
    assert (observation.state, observation.message) == ("failure", "exit 1: error: deployment api not ready")


def test_a_command_that_cannot_start_fails_even_with_retry() -> None:
    gate = CommandGate.from_spec({"run": ["/nonexistent/kubectl", "wait"], "retry": True}, SRC)
    observation = gate.check(_ctx())
    assert (observation.state, observation.message) == ("failure", "cannot run: No such file or directory")
