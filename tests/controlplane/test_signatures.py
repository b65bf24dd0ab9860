"""The Pipeline's ``signatures`` as ``validate`` reads it: what it accepts, and one ``file:line``
error line, exit 2, for each mistake."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.controlplane.repo import ControlPlane
from tests.support.helpers import PIPELINE, WORKLOAD, ControlPlaneFactory

GITHUB = PIPELINE.replace("{url: ../platform.git}", "{url: https://github.com/org/platform}")


def with_signatures(*lines: str, text: str = PIPELINE) -> str:
    """The Pipeline with ``lines`` added under ``spec`` (the first is line 10)."""
    return text + "".join(f"  {ln}\n" for ln in lines)


S = "spec.signatures"
CASES = [
    (
        "short form",
        with_signatures("signatures: github"),
        10,
        f"{S}: must be a mapping, {{commits: github, verifyMain: git}}, got a string",
    ),
    (
        "unknown signer",
        with_signatures("signatures: {verifyMain: gpg}"),
        10,
        f"{S}.verifyMain: must be git or github, got 'gpg'",
    ),
    (
        "not a string",
        with_signatures("signatures:", "  commits: true"),
        11,
        f"{S}.commits: must be a string, got a boolean",
    ),
    (
        "typo",
        with_signatures("signatures: {verify: git}"),
        10,
        f"unknown field '{S}.verify', did you mean 'verifyMain'?",
    ),
    (
        "github commits on a local platform repo",
        with_signatures("signatures:", "  commits: github"),
        11,
        f"{S}.commits: github: GitHub signs only the commits it makes itself, and the platform repo is not on "
        "GitHub (platformRepo.forge is local); use git, which signs as git config asks",
    ),
]


@pytest.mark.parametrize(("text", "line", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_signatures_field_is_one_line_with_file_and_line(
    factory: ControlPlaneFactory, text: str, line: int, says: str
) -> None:
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 2
    assert result.output == f"error: promoter.yaml:{line}: {says}\n"


@pytest.mark.parametrize(
    ("text", "read"),
    [
        (PIPELINE, ("git", None)),
        (with_signatures("signatures: {verifyMain: git}"), ("git", "git")),
        (with_signatures("signatures: {commits: git, verifyMain: github}"), ("git", "github")),
        (with_signatures("signatures: {commits: github}", text=GITHUB), ("github", None)),
        (with_signatures("signatures: {}"), ("git", None)),
    ],
    ids=["absent", "git verifies", "github verifies", "github signs", "empty"],
)
def test_signatures_are_read(factory: ControlPlaneFactory, text: str, read: tuple[str, str | None]) -> None:
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    cp = ControlPlane(path)
    pipeline = cp.main(cp.resolve(None)).pipeline
    assert (pipeline.sign_commits, pipeline.verify_main) == read
