"""``promoter promote`` on Kalypso's own sample (docs/kalypso.md#promote): the environment order
from ``--environments`` or an environments file, each environment's GitOps branch from its
GitOpsRepo (here a bare ``file://`` repo, so the local forge lands and gates), and the tree
Kalypso's scheduler would commit landed there."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.demos.promotion import commit_folder
from promoter.gitcmd import Git
from promoter.platform.repo import PlatformRepo
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage
from tests.support.kalypso_repos import (
    SAMPLE_MAIN_SHA,
    build_current,
    build_sample,
    expected_current,
    expected_tree,
    tree_of,
)

LEFTOVERS = {
    ".github/workflows/check-promote.yaml": b"name: check\n",
    "manifests-statement.txt": b"kept\n",
    "retired/old-app/reconciler.yaml": b"kind: Old\n",
}


def sample_with_gitops(root: Path) -> tuple[Path, str, Path]:
    """The sample, its GitOpsRepos pointed at a bare repo whose dev branch holds what Kalypso
    committed (tracking the sample's own main commit) and some files of its own."""
    cp, main_sha = build_sample(root / "repos")
    files = {**expected_tree("dev", SAMPLE_MAIN_SHA), **LEFTOVERS}
    gitops = with_gitops(root, cp, files, "https://github.com/microsoft/kalypso-gitops", ("dev", "stage"))
    return cp, main_sha, gitops


def with_gitops(root: Path, cp: Path, files: dict[str, bytes], url: str, envs: tuple[str, ...]) -> Path:
    """A bare GitOps repo whose dev branch holds ``files``, the GitOpsRepo of each of ``envs``
    (on its branch of control plane ``cp``) pointed at it instead of ``url``."""
    gitops = root / "kalypso-gitops.git"
    Git(root).run("init", "--quiet", "--bare", "--initial-branch=main", str(gitops))
    seed = root / "gitops-src"
    for path, data in files.items():
        (seed / path).parent.mkdir(parents=True, exist_ok=True)
        (seed / path).write_bytes(data)
    commit_folder(Git(gitops), seed, "dev", "Kalypso Scheduler commit")
    git = Git(cp)
    for env in envs:
        git.run("checkout", "--quiet", env)
        text = (cp / "gitops-repo.yaml").read_text()
        (cp / "gitops-repo.yaml").write_text(text.replace(url, f"file://{gitops}"))
        git.run("commit", "--quiet", "-am", f"{env}: the GitOps repo of this test")
    git.run("checkout", "--quiet", "main")
    return gitops


def branch_files(repo: Path, branch: str) -> dict[str, bytes]:
    git = Git(repo)
    entries = [e for e in git.ls_tree(branch) if e.type == "blob"]
    blobs = git.read_blobs(e.sha for e in entries)
    return {e.path: blobs[e.sha] for e in entries}


def promote(cp: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(cp), "--poll-interval", "0s", *args])
    return result.exit_code, result.output


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


ENVIRONMENTS = """\
apiVersion: promoter.dev/v1alpha1
kind: Pipeline
metadata:
  name: kalypso-order
spec:
  environments:
    - name: dev
      merge: direct
      gates: [{command: ["true"]}]
    - name: stage
      timeout: 5m
"""


def test_promote_lands_the_scheduler_tree_in_each_environment(tmp_path: Path) -> None:
    cp, main_sha, gitops = sample_with_gitops(tmp_path)
    code, output = promote(cp, "--environments-file", write(tmp_path / "order.yaml", ENVIRONMENTS))
    assert code == 0, output
    assert f"promoting main {main_sha[:12]}" in output  # the BaseRepo's commit: no --commit given
    assert "dev: rendered 17 files for 4 assignments on 4 cluster types (+0 ~1 -1)" in output
    assert "dev: pushed" in output and "straight to dev (merge: direct)" in output
    assert "dev: gate command true: success" in output
    assert "stage: PR " in output and "(auto merge)" in output and "stage: merged" in output

    dev = branch_files(gitops, "dev")
    provenance = dev.pop(".promoter/promotion.yaml").decode()
    assert f"mainCommit: {main_sha}" in provenance and "pipeline: kalypso" in provenance
    app = Git(tmp_path / "repos" / "kalypso-app-src").commit_of("refs/heads/main")
    assert f"workloadRepos:\n  hello-world-app: {app}\n" in provenance  # the workload repo's commit rendered
    kept = {k: v for k, v in LEFTOVERS.items() if not k.startswith("retired/")}
    assert dev == {**expected_tree("dev", main_sha), **kept}  # stale 'retired/' removed, the rest kept
    # dev merges directly: one commit on top of Kalypso's
    assert len(Git(gitops).out("rev-list", "dev").split()) == 2

    out = tmp_path / "stage-render"
    rendered = CliRunner().invoke(
        cli, ["render", "--control-plane", str(cp), "--env", "stage", "--commit", main_sha, "--out", str(out)]
    )
    assert rendered.exit_code == 0, rendered.output
    stage = branch_files(gitops, "stage")
    assert ".promoter/promotion.yaml" in stage
    del stage[".promoter/promotion.yaml"]
    assert stage == tree_of(out)  # stage gets the promoted main commit, through a merged PR
    # its tracked main commit changed: the PR is labelled `promoted`, as Kalypso's would be
    labels = Git(gitops).out("notes", "--ref=promoter-labels", "show", "promoter/stage")
    assert labels.split() == ["promoted"]

    again_code, again = promote(cp, "--environments", "dev,stage")
    assert again_code == 0, again
    assert "dev: already promoted" in again and "stage: already promoted" in again

    # the scheduling flow renders dev again with the main commit its BaseRepo pins: no change
    code, scheduled = promote(cp, "--environments", "dev,stage", "--schedule", "dev")
    assert code == 0, scheduled
    assert f"scheduling dev with main {main_sha[:12]}" in scheduled
    assert "dev: no changes; dev is already at this content" in scheduled


def test_a_run_killed_after_its_first_push_is_finished_by_a_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cp, main_sha, gitops = sample_with_gitops(tmp_path)

    class Died(BaseException):
        """Stands for SIGKILL."""

    real_push = PlatformRepo.push

    def push_then_die(self: PlatformRepo, updates: object) -> None:
        real_push(self, updates)  # type: ignore[arg-type]
        raise Died("killed after the first push")

    with monkeypatch.context() as patch:
        patch.setattr(PlatformRepo, "push", push_then_die)
        with pytest.raises(Died):
            CliRunner().invoke(
                cli, ["promote", "--control-plane", str(cp), "--environments", "dev"], catch_exceptions=False
            )
    assert "promoter/dev" in Git(gitops).out("branch", "--list", "promoter/dev")
    code, output = promote(cp, "--environments", "dev,stage")
    assert code == 0, output
    assert "promoter/dev is already at this promotion" in output
    assert f"mainCommit: {main_sha}" in branch_files(gitops, "dev")[".promoter/promotion.yaml"].decode()
    assert f"mainCommit: {main_sha}" in branch_files(gitops, "stage")[".promoter/promotion.yaml"].decode()
    merges = subprocess.run(
        ["git", "-C", str(gitops), "rev-list", "--merges", "dev"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert len(merges) == 1  # landed once


def test_a_given_commit_is_promoted_instead_of_the_base_repo_one(tmp_path: Path) -> None:
    cp, _, gitops = sample_with_gitops(tmp_path)
    git = Git(cp)
    (cp / "NOTES.md").write_text("later\n")
    git.run("add", "NOTES.md")
    git.run("commit", "-q", "-m", "later")
    later = git.commit_of("HEAD")
    assert later is not None
    code, output = promote(cp, "--environments", "dev", "--commit", later)
    assert code == 0, output
    assert branch_files(gitops, "dev")[".github/tracking/Promoted_Commit_Id"] == later.encode()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "a Kalypso control plane keeps no order of environments in git: give --environments"),
        (("--environments", "dev,"), "--environments dev,: a comma-separated list of environment names"),
        (("--environments", "dev,dev"), "environment 'dev' is listed twice"),
        (("--environments", "dev,prod"), "environment 'prod': main"),
        (
            ("--environments", "dev", "--schedule", "stage"),
            "--schedule stage: not among the environments given (dev)",
        ),
        (("--environments", "Dev_1"), "error: --environments: [0].name: invalid name 'Dev_1'"),
        (("--environments", "dev", "--environments-file", "x.yaml"), "exclude each other"),
        (("--environments-file", "/nonexistent/order.yaml"), "--environments-file /nonexistent/order.yaml:"),
    ],
)
def test_bad_orders_are_usage_errors(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    cp, _, gitops = sample_with_gitops(tmp_path)
    before = Git(gitops).out("for-each-ref")
    code, output = promote(cp, *args)
    assert code == 2, output
    assert message in output
    assert Git(gitops).out("for-each-ref") == before  # nothing pushed


def test_an_environments_file_says_only_what_kalypso_does_not(tmp_path: Path) -> None:
    cp, _, _ = sample_with_gitops(tmp_path)
    bad = ENVIRONMENTS.replace("      timeout: 5m\n", "      gitops: {branch: other}\n")
    path = write(tmp_path / "order.yaml", bad)
    code, output = promote(cp, "--environments-file", path)
    assert code == 2, output
    assert output.startswith(f"error: {path}:11: spec.environments[1].gitops: Kalypso's files say this")
    path = write(tmp_path / "two.yaml", "kind: Workload\n")
    code, output = promote(cp, "--environments-file", path)
    assert code == 2 and "must hold one Pipeline" in output


def test_the_kalypso_flags_are_refused_on_a_promoter_control_plane(tmp_path: Path) -> None:
    path = ControlPlaneFactory(tmp_path).create(
        {"promoter.yaml": pipeline(stage("dev")), "workloads/app.yaml": WORKLOAD}, platform_branches=("dev",)
    )
    code, output = promote(path, "--environments", "dev")
    assert code == 2
    assert "are for a Kalypso control plane" in output


def test_a_dry_run_pushes_nothing(tmp_path: Path) -> None:
    cp, _, gitops = sample_with_gitops(tmp_path)
    before = Git(gitops).out("for-each-ref")
    code, output = promote(cp, "--environments", "dev,stage", "--dry-run")
    assert code == 0, output
    assert "dev: dry run: would push promoter/dev and merge into dev (auto)" in output
    assert Git(gitops).out("for-each-ref") == before


def test_environments_rendering_to_two_repos_are_promoted_in_one_run(tmp_path: Path) -> None:
    cp, _, gitops = sample_with_gitops(tmp_path)
    other = tmp_path / "other.git"
    Git(tmp_path).run("init", "--quiet", "--bare", "--initial-branch=main", str(other))
    git = Git(cp)
    git.run("checkout", "--quiet", "stage")
    text = (cp / "gitops-repo.yaml").read_text()
    (cp / "gitops-repo.yaml").write_text(text.replace(f"file://{gitops}", f"file://{other}"))
    git.run("commit", "--quiet", "-am", "stage renders elsewhere")
    git.run("checkout", "--quiet", "main")
    code, output = promote(cp, "--environments", "dev,stage")
    assert code == 0, output
    stage_branch = Git(other).out("for-each-ref", "--format=%(refname:short)", "refs/heads").split()
    assert "stage" in stage_branch  # stage landed in its own repo
    assert "stage" not in Git(gitops).out("for-each-ref", "--format=%(refname:short)", "refs/heads").split()
    assert ".github/tracking/Promoted_Commit_Id" in branch_files(other, "stage")


def test_environments_on_two_forges_are_promoted_in_separate_runs(tmp_path: Path) -> None:
    cp, _, gitops = sample_with_gitops(tmp_path)
    git = Git(cp)
    git.run("checkout", "--quiet", "stage")
    text = (cp / "gitops-repo.yaml").read_text()
    (cp / "gitops-repo.yaml").write_text(
        text.replace(f"file://{gitops}", "https://github.com/org/stage-gitops")
    )
    git.run("commit", "--quiet", "-am", "stage renders on GitHub")
    git.run("checkout", "--quiet", "main")
    code, output = promote(cp, "--environments", "dev,stage")
    assert code == 2, output
    assert output.startswith("error: stage:gitops-repo.yaml:")
    assert (
        "renders to https://github.com/org/stage-gitops, on another forge than the environments before it"
        in output
    )


def test_status_on_a_kalypso_control_plane_points_at_convert(tmp_path: Path) -> None:
    cp, _, _ = sample_with_gitops(tmp_path)
    result = CliRunner().invoke(cli, ["status", "--control-plane", str(cp)])
    assert result.exit_code == 2
    assert "validate, render, diff and promote read a Kalypso control plane" in result.output
    assert "promoter convert --from kalypso" in result.output


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        (
            "      merge: direct\n",
            "      merge: sometimes\n",
            ":8: spec.environments[0].merge: must be one of",
        ),
        ("      timeout: 5m\n", "      timeout: soon\n", ":11: spec.environments[1].timeout:"),
        (
            '[{command: ["true"]}]',
            "[{pray: {}}]",
            ":9: spec.environments[0]: unknown gate 'pray'; known: argocd",
        ),
        (
            "      timeout: 5m\n",
            "      waves: []\n",
            ":11: spec.environments[1].waves: Kalypso's files say this",
        ),
        (
            "  name: kalypso-order\n",
            "  name: kalypso-order\n  extra: 1\n",
            ":5: unknown field 'metadata.extra'",
        ),
    ],
)
def test_bad_environments_files_are_named(tmp_path: Path, old: str, new: str, says: str) -> None:
    cp, _, gitops = sample_with_gitops(tmp_path)
    assert ENVIRONMENTS.count(old) == 1
    path = write(tmp_path / "order.yaml", ENVIRONMENTS.replace(old, new))
    before = Git(gitops).out("for-each-ref")
    code, output = promote(cp, "--environments-file", path)
    assert code == 2, output
    assert output.startswith(f"error: {path}{says}"), output
    assert len(output.splitlines()) == 1
    assert Git(gitops).out("for-each-ref") == before


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("file:///nonexistent/gitops.git", "spec.repo: no git repository at /nonexistent/gitops.git"),
        ("https://gitlab.example.com/team/gitops", "neither a local path or file:// URL nor on GitHub"),
    ],
)
def test_a_gitops_repo_promoter_cannot_land_in_is_named_at_the_gitops_repo(
    tmp_path: Path, url: str, says: str
) -> None:
    cp, _, gitops = sample_with_gitops(tmp_path)
    git = Git(cp)
    git.run("checkout", "--quiet", "dev")
    text = (cp / "gitops-repo.yaml").read_text()
    (cp / "gitops-repo.yaml").write_text(text.replace(f"file://{gitops}", url))
    git.run("commit", "--quiet", "-am", "dev renders elsewhere")
    git.run("checkout", "--quiet", "main")
    code, output = promote(cp, "--environments", "dev")
    assert code == 2, output
    assert output.startswith("error: dev:gitops-repo.yaml:1: ") and says in output


def test_the_current_scheduler_keeps_what_its_commit_does_not_rewrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Since 2024 the scheduler builds its commit on the branch head (``getTree``): a file in a
    deployment-target folder that is still placed there stays; a file under a cluster type
    that is gone, a target no longer placed, or beside the targets goes."""
    monkeypatch.delenv("PROMOTER_KALYPSO_NAMING")
    cp, main_sha = build_current(tmp_path / "repos")
    kept = {"east-large/observability-dev/runbook.md": b"# Not YAML, and not Kalypso's\n"}
    gone = {
        "east-large/retired-target/reconciler.yaml": b"kind: Old\n",
        "retired-type/app/reconciler.yaml": b"kind: Old\n",
        "east-large/notes.txt": b"beside the targets\n",
    }
    files = {**expected_current("dev", main_sha), **kept, **gone}
    gitops = with_gitops(tmp_path, cp, files, "https://github.com/contoso/kalypso-gitops", ("dev",))
    order = write(tmp_path / "order.yaml", ENVIRONMENTS.split("    - name: stage")[0])

    code, output = promote(cp, "--environments-file", order)

    assert code == 0, output
    rendered = len(expected_current("dev", main_sha))
    assert f"dev: rendered {rendered} files" in output  # the kept file is not counted as rendered
    dev = branch_files(gitops, "dev")
    assert f"mainCommit: {main_sha}" in dev.pop(".promoter/promotion.yaml").decode()
    assert dev == {**expected_current("dev", main_sha), **kept}
