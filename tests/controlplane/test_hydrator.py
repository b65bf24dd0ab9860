"""``spec.hydrator`` and ``merge: next`` as ``validate`` reads them (docs/hydrator.md): bad values
are one line naming file, line and field, exit 2."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.controlplane.hydrator import next_branch
from promoter.controlplane.repo import ControlPlane
from tests.support.helpers import PIPELINE, WORKLOAD, ControlPlaneFactory

ON = "spec:\n  hydrator: {metadata: true}\n"


def with_qa(*lines: str, metadata: bool = True) -> str:
    """The default Pipeline with ``lines`` added to qa (the first is line 9, or 10 with
    ``spec.hydrator`` on)."""
    text = PIPELINE.replace("    - name: qa\n", "    - name: qa\n" + "".join(f"      {ln}\n" for ln in lines))
    return text.replace("spec:\n", ON) if metadata else text


Q = "spec.environments[1].merge"
CASES = [
    (
        "next without metadata",
        with_qa("merge: next", metadata=False),
        9,
        f"{Q}: next needs spec.hydrator: {{metadata: true}} (GitOps Promoter reads the main commit "
        "from the hydrator.metadata of what is pushed to the -next branch)",
    ),
    (
        "next with waves",
        with_qa("merge: next", "waves: [{name: canary, clusterTypes: [small]}]"),
        10,
        f"{Q}: next leaves the merge to GitOps Promoter or a person, one commit per main commit; "
        "waves land one commit each: use merge: auto or manual with waves",
    ),
    (
        "next with rollback",
        with_qa("onFailure: rollback", "merge: next"),
        11,
        f"{Q}: next leaves the environment branch to GitOps Promoter or a person, so the promoter "
        "does not revert it: use onFailure: stop (the default) with merge: next",
    ),
    (
        "next with prChecks",
        with_qa("merge: next", "prChecks: {require: all}"),
        10,
        f"{Q}: next opens no PR of the promoter's, so there are no PR checks to require",
    ),
    (
        "a misspelt policy",
        with_qa("merge: nxt"),
        10,
        f"{Q}: must be one of auto, manual, direct, next, got 'nxt'",
    ),
    (
        "metadata not a flag",
        PIPELINE.replace("spec:\n", "spec:\n  hydrator: {metadata: 'yes'}\n"),
        5,
        "spec.hydrator.metadata: must be true or false, got a string",
    ),
    (
        "unknown hydrator field",
        PIPELINE.replace("spec:\n", "spec:\n  hydrator: {metadata: true, push: next}\n"),
        5,
        "unknown field 'spec.hydrator.push'",
    ),
    (
        "hydrator not a mapping",
        PIPELINE.replace("spec:\n", "spec:\n  hydrator: true\n"),
        5,
        "spec.hydrator: must be a mapping, got a boolean",
    ),
    (
        "next beside a branch of that name",
        with_qa("merge: next").replace(
            "    - name: prod\n", "    - name: prod\n      gitops: {branch: qa-next}\n"
        ),
        9,
        f"{Q}: its -next branch 'qa-next' cannot live beside the platform branch 'qa-next' of environment 'prod'",
    ),
    (
        "next of a folder beside a branch",
        with_qa("merge: next", "gitops: {branch: envs, path: qa}").replace(
            "    - name: prod\n", "    - name: prod\n      gitops: {branch: envs-next}\n"
        ),
        9,
        f"{Q}: its -next branch 'envs-next/qa' cannot live beside the platform branch 'envs-next' "
        "of environment 'prod'",
    ),
]


@pytest.mark.parametrize(("text", "line", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_hydrator_field_is_one_line_with_file_and_line(
    factory: ControlPlaneFactory, text: str, line: int, says: str
) -> None:
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.output == f"error: promoter.yaml:{line}: {says}\n"
    assert result.exit_code == 2


def test_the_fields_are_read_and_off_by_default(factory: ControlPlaneFactory) -> None:
    text = with_qa("merge: next").replace(
        "    - name: prod\n",
        "    - name: prod\n      merge: next\n      gitops: {branch: main, path: envs/prod}\n",
    )
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    cp = ControlPlane(path)
    pipeline = cp.main(cp.resolve(None)).pipeline
    assert pipeline.hydrator_metadata is True
    assert [(e.name, e.merge) for e in pipeline.environments] == [
        ("dev", "auto"),
        ("qa", "next"),
        ("prod", "next"),
    ]
    # GitOps Promoter's proposed branch: <branch>-next, and /<activePath> for a folder
    assert [next_branch(e) for e in pipeline.environments[1:]] == ["qa-next", "main-next/envs/prod"]
    assert CliRunner().invoke(cli, ["validate", "--control-plane", str(path)]).exit_code == 0

    plain = ControlPlaneFactory(factory.root / "plain")
    plain.root.mkdir()
    path = plain.create()
    cp = ControlPlane(path)
    assert cp.main(cp.resolve(None)).pipeline.hydrator_metadata is False
