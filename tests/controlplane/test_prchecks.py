"""An environment's ``prChecks`` as ``validate`` reads it: what it accepts, and one ``file:line``
error line, exit 2, for each mistake."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.controlplane.repo import ControlPlane
from tests.support.helpers import PIPELINE, WORKLOAD, ControlPlaneFactory


def with_prod(*lines: str) -> str:
    """The default Pipeline with ``lines`` added to prod (the first is line 10)."""
    return PIPELINE.replace(
        "    - name: prod\n", "    - name: prod\n" + "".join(f"      {ln}\n" for ln in lines)
    )


P = "spec.environments[2].prChecks"
CASES = [
    (
        "short form",
        with_prod("prChecks: all"),
        10,
        f'{P}: must be a mapping, {{require: all}} or {{require: [kubeconform, "policy/*"]}}, got a string',
    ),
    (
        "one name",
        with_prod("prChecks: {require: kubeconform}"),
        10,
        f"{P}.require: must be all or a list of check names (or patterns), got 'kubeconform'; "
        "one name is a list of one: [kubeconform]",
    ),
    ("empty", with_prod("prChecks: {require: []}"), 10, f"{P}.require: must be a non-empty list of strings"),
    (
        "not strings",
        with_prod("prChecks:", "  require: [kubeconform, 3]"),
        11,
        f"{P}.require: must be a non-empty list of strings",
    ),
    ("twice", with_prod("prChecks: {require: [lint, lint]}"), 10, f"{P}.require: 'lint' is listed twice"),
    ("missing", with_prod("prChecks: {}"), 10, f"missing required field '{P}.require'"),
    (
        "typo",
        with_prod("prChecks: {requires: all}"),
        10,
        f"unknown field '{P}.requires', did you mean 'require'?",
    ),
    (
        "own timeout",
        with_prod("prChecks: {require: all, timeout: 5m}"),
        10,
        f"unknown field '{P}.timeout'",
    ),
    (
        "direct",
        with_prod("merge: direct", "prChecks: {require: all}"),
        11,
        f"{P}: merge: direct pushes with no PR, so there are no PR checks to require; "
        "use merge: auto (or manual), or remove prChecks",
    ),
]


@pytest.mark.parametrize(("text", "line", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_pr_checks_field_is_one_line_with_file_and_line(
    factory: ControlPlaneFactory, text: str, line: int, says: str
) -> None:
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 2
    assert result.output == f"error: promoter.yaml:{line}: {says}\n"


def test_all_and_named_checks_are_read(factory: ControlPlaneFactory) -> None:
    text = with_prod("prChecks:", "  require: [kubeconform, 'policy/*']").replace(
        "    - name: qa\n", "    - name: qa\n      merge: manual\n      prChecks: {require: all}\n"
    )
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    cp = ControlPlane(path)
    envs = {e.name: e.pr_checks for e in cp.main(cp.resolve(None)).pipeline.environments}
    assert envs == {"dev": None, "qa": "all", "prod": ("kubeconform", "policy/*")}
    assert CliRunner().invoke(cli, ["validate", "--control-plane", str(path)]).exit_code == 0
