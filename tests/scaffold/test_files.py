"""What ``promoter init`` writes and how (promoter/scaffold/files.py, steps.py): every file of a
branch, all written or none, and the next steps said."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from promoter.errors import UsageError
from promoter.scaffold.files import HOLD_WORKFLOW, PLATFORM_FOLDER, files_of, write
from promoter.scaffold.setup import setup_of
from promoter.scaffold.steps import again, next_steps
from promoter.scaffold.workflows import Setup

SHA = "5e1f4c2a9b7d3e8f6a0c1b2d4e6f8a0b1c3d5e7f"


def _setup(environments: str = "dev,qa,prod") -> Setup:
    notes: list[str] = []
    setup = setup_of("acme/promoter", SHA, "v0.1.0", "app", environments, "main", False, notes.append)
    assert notes == []  # a full SHA and --environments: nothing looked up
    return setup


def test_every_branch_gets_its_files_and_the_platform_repo_its_wake_up() -> None:
    files = files_of(_setup(), ["main", "dev"], True, "https://github.com/acme/platform", nested=True)
    assert f"main/{HOLD_WORKFLOW}" in files and "main/promoter.yaml" in files
    assert any(p.startswith("dev/.github/workflows/") for p in files)
    assert not any(p.startswith(f"dev/{HOLD_WORKFLOW}") for p in files)  # the on-call's form is main's
    assert any(p.startswith(f"{PLATFORM_FOLDER}/") for p in files)
    alone = files_of(_setup(), ["dev"], False, "", nested=False)
    assert "promoter.yaml" not in alone and not any(p.startswith(PLATFORM_FOLDER) for p in alone)


def test_a_clash_writes_nothing_and_force_replaces_it(tmp_path: Path) -> None:
    (tmp_path / "a.yml").write_text("mine\n")
    files = {"a.yml": "theirs\n", "sub/b.yml": "new\n", "c.yml": "same\n"}
    (tmp_path / "c.yml").write_text("same\n")
    with pytest.raises(UsageError, match=r"a\.yml exists with other content \(1 file\); nothing written"):
        write(tmp_path, files, force=False)
    assert (tmp_path / "a.yml").read_text() == "mine\n" and not (tmp_path / "sub").exists()
    states = write(tmp_path, files, force=True)
    assert states == [("a.yml", "replaced"), ("sub/b.yml", "wrote"), ("c.yml", "unchanged")]
    assert (tmp_path / "a.yml").read_text() == "theirs\n" and (tmp_path / "sub/b.yml").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.yml", "b.yml", "c.yml", "sub"]  # no temp left


def test_a_symlink_in_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("x")
    (tmp_path / "a.yml").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UsageError, match="exists and is not a regular file; nothing written"):
        write(tmp_path, {"a.yml": "x"}, force=True)


def test_the_next_steps_name_the_command_for_the_other_branches(tmp_path: Path) -> None:
    setup = _setup()
    steps = next_steps(setup, tmp_path, ["dev"], None, False, None)
    assert steps[0] == "commit these files to dev (through a pull request)"
    assert steps[1].startswith("check out each other branch (main, qa, prod) in turn and run: promoter init")
    assert shlex.split(again(setup, False, None)) == [
        "promoter", "init", "--promoter-repo", "acme/promoter", "--ref", SHA, "--tag", "v0.1.0",
        "--environments", "dev,qa,prod",
    ]  # fmt: skip
    nested = next_steps(setup, tmp_path, ["main", "dev", "qa", "prod"], str(tmp_path), True, "u")
    assert nested[0].startswith(f"commit {tmp_path / 'main'}/ to main and {tmp_path}/<branch>/")
    assert nested[-1] == "edit promoter.yaml's gates and the Workload's repo, then: promoter validate"
