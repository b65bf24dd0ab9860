"""Sources that answer (``validate --sources``, ``checkSources``): each kind asked as its
reconciler would, against servers on 127.0.0.1 and a bare repo, once per run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from promoter.controlplane.sources import GIT, HELM, OCI, OCI_CHART
from promoter.promotion.sources import SourceChecker, Wanted, wanted
from tests.support.sources import PRIVATE, _Server, bare_repo, source_server


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    with source_server() as running:
        yield running


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> str:
    return bare_repo(tmp_path_factory.mktemp("gitsrc")).as_uri()


def _url(server: _Server) -> str:
    return f"127.0.0.1:{server.server_address[1]}"


def test_what_each_kind_of_manifests_asks_for() -> None:
    assert wanted({"repo": "https://g/x"}) == Wanted(GIT, "https://g/x", "main", "")
    assert wanted({"repo": "https://g/x", "branch": "dev"}).ref == "dev"
    assert wanted({"repo": "oci://r/x"}) == Wanted(OCI, "oci://r/x", "latest", "")
    assert wanted({"repo": "oci://r/x", "semver": ">=1.0"}).ref == ""  # a range: the tag list
    assert wanted({"repo": "oci://r/x", "digest": "sha256:ab", "tag": "1"}).ref == "sha256:ab"
    assert wanted({"repo": "https://c", "chart": "p", "version": "1.2.3"}) == Wanted(
        HELM, "https://c", "p", "1.2.3"
    )
    assert wanted({"repo": "oci://r/charts", "chart": "p"}).kind is OCI_CHART


def test_git_repo_and_branch(bare: str, tmp_path: Path) -> None:
    checker = SourceChecker(environ={})
    assert checker.problem(Wanted(GIT, bare, "main", "")) is None
    assert checker.problem(Wanted(GIT, bare, "nope", "")) == "no branch 'nope'"
    missing = checker.problem(Wanted(GIT, (tmp_path / "gone.git").as_uri(), "main", ""))
    assert (
        missing
        == f"git ls-remote failed (fatal: '{tmp_path / 'gone.git'}' does not appear to be a git repository)"
    )


@pytest.mark.parametrize(
    ("kind", "path", "ref", "version", "problem"),
    [
        (HELM, "/charts", "podinfo", "", None),
        (HELM, "/charts", "podinfo", "6.4.1", None),
        (HELM, "/charts", "podinfo", ">=6.0.0", None),  # a range is the reconciler's to match
        (
            HELM,
            "/charts",
            "podinfo",
            "9.9.9",
            "no version 9.9.9 of chart 'podinfo' in the repository's index.yaml",
        ),
        (HELM, "/charts", "nginx", "", "no chart 'nginx' in the repository's index.yaml"),
        (
            HELM,
            "/nothing",
            "podinfo",
            "",
            "no Helm repository index ({base}/nothing/index.yaml answered HTTP 404)",
        ),
        (OCI, "/team/app", "1.0", "", None),
        (OCI, "/team/app", "", "", None),  # semver: the repository's tag list
        (OCI, "/team/app", "2.0", "", "no tag '2.0' in the registry (HTTP 404)"),
        (OCI, "/team/gone", "latest", "", "no tag 'latest' in the registry (HTTP 404)"),
        (OCI, "/team/gone", "", "", "no repository in the registry (HTTP 404)"),
        (OCI, f"/{PRIVATE}", "2.0", "", None),  # the anonymous bearer token flow
        (OCI_CHART, "/charts", "podinfo", "6.5.0", None),
        (OCI_CHART, "/charts", "podinfo", "7.0.0", "no tag '7.0.0' in the registry (HTTP 404)"),
        (OCI_CHART, "/charts", "nginx", "", "no repository in the registry (HTTP 404)"),
    ],
)
def test_helm_repositories_and_registries(
    server: _Server, kind: object, path: str, ref: str, version: str, problem: str | None
) -> None:
    scheme = "oci://" if kind in (OCI, OCI_CHART) else "http://"
    want = Wanted(kind, f"{scheme}{_url(server)}{path}", ref, version)  # type: ignore[arg-type]
    expected = problem.format(base=f"http://{_url(server)}") if problem else None
    assert SourceChecker(environ={}).problem(want) == expected


def test_each_source_is_asked_once_per_run(server: _Server) -> None:
    checker = SourceChecker(environ={})
    want = Wanted(HELM, f"http://{_url(server)}/charts", "podinfo", "")
    before = len(server.paths)
    assert checker.problem(want) is None
    assert checker.problem(want) is None
    assert len(server.paths) == before + 1


def test_a_server_that_does_not_answer_in_time_is_missing() -> None:
    """A port nobody listens on: refused at once, named as no answer."""
    checker = SourceChecker(environ={}, timeout=2)
    problem = checker.problem(Wanted(HELM, "http://127.0.0.1:9/charts", "x", ""))
    assert problem == "no answer (ConnectionError)"
