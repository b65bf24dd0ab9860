"""``merge: next`` and the note on the github forge, through the CLI, with git over loopback HTTP
that needs the token: the ``-next`` branch and ``refs/notes/hydrator.metadata`` are pushed with
the run's credentials, and a person's merge is picked up by the next run."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.gitcmd import Git
from promoter.platform.hydrator import read_note
from tests.support.fake_github import TOKEN, World, make_world
from tests.support.helpers import ControlPlaneFactory
from tests.support.hydrator import head, merge_with_git


@pytest.fixture
def world(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = make_world(factory, monkeypatch, qa="next", ghes=True, git_token=TOKEN)
    text = Git(w.control_plane).out("show", "main:promoter.yaml") + "\n"
    factory.commit(
        "main",
        {
            "promoter.yaml": text.replace("spec:\n", "spec:\n  hydrator: {metadata: true}\n").replace(
                "[{soak: 30s}]", "[]"
            )
        },
        "hydrate",
        keep=True,
    )
    yield w
    w.close()


def promote(world: World) -> dict[str, object]:
    args = [
        "promote",
        "--control-plane",
        str(world.control_plane),
        "--control-plane-repo",
        "org/control-plane",
    ]
    result = CliRunner().invoke(cli, [*args, "--wait", "none", "--output", "json"])
    assert result.exit_code == 0, result.output
    report: dict[str, object] = json.loads(result.output[result.output.index("{\n") :])
    return report


def test_next_over_https_with_the_token(world: World, factory: ControlPlaneFactory) -> None:
    main = Git(world.control_plane).out("rev-parse", "main")
    first = promote(world)  # dev merged (no gates); qa pushed to qa-next

    assert first["state"] == "waiting" and first["waiting"]["for"] == "merge"  # type: ignore[index]
    proposed = head(factory.platform, "qa-next")
    assert proposed is not None and read_note(Git(factory.platform), proposed) == main
    assert not [p for p in world.platform_prs if p["base"]["ref"] == "qa"]  # GitOps Promoter opens it

    merge_with_git(factory.root, factory.platform, "qa-next", "qa")
    promote(world)  # qa landed and gated; prod's PR merged
    assert world.statuses(main)["promoter/qa"] == "success"


def test_the_note_push_is_retried_as_the_branches_are(world: World, factory: ControlPlaneFactory) -> None:
    """A GitHub answer of 500 to the push of ``refs/notes/hydrator.metadata``: the push goes
    through the GitHub retry policy with the token, as a branch's does, and the note lands."""
    fault = world.git.fail("500", ref="refs/notes/hydrator.metadata")
    main = Git(world.control_plane).out("rev-parse", "main")

    first = promote(world)

    assert first["state"] == "waiting", first
    assert fault.times == 0  # the fault was met, then the push was made again
    failed = [e for e in world.git.log if e.get("status") == "500"]
    assert len(failed) == 1
    proposed = head(factory.platform, "qa-next")
    assert proposed is not None and read_note(Git(factory.platform), proposed) == main
