"""Conventions users of gh and of git know: GH_TOKEN, a retried notes lock, what Ctrl-C says."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import promoter.promotion.environment as environment_module
from promoter.cli.main import cli
from promoter.clock import FakeClock
from promoter.errors import GitError
from promoter.forges.github.api import GitHubHttp
from promoter.forges.github.auth import StaticToken, credentials_from_env
from promoter.forges.notes import NoteStatuses
from promoter.gates import GateContext
from promoter.gates.command import CommandGate
from promoter.gitcmd import Git
from promoter.masking import mask
from promoter.model import Source, Status
from tests.support.helpers import ControlPlaneFactory


def test_gh_token_is_accepted_after_the_promoters_own() -> None:
    http = GitHubHttp("https://api.github.com", FakeClock())
    found = credentials_from_env(http, {"GH_TOKEN": "gho_fromghcli0123456789"})
    assert isinstance(found, StaticToken) and found.token("o/r") == "gho_fromghcli0123456789"
    both = credentials_from_env(
        http, {"GH_TOKEN": "gho_second0123456789", "PROMOTER_GITHUB_TOKEN": "ghp_first0123456789"}
    )
    assert both.token("o/r") == "ghp_first0123456789"


def test_gh_token_is_masked_and_kept_from_gate_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GH_TOKEN", "gho_secret0123456789abc")
    assert mask("token gho_secret0123456789abc here") == "token *** here"
    ctx = GateContext("dev", "x" * 40, "y" * 40, "/p", "dev", FakeClock())
    assert "GH_TOKEN" not in CommandGate.from_spec("true", Source("promoter.yaml", 1)).environment(ctx)


def test_a_locked_notes_ref_is_tried_again(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = factory.create()
    git = Git(path)
    sha = git.out("rev-parse", "main")
    original = git.run
    failures = [2]

    def flaky(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        if "append" in args and failures[0]:
            failures[0] -= 1
            return subprocess.CompletedProcess(
                list(args), 1, b"", b"error: cannot lock ref 'refs/notes/promoter'"
            )
        return original(*args, **kwargs)

    monkeypatch.setattr(git, "run", flaky)
    notes = NoteStatuses(git)
    notes.post(sha, Status("promoter/dev", "success", "ok"))
    assert failures == [0]
    assert notes.latest(sha)["promoter/dev"].state == "success"


def test_a_notes_ref_locked_for_good_is_named(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = factory.create()
    git = Git(path)
    sha = git.out("rev-parse", "main")
    monkeypatch.setattr("tenacity.nap.time.sleep", lambda seconds: None)
    monkeypatch.setattr(
        git, "run", lambda *a, **k: subprocess.CompletedProcess(list(a), 1, b"", b"error: cannot lock ref")
    )
    with pytest.raises(GitError, match=r"cannot write a status note .*: error: cannot lock ref"):
        NoteStatuses(git).post(sha, Status("promoter/dev", "success", "ok"))


def test_ctrl_c_says_what_to_do(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))

    def interrupt(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(environment_module, "render_environment", interrupt)
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path)])
    assert result.exit_code == 130
    assert result.stderr == "interrupted; nothing is left half-done: run the same command again to go on\n"


def test_sigterm_says_what_to_do_as_ctrl_c_does(tmp_path: Path) -> None:
    """A cancelled CI job or ``kill`` sends SIGTERM: one line, exit 143 (128 + 15), as a shell counts."""
    run = subprocess.Popen(
        [sys.executable, "-m", "promoter", "demo", "--dir", str(tmp_path / "demo")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert run.stdout is not None
    for line in run.stdout:  # promoting has started: the signal lands in the middle of a run
        if line.startswith("promoting main "):
            break
    run.send_signal(signal.SIGTERM)
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 143, stderr
    assert stderr == "terminated; nothing is left half-done: run the same command again to go on\n"
