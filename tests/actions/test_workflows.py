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

from promoter.ghactions.heartbeat import CRONS
from tests.actions.test_workflow_harness import condition
from tests.support.paths import ROOT

ACTIONS = sorted(ROOT.glob("actions/*/action.yml"))
EXAMPLES = sorted(
    [
        *ROOT.glob("examples/control-plane/.github/workflows/*.yml"),
        *ROOT.glob("examples/environments/*/.github/workflows/*.yml"),
    ]
)
PLATFORM = sorted(ROOT.glob("examples/platform-repo/.github/workflows/*.yml"))
WORKFLOWS = sorted([*ROOT.glob(".github/workflows/*.yml"), *EXAMPLES, *PLATFORM])
SCRIPTS = sorted(ROOT.glob("actions/*.sh"))
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
    assert [rel(p) for p in ACTIONS] == [
        "actions/hold/action.yml",
        "actions/promote/action.yml",
        "actions/render/action.yml",
    ]
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "promote.yml", "render.yml", "schedule.yml"}
    assert [p.name for p in SCRIPTS] == ["cache-key.sh", "install.sh", "run.sh"]


def test_each_branch_carries_the_workflows_its_events_run() -> None:
    """GitHub runs the workflows of the pushed commit (and of a pull request's merge commit): the
    scheduling workflow lives on every environment branch and not on main; the render check on
    main and on every environment branch, the same file everywhere."""
    main = {p.name for p in ROOT.glob("examples/control-plane/.github/workflows/*.yml")}
    assert main == {"promote.yml", "promote-by-hand.yml", "render.yml", "hold.yml"}
    render = (ROOT / "examples/control-plane/.github/workflows/render.yml").read_text()
    branches = sorted(p.name for p in ROOT.glob("examples/environments/*"))
    assert branches == ["dev", "prod", "qa"]
    schedules = set()
    for branch in branches:
        workflows = ROOT / "examples/environments" / branch / ".github/workflows"
        assert {p.name for p in workflows.glob("*.yml")} == {"render.yml", "schedule.yml"}
        assert (workflows / "render.yml").read_text() == render
        schedules.add((workflows / "schedule.yml").read_text())
        doc = load(workflows / "schedule.yml")
        assert branch in doc[True]["push"]["branches"]
        assert doc["jobs"]["schedule"]["with"]["schedule"] == "${{ github.ref_name }}"
    assert len(schedules) == 1  # one file, copied: the branch names are the environment names


@pytest.mark.parametrize("path", EXAMPLES, ids=rel)
def test_examples_pin_the_promoter_once(path: Path) -> None:
    """The reusable workflow checks out the promoter at promoter-ref to run its actions: the same
    commit as in ``uses:``, of the team's own copy."""
    text = path.read_text()
    pins = set(re.findall(r"your-org/promoter/[\w./-]+@([0-9a-f]{40}) # v\d", text))
    refs = set(re.findall(r"promoter-ref: ([0-9a-f]{40})$", text, re.M))
    assert len(pins) == 1 and (not refs or refs == pins), (pins, refs)
    assert "docs/github-actions.md#hosting-the-promoter" in text


def test_the_promoter_holds_the_github_app_and_renews_its_tokens() -> None:
    """No one-hour token minted for the promoter steps: they get the App's id and key (secrets,
    masked by the runner and by the promoter), and a token only when there is no App."""
    for job in load(ROOT / ".github/workflows/promote.yml")["jobs"].values():
        if "environment" in job:
            continue  # the approval job: no step but its echo
        minted = [s for s in job["steps"] if "create-github-app-token" in str(s.get("uses", ""))]
        # one read-only token, for checking out a private promoter at the start of the job only
        assert [m["id"] for m in minted] == ["promoter-token"]
        assert minted[0]["with"]["permission-contents"] == "read" and len(minted[0]["with"]) == 5
        steps = [s for s in job["steps"] if str(s.get("uses", "")).startswith("./.promoter/actions/")]
        assert steps
        for step in steps:
            given = step["with"]
            assert given["app-id"] == "${{ secrets.PROMOTER_GITHUB_APP_ID }}"
            assert given["app-private-key"] == "${{ secrets.PROMOTER_GITHUB_APP_PRIVATE_KEY }}"
            assert given["token"].startswith("${{ env.PROMOTER_HAS_APP != 'true' && ")


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
    used += " " + " ".join(f"${{{{ {s['if']} }}}}" for s in doc["runs"]["steps"] if "if" in s)
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
        if grants == {} and (job_id in ("approval", "wake")):
            continue  # an approval's echo, a dispatch with its own token: nothing of the job's token
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
    assert "concurrency" not in doc  # a run waiting for an approval must not hold the group
    jobs = doc["jobs"]
    group = {"group": "promoter-${{ github.repository }}", "cancel-in-progress": False}
    assert jobs["advance"]["concurrency"] == jobs["approved"]["concurrency"] == group
    assert "concurrency" not in jobs["approval"]
    # only the approval job runs under an Environment, and only when a run asked for it
    assert [j for j, job in jobs.items() if "environment" in job] == ["approval"]
    assert jobs["approval"]["if"].startswith("needs.advance.outputs.approval-requested == 'true' || ")
    assert jobs["approved"]["needs"] == ["advance", "approval"]
    assert triggers["workflow_call"]["inputs"]["wait"]["default"] == "none"


def test_the_scripts_beside_the_actions_pass_shellcheck() -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (make deps installs it)")
    proc = subprocess.run(["shellcheck", *map(str, SCRIPTS)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize("path", ACTIONS, ids=rel)
def test_action_scripts_pass_shellcheck(path: Path, tmp_path: Path) -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (make deps installs it)")
    for i, step in enumerate(run_steps(path)):
        script = tmp_path / f"step{i}.sh"
        script.write_text("#!/usr/bin/env bash\n" + step["run"])
        proc = subprocess.run(["shellcheck", "-s", "bash", str(script)], capture_output=True, text=True)
        assert proc.returncode == 0, f"{step['name']}:\n{proc.stdout}"


def test_the_control_plane_wakes_on_every_event_that_moves_a_promotion_on() -> None:
    doc = load(ROOT / "examples/control-plane/.github/workflows/promote.yml")
    triggers = doc[True]
    assert set(triggers) == {"push", "repository_dispatch", "schedule", "workflow_dispatch"}
    assert triggers["repository_dispatch"] == {"types": ["promoter-wake"]}
    crons = [c["cron"] for c in triggers["schedule"]]
    assert crons == [CRONS[c] for c in ("armed", "armed-hourly", "armed-6h")]  # the heartbeat's cadences
    assert doc["jobs"]["promote"]["with"]["hold-for-approval"] == "prod"


def test_the_heartbeat_runs_only_the_cron_of_the_armed_cadence() -> None:
    """The caller's ``if:``, evaluated as GitHub evaluates it: of the three crons, only the one the
    variable names gets a runner; a variable not set yet (or an older run's ``armed``) is every
    ten minutes; ``idle`` none; every other event always runs."""
    doc = load(ROOT / "examples/control-plane/.github/workflows/promote.yml")
    expression = doc["jobs"]["promote"]["if"]
    for variable in (None, "armed", "armed-hourly", "armed-6h", "idle"):
        vars_ = {} if variable is None else {"PROMOTER_HEARTBEAT": variable}
        ran = [
            cron
            for cron in CRONS.values()
            if condition(
                expression, {"github": {"event_name": "schedule", "event": {"schedule": cron}}, "vars": vars_}
            )
        ]
        wanted = [] if variable == "idle" else [CRONS[variable or "armed"]]
        assert ran == wanted, variable
        for event in ("push", "repository_dispatch", "workflow_dispatch"):
            assert condition(expression, {"github": {"event_name": event, "event": {}}, "vars": vars_})


def test_the_platform_repo_wakes_the_control_plane_on_merges_and_statuses() -> None:
    (path,) = PLATFORM
    doc = load(path)
    assert set(doc[True]) == {"pull_request", "status"}
    assert doc[True]["pull_request"] == {"types": ["closed", "unlabeled"]}  # merged; the hold label off
    job = doc["jobs"]["wake"]
    assert "startsWith(github.event.pull_request.head.ref, 'promoter/')" in job["if"]
    assert "github.event.state != 'pending'" in job["if"]
    for action, label, merged, wakes in (
        ("closed", None, True, True),
        ("closed", None, False, False),  # closed unmerged: nothing landed
        ("unlabeled", "promoter/hold", False, True),  # a label hold released: it goes on
        ("unlabeled", "needs-review", False, False),
    ):
        pull = {"merged": merged, "head": {"ref": "promoter/prod"}}
        event = {"action": action, "pull_request": pull, "label": {"name": label} if label else None}
        assert (
            condition(job["if"], {"github": {"event_name": "pull_request", "event": event}, "vars": {}})
            == wakes
        )
    (minted,) = [s for s in job["steps"] if "create-github-app-token" in str(s.get("uses", ""))]
    assert minted["with"]["permission-contents"] == "write"  # a dispatch needs Contents write
    assert minted["with"]["repositories"] == "${{ steps.target.outputs.name }}"  # that repo only
    run = job["steps"][-1]["run"]
    assert '\\"event_type\\":\\"promoter-wake\\"' in run and "$GITHUB_API_URL/repos/" in run  # GHES too
    curls = [line.split("curl", 1)[1] for line in run.splitlines() if "curl" in line]
    assert len(curls) == 2 and all("-H @-" in run and "TOKEN" not in c for c in curls)  # tokens on stdin
    # a burst is one wake: one job runs per event kind, one waits (the rest cancelled, not billed)
    assert doc["concurrency"] == {
        "group": "promoter-wake-${{ github.event_name }}",
        "cancel-in-progress": False,
    }
    assert job["permissions"] == {"statuses": "read"}  # the burst's end, read with the job's own token
