"""``messages`` templates on the github forge, against the fake GitHub (``responses``): the PR's
title and body in the create and update requests, its labels in GitHub's labels request, kept
when a newer main commit updates the PR."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from promoter.cli.main import cli
from promoter.gitcmd import Git
from tests.support.fake_github import World, make_world
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, stage
from tests.support.helpers import pipeline as build_pipeline

P = "org/platform"
MESSAGES = """\
  messages:
    title: "{{ environment.name }}: {{ main.subject }}"
    body: "{{ main.short_sha }} by {{ main.author_name }}, {{ changes.summary }}"
    labels: [promotion-bot, "main/{{ main.short_sha }}"]
"""
LABEL_KEYS = {"id", "node_id", "url", "name", "color", "default", "description"}


@pytest.fixture
def world(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = make_world(factory, monkeypatch)
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/control-plane")  # where the statuses go
    yield w
    w.close()


def commit_main(factory: ControlPlaneFactory, message: str) -> str:
    """A main commit whose Pipeline has ``MESSAGES`` and a dev merged by hand."""
    text = build_pipeline(
        stage("dev", merge="manual"), "qa", "prod", platform="{url: https://github.com/org/platform}"
    ).replace("spec:\n", "spec:\n" + MESSAGES)
    factory.commit("main", {"promoter.yaml": text, "workloads/app.yaml": WORKLOAD}, message)
    return Git(factory.path).out("rev-parse", "main")


def promote(world: World) -> Result:
    command = ["promote", "--control-plane", str(world.control_plane), "--wait", "none", "--to", "dev"]
    return CliRunner().invoke(cli, command)


def sent(world: World, method: str, path: str) -> list[tuple[Any, Any]]:
    """(request body, response body) of each request to ``path`` (a suffix), in order."""
    out = []
    for call in world.mock.calls:
        if call.request.method == method and call.request.path_url.split("?")[0].endswith(path):
            body = call.request.body
            out.append((json.loads(body) if body else None, json.loads(call.response.text)))
    return out


def test_title_body_and_labels_reach_github_and_stay_on_update(
    world: World, factory: ControlPlaneFactory
) -> None:
    x = commit_main(factory, "Bump api\n\nWhy.")
    first = promote(world)
    assert first.exit_code == 0, first.output
    ((create, pr),) = sent(world, "POST", f"/repos/{P}/pulls")
    assert (create["title"], create["body"]) == ("dev: Bump api", f"{x[:7]} by Test Author, +3 ~0 -0")
    assert (create["head"], create["base"]) == ("promoter/dev", "dev")
    assert pr["title"] == "dev: Bump api"
    ((labels, answer),) = sent(world, "POST", f"/repos/{P}/issues/1/labels")
    assert labels == ["promotion", "env:dev", "promotion-bot", f"main/{x[:7]}"]
    assert [label["name"] for label in answer] == labels  # GitHub answers with the PR's labels
    assert all(set(label) == LABEL_KEYS for label in answer)
    assert f"(manual merge, labels promotion-bot, main/{x[:7]})" in first.output

    y = commit_main(factory, "Bump api again")  # a newer main commit updates the open PR
    second = promote(world)
    assert second.exit_code == 0, second.output
    ((update, _),) = sent(world, "PATCH", f"/repos/{P}/pulls/1")
    assert update == {"title": "dev: Bump api again", "body": f"{y[:7]} by Test Author, +3 ~0 -0"}
    added = sent(world, "POST", f"/repos/{P}/issues/1/labels")
    assert [body for body, _ in added] == [labels, [f"main/{y[:7]}"]]  # only the one it lacks
    assert not [c for c in world.mock.calls if c.request.method == "DELETE"]  # nothing taken off
    (pr_now,) = world.platform_prs
    assert [label["name"] for label in pr_now["labels"]] == [*labels, f"main/{y[:7]}"]
    assert (pr_now["title"], pr_now["state"]) == ("dev: Bump api again", "open")
