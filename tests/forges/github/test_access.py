"""``promoter validate --github`` (promoter/forges/github/access.py): the credentials' permissions
found before a run needs them, nothing changed: a dry-run push to the control plane and the
platform repo over smart HTTP (refused with 403 to a read-only token, as GitHub refuses it), the
heartbeat's variable read and written back unchanged, statuses read."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.gitcmd import Git
from tests.support.fake_github import TOKEN, World, make_world
from tests.support.helpers import ControlPlaneFactory

READ_ONLY = "ghp_readonly0123456789abcdefghijklmnop"


@pytest.fixture
def world(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = make_world(factory, monkeypatch, ghes=True, git_token=lambda t: t in (TOKEN, READ_ONLY))
    w.git.read_only = lambda t: t == READ_ONLY
    w.git.repos["/org/control-plane.git"] = w.control_plane
    w.fake.tokens = (*w.fake.tokens, READ_ONLY)
    Git(w.control_plane).run("remote", "add", "origin", f"{w.git.url}/org/control-plane.git")
    monkeypatch.setenv("GITHUB_API_URL", w.api_url)
    yield w
    w.close()


def validate(w: World, **env: Any) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli, ["validate", "--control-plane", str(w.control_plane), "--github"], env=env
    )
    return result.exit_code, result.output


def test_a_token_that_may_do_everything_passes_and_nothing_changes(world: World) -> None:
    before = Git(world.control_plane).out("for-each-ref")
    code, output = validate(world)
    assert code == 0, output
    lines = [line for line in output.splitlines() if line.startswith("github: ")]
    assert lines[0] == (
        "github: org/control-plane: Contents write ok (holds, overrides and notification records on "
        "refs/promoter/*, a release's promoter-wake)"
    )
    assert "github: org/control-plane: Commit statuses read ok" in lines
    made = "github: org/control-plane: Variables read ok; PROMOTER_HEARTBEAT is made by the first run (Variables write)"
    assert made in lines

    world.fake.variables["org/control-plane"] = {"PROMOTER_HEARTBEAT": "armed-hourly"}
    code, output = validate(world)
    assert code == 0, output
    assert (
        "github: org/control-plane: Variables read and write ok (the heartbeat's PROMOTER_HEARTBEAT)"
        in output
    )
    assert world.fake.variables["org/control-plane"] == {
        "PROMOTER_HEARTBEAT": "armed-hourly"
    }  # written back as it was
    assert [c.method for c in world.fake.calls("variable")][-2:] == ["GET", "PATCH"]
    assert "github: org/platform: Contents write ok (the promotion branches)" in lines
    assert Git(world.control_plane).out("for-each-ref") == before  # a dry run pushed nothing
    assert (
        Git(world.platform).run("show-ref", "--verify", "refs/promoter/access-check", check=False).returncode
    )


def test_a_read_only_token_is_an_error_naming_what_would_fail(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMOTER_GITHUB_TOKEN", READ_ONLY)
    code, output = validate(world)
    assert code == 2, output
    assert (
        "github: error: org/control-plane: the promoter's credentials cannot push (Contents write): holds, "
        "overrides and notification records on refs/promoter/*, a release's promoter-wake would fail: "
    ) in output
    assert "github: error: org/platform: the promoter's credentials cannot push (Contents write)" in output
    assert output.splitlines()[-1].startswith("error: --github: 2 permission(s) missing: org/control-plane: ")
    assert READ_ONLY not in output


def test_a_token_without_variables_write_is_an_error(world: World) -> None:
    world.fake.fail("variable", "403", times=10)
    code, output = validate(world)
    assert code == 2, output
    assert (
        "github: error: org/control-plane: the heartbeat's PROMOTER_HEARTBEAT cannot be read and written"
        in output
    )
    assert "Resource not accessible by integration" in output


def test_a_local_platform_repo_has_nothing_to_check(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path), "--github"])
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "error: --github: the Pipeline's platform repo is not on GitHub; there is nothing to check"
    )


def require_pr_checks(w: World, factory: ControlPlaneFactory) -> None:
    text = (w.control_plane / "promoter.yaml").read_text()
    text = text.replace("    - name: dev\n", "    - name: dev\n      prChecks: {require: all}\n", 1)
    factory.commit("main", {"promoter.yaml": text}, "require PR checks", keep=True)


def test_pr_checks_need_checks_read_on_the_platform_repo(world: World, factory: ControlPlaneFactory) -> None:
    code, output = validate(world)
    assert code == 0 and "prChecks" not in output  # nothing asked of a Pipeline without them

    require_pr_checks(world, factory)
    code, output = validate(world)
    assert code == 0, output
    assert "github: org/platform: Checks read and Commit statuses read ok (prChecks)" in output
    reads = [c.path for c in world.fake.calls("get_check_runs")]
    assert reads == ["/repos/org/platform/commits/dev/check-runs"]

    world.fake.fail("get_check_runs", "403", times=10)  # a token or App without Checks read
    code, output = validate(world)
    assert code == 2, output
    assert (
        "github: error: org/platform: the promotion PRs' checks cannot be read (Checks read): prChecks would fail: "
        in output
    )
    assert "Resource not accessible by integration" in output
