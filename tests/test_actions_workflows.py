"""House rules for the workflows and composite actions that the linters do not check.

actionlint, zizmor and check-jsonschema run in ``make extra-lint`` (mk/workflows.mk); these
tests hold what they leave out: descriptions everywhere, no expression inside any script, pins
with their version, per-job permissions with a reason, and ShellCheck on the actions' scripts
(actionlint checks workflows only).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ACTIONS = sorted(ROOT.glob("actions/*/action.yml"))
WORKFLOWS = sorted(
    [*ROOT.glob(".github/workflows/*.yml"), *ROOT.glob("examples/control-plane/.github/workflows/*.yml")]
)
PINNED = re.compile(r"^\s*(?:- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*$")


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def run_steps(path: Path) -> list[dict[str, Any]]:
    doc = load(path)
    if "runs" in doc:
        return [s for s in doc["runs"]["steps"] if "run" in s]
    return [s for job in doc["jobs"].values() for s in job.get("steps", []) if "run" in s]


def test_the_files_exist() -> None:
    assert [rel(p) for p in ACTIONS] == ["actions/promote/action.yml", "actions/render/action.yml"]
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "promote.yml", "render.yml", "schedule.yml"}


@pytest.mark.parametrize("path", ACTIONS, ids=rel)
def test_every_input_and_output_is_described(path: Path) -> None:
    doc = load(path)
    for kind in ("inputs", "outputs"):
        for name, spec in doc[kind].items():
            assert len(spec.get("description", "")) > 10, f"{kind}.{name}"


@pytest.mark.parametrize("path", ACTIONS + WORKFLOWS, ids=rel)
def test_no_expression_inside_a_script(path: Path) -> None:
    for step in run_steps(path):
        assert "${{" not in step["run"], f"{step.get('name')}: pass it through env: instead"


@pytest.mark.parametrize("path", ACTIONS, ids=rel)
def test_every_action_input_reaches_a_step_through_env(path: Path) -> None:
    doc = load(path)
    used = " ".join(
        str(v) for s in doc["runs"]["steps"] for v in {**s.get("env", {}), **s.get("with", {})}.values()
    )
    for name in doc["inputs"]:
        assert f"inputs.{name} " in used + " " or f"inputs.{name}}}" in used, name
    assert "INPUT_" not in " ".join(s.get("run", "") for s in doc["runs"]["steps"]).replace(
        "PROMOTER_INPUT_", ""
    )


@pytest.mark.parametrize("path", ACTIONS + WORKFLOWS, ids=rel)
def test_remote_actions_are_pinned_by_sha_with_their_version(path: Path) -> None:
    for line in path.read_text().splitlines():
        if re.match(r"^\s*(- )?uses: ", line) and "uses: ./" not in line:
            assert PINNED.match(line), line


@pytest.mark.parametrize("path", WORKFLOWS, ids=rel)
def test_permissions_start_empty_and_each_grant_says_why(path: Path) -> None:
    doc = load(path)
    assert doc["permissions"] == {}
    text = path.read_text()
    for job_id, job in doc["jobs"].items():
        grants = job.get("permissions")
        assert isinstance(grants, dict) and grants, f"{job_id} needs its own permissions"
        for scope, level in grants.items():
            assert re.search(rf"^\s+{scope}: {level} # \S", text, re.M), f"{job_id}.{scope} has no reason"


@pytest.mark.parametrize("path", WORKFLOWS, ids=rel)
def test_checkouts_keep_no_credentials(path: Path) -> None:
    for job in load(path)["jobs"].values():
        for step in job.get("steps", []):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def test_the_reusable_workflow_queues_promotions_and_guards_environments() -> None:
    doc = load(ROOT / ".github/workflows/promote.yml")
    triggers = doc[True]  # YAML 1.1 reads the key `on` as true
    assert set(triggers) == {"workflow_call", "workflow_dispatch"}
    assert doc["concurrency"] == {"group": "promoter-${{ github.repository }}", "cancel-in-progress": False}
    promote = doc["jobs"]["promote"]
    assert promote["environment"] == "${{ matrix.environment }}"
    assert promote["strategy"]["max-parallel"] == 1 and promote["strategy"]["fail-fast"] is True


@pytest.mark.parametrize("path", ACTIONS, ids=rel)
def test_action_scripts_pass_shellcheck(path: Path, tmp_path: Path) -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (make deps installs it)")
    for i, step in enumerate(run_steps(path)):
        script = tmp_path / f"step{i}.sh"
        script.write_text("#!/usr/bin/env bash\n" + step["run"])
        proc = subprocess.run(["shellcheck", "-s", "bash", str(script)], capture_output=True, text=True)
        assert proc.returncode == 0, f"{step['name']}:\n{proc.stdout}"
