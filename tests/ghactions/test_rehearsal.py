"""The rehearsal's pieces (promoter/ghactions/rehearsal.py): the render job's arguments, the
step outputs read back, and a failed step ending the run with its code."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from promoter.controlplane.repo import ControlPlane
from promoter.ghactions.rehearsal import JobFailed, Rehearsal, plan_args, read_outputs


def test_the_render_job_diffs_what_the_workflow_diffs(tmp_path: Path) -> None:
    comment = f"--comment-file={tmp_path / 'promoter-diff.md'}"
    assert plan_args(None, "qa", None, False, tmp_path) == ["diff", "--no-exit-code", comment, "--to=qa"]
    assert plan_args("abc", "qa", None, True, tmp_path) == [
        "diff",
        "--no-exit-code",
        comment,
        "--commit=abc",
        "--env=qa",
    ]
    assert plan_args(None, None, "dev", False, tmp_path) == [
        "diff",
        "--no-exit-code",
        comment,
        "--env=dev",
        "--deployed-main",
    ]


def test_a_failed_step_raises_with_its_exit_code(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path / "cp")], check=True)
    said: list[str] = []
    rehearsal = Rehearsal(ControlPlane(str(tmp_path / "cp"), "main"), tmp_path, "main", said.append)
    with pytest.raises(JobFailed) as failed:
        rehearsal.job("advance", "Validate", ["validate", "--no-such-flag"])
    assert failed.value.code == 2
    assert str(failed.value) == "rehearse: job advance failed (exit 2); the jobs after it do not run"
    assert said == ["rehearse: job advance, step Validate: promoter validate --no-such-flag"]
    assert read_outputs(tmp_path / "advance.output") == {}
