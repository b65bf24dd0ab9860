"""A teammate's fresh clone makes the same decisions as the clone that ran before it (issue 48,
DESIGN section 6): the statuses are read from the control plane's origin and written back to
it, and content a platform branch already holds from an earlier main commit is a no-op for the
new commit, never a failed gate. Real git, a bare ``file://`` origin, the CLI in-process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from promoter.cli.main import cli
from promoter.forges.notes import NOTES_REF, NoteStatuses
from promoter.gitcmd import Git
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage

CHECK = '[{command: ["promoter", "check-platform"]}]'
PIPELINE = pipeline(stage("dev", gates=CHECK), "qa", stage("prod", gates=CHECK))
PROD_ONLY = WORKLOAD.replace("path: ./prod}", "path: ./prod-eu}")


def promote(path: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--poll-interval", "1s", *args])


def commit(path: Path, files: dict[str, str], message: str) -> str:
    """A commit on main in a working clone, pushed to its origin, as a teammate makes one."""
    for name, text in files.items():
        (path / name).write_text(text)
    git = Git(path)
    git.run("commit", "-q", "-a", "-m", message)
    git.run("push", "-q", operands=["origin", "main"])
    return git.out("rev-parse", "HEAD")


def statuses(path: Path, commit: str) -> dict[str, tuple[str, str]]:
    """What ``promoter status`` says of each environment for ``commit`` in the clone at ``path``
    (a run of its own: it reads the origin first)."""
    result = CliRunner().invoke(
        cli, ["status", "--control-plane", str(path), "--commit", commit, "--output", "json"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["environments"]
    return {row["environment"]: (row["state"], row["description"]) for row in rows}


@pytest.fixture
def first(factory: ControlPlaneFactory) -> tuple[Path, str]:
    """Clone A, with a shared origin, after promoting main (W) through every environment."""
    path = factory.create(
        main={"promoter.yaml": PIPELINE, "workloads/app.yaml": WORKLOAD},
        platform_branches=("dev", "qa", "prod"),
    )
    factory.with_origin()
    w = Git(path).out("rev-parse", "main")
    result = promote(path)
    assert result.exit_code == 0, result.output
    return path, w


def test_a_fresh_clone_makes_the_same_decisions(
    factory: ControlPlaneFactory, first: tuple[Path, str]
) -> None:
    """The issue's run: a fresh clone, a commit that changes prod alone, ``promote --to dev``."""
    a, w = first
    origin = factory.root / "control-plane.git"
    assert Git(origin).rev_parse(NOTES_REF) == Git(a).rev_parse(NOTES_REF)  # A pushed its statuses
    b = factory.clone("b")
    x = commit(b, {"workloads/app.yaml": PROD_ONLY}, "prod-eu only")

    # What A would decide for X, asked without a side effect
    Git(a).run("pull", "-q", "--ff-only", "origin", "main")
    planned = promote(a, "--to", "dev", "--dry-run")
    said = f"dev: no changes; dev already has this content (promoted with main {w[:12]})"
    assert planned.exit_code == 0 and said in planned.output, planned.output

    result = promote(b, "--to", "dev")
    assert result.exit_code == 0, result.output
    assert said in result.output
    assert "checking gates" not in result.output and "FAILED" not in result.output
    came = f"no changes (dev already has this content, promoted with main {w[:12]})"
    assert statuses(b, x)["dev"] == ("success", came)

    rest = promote(b)  # qa holds the same render too; prod changes
    assert rest.exit_code == 0, rest.output
    assert f"qa: no changes; qa already has this content (promoted with main {w[:12]})" in rest.output
    assert "prod: gate command promoter check-platform: success" in rest.output
    seen_by_b = statuses(b, x)
    assert [state for state, _ in seen_by_b.values()] == ["success"] * 3

    assert statuses(a, x) == seen_by_b  # A's next run reads what B wrote
    again = promote(a)
    assert again.exit_code == 0, again.output
    assert [line.split()[:2] for line in again.output.splitlines()[-3:]] == [
        [env, "skipped"] for env in ("dev", "qa", "prod")
    ]


@pytest.mark.parametrize("wait", ["all", "none"])
def test_content_an_earlier_commit_left_unproven_is_gated_not_failed(
    factory: ControlPlaneFactory, tmp_path: Path, wait: str
) -> None:
    """W landed in dev and failed a gate there (its status: failure). X renders dev the same: from
    a fresh clone, the gates run again on that content, told W (the commit its provenance names),
    so check-platform passes where it failed before (issue 48); the content is X's success."""
    flag = tmp_path / "healthy"
    gates = f'[{{command: ["promoter", "check-platform"]}}, {{command: ["test", "-e", "{flag}"]}}]'
    path = factory.create(
        main={
            "promoter.yaml": pipeline(stage("dev", gates=gates), "qa", "prod"),
            "workloads/app.yaml": WORKLOAD,
        },
        platform_branches=("dev", "qa", "prod"),
    )
    factory.with_origin()
    w = Git(path).out("rev-parse", "main")
    failed = promote(path, "--to", "dev")
    assert failed.exit_code == 1, failed.output
    assert "dev: FAILED: gate command test -e" in failed.output
    assert "check-platform: success" in failed.output

    flag.write_text("")  # the clusters recovered
    b = factory.clone("b")
    x = commit(b, {"workloads/app.yaml": PROD_ONLY}, "prod-eu only")
    result = promote(b, "--to", "dev", "--wait", wait)
    assert result.exit_code == 0, result.output
    m = Git(factory.platform).out("rev-parse", "dev")
    assert (
        f"dev: dev already has this content at {m[:12]} (promoted with main {w[:12]}); checking gates"
        in result.output
    )
    assert "dev: gate command promoter check-platform: success" in result.output
    assert statuses(b, x)["dev"][0] == "success"
    assert statuses(path, w)["dev"][0] == "failure"  # W's own failure stays W's


def test_a_commit_that_changes_the_render_gets_its_own_promotion(
    factory: ControlPlaneFactory, first: tuple[Path, str]
) -> None:
    """Strict where the trees differ: X changes dev's render, so dev gets a PR and its own
    provenance, and check-platform is told X."""
    a, w = first
    b = factory.clone("b")
    x = commit(b, {"workloads/app.yaml": WORKLOAD.replace("path: ./dev}", "path: ./dev2}")}, "dev")
    result = promote(b, "--to", "dev")
    assert result.exit_code == 0, result.output
    assert "promoted with main" not in result.output
    assert "dev: gate command promoter check-platform: success" in result.output
    assert f"mainCommit: {x}" in (factory.platform_file("dev", ".promoter/promotion.yaml") or "")
    assert NoteStatuses(Git(a)).latest(w)["promoter/dev"].state == "success"


def test_without_an_origin_nothing_is_fetched_or_pushed(factory: ControlPlaneFactory) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    result = promote(path, "--to", "dev")
    assert result.exit_code == 0, result.output
    refs = subprocess.run(
        ["git", "-C", str(path), "for-each-ref", "--format=%(refname)", "refs/promoter/"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert refs.stdout == ""  # no tracking ref: there is no remote to track
