"""check-platform's provenance check stays strict: a tree passes for the main commit its
provenance names, and for no other. A promotion that finds a platform branch already holding
its render from an earlier main commit tells the gate that commit (tests/promotion/
test_fresh_clone.py), so the check never needs to be loose."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.gitcmd import Git
from promoter.platform.checks import check_tree
from tests.support.helpers import Commit, import_commits

W, X = "a" * 40, "b" * 40


def platform(tmp_path: Path, provenance: str | None) -> tuple[Git, str]:
    repo = tmp_path / "platform.git"
    Git(tmp_path).run("init", "-q", "--bare", operands=[str(repo)])
    files = {"README.md": "platform\n"}
    if provenance is not None:
        files[".promoter/promotion.yaml"] = provenance
    (sha,) = import_commits(repo, [Commit("dev", files, "render")])
    return Git(repo), sha


def test_the_provenance_must_name_the_commit_it_is_told(tmp_path: Path) -> None:
    git, sha = platform(tmp_path, f"kind: Promotion\nmainCommit: {W}\n")
    assert check_tree(git, sha, "", W).problems == []
    assert check_tree(git, sha, "", None).problems == []
    assert check_tree(git, sha, "", X).problems == [
        f".promoter/promotion.yaml: main commit is {W}, expected {X}"
    ]


def test_a_tree_without_provenance_fails(tmp_path: Path) -> None:
    git, sha = platform(tmp_path, None)
    assert check_tree(git, sha, "", W).problems == [".promoter/promotion.yaml: missing"]


def test_the_command_exits_1_on_a_mismatch(tmp_path: Path) -> None:
    git, _ = platform(tmp_path, f"kind: Promotion\nmainCommit: {W}\n")
    args = ["check-platform", "--repo", str(git.path), "--ref", "dev", "--expect-commit"]
    ok = CliRunner().invoke(cli, [*args, W])
    assert ok.exit_code == 0 and ok.output.startswith("ok: 0 manifests in 0 folders at "), ok.output
    wrong = CliRunner().invoke(cli, [*args, X])
    assert wrong.exit_code == 1
    assert f"problem: .promoter/promotion.yaml: main commit is {W}, expected {X}" in wrong.output
