"""A crash in a job: the runner, and the crash log on it, are gone after the job, so
actions/run.sh prints the traceback (secrets masked) into the job log in a collapsed group,
with workflow commands stopped while it prints, and names the failure in the step summary."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

SECRET = "ghp_crashSECRETcrashSECRET0123456789"

# The real CLI, failing unexpectedly; its message holds a secret (registered
# for masking, as the promoter registers tokens) and a line that looks like a workflow command.
CRASHING = f"""
import promoter.cli.main as main
from promoter.masking import register_secret

register_secret({SECRET!r})

def boom():
    raise RuntimeError("token {SECRET} refused\\n::error::not a command")

main.require_git = boom  # the first thing every command calls
main.cli(["validate"], prog_name="promoter")
"""


def run(tmp_path: Path, script: str) -> tuple[subprocess.CompletedProcess[str], str]:
    promoter = tmp_path / "promoter"
    promoter.write_text(f"#!{sys.executable}\n{script}")
    promoter.chmod(0o755)
    summary = tmp_path / "summary.md"
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    env = {
        **os.environ,
        "PROMOTER": str(promoter),
        "RUNNER_TEMP": str(temp),
        "GITHUB_STEP_SUMMARY": str(summary),
        "PYTHONPATH": str(ROOT),
    }
    proc = subprocess.run(
        ["bash", str(ROOT / "actions" / "run.sh")], capture_output=True, text=True, env=env, check=False
    )
    assert list(temp.iterdir()) == []  # nothing left behind
    return proc, summary.read_text() if summary.exists() else ""


def test_a_crash_prints_its_masked_traceback_into_the_job_log(tmp_path: Path) -> None:
    proc, summary = run(tmp_path, CRASHING)

    assert proc.returncode == 3
    assert "error: unexpected failure (a bug); the traceback is in " in proc.stderr
    out = proc.stdout.splitlines()
    annotation = (
        "::error title=promoter crashed::an unexpected failure, a bug in the promoter: ::error::not a command"
    )
    assert out[0] == annotation
    assert out[1] == "::group::promoter crash: the traceback (secrets masked)"
    stop = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", out[2])
    assert stop, out[2]
    end = out.index(f"::{stop.group(1)}::")
    traceback = out[3:end]
    assert traceback[0] == "Traceback (most recent call last):"
    assert "RuntimeError: token *** refused" in traceback
    assert "::error::not a command" in traceback  # printed while commands are stopped
    assert out[end + 1 :] == ["::endgroup::"]
    assert SECRET not in proc.stdout + proc.stderr + summary
    assert summary.startswith("### promoter crashed\n")
    assert "```text\n::error::not a command\n```" in summary


def test_other_exit_codes_pass_through_untouched(tmp_path: Path) -> None:
    proc, summary = run(tmp_path, "import sys\nprint('fine')\nsys.exit(1)\n")
    assert (proc.returncode, proc.stdout, summary) == (1, "fine\n", "")
