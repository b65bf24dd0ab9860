"""The commitStatus gate on the local forge: statuses posted with ``promoter report-status`` as
git notes of a real platform repo, read on the merge commit and its descendants only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.clock import FakeClock
from promoter.errors import ConfigError, GateFailed, GateTimedOut
from promoter.forges.local import LocalForge
from promoter.forges.notes import NoteStatuses
from promoter.gates import GateContext, build_gate
from promoter.gates.commit_status import CommitStatusGate
from promoter.gates.runner import run_gates
from promoter.gitcmd import Git
from promoter.model import GateSpec, Source, Status
from promoter.platform.repo import PlatformRepo
from tests.support.flows import orchestrator
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage

SRC = Source("promoter.yaml", 14)
APPS = "kustomization/apps/5f3c9a1e"
INFRA = "kustomization/infra/5f3c9a1e"
#: Why a cluster is silent, when the Pipeline does not say which Flux the clusters run.
GENERIC = (
    "the silent clusters have not applied it yet, or their reconciler does not post "
    "(Flux 2.8 posts no failure status; spec.versions says which Flux runs)"
)


class Rollout:
    """A platform branch ``qa`` with an older commit B, the merge commit M and a later commit D."""

    def __init__(self, factory: ControlPlaneFactory) -> None:
        factory.platform.parent.mkdir(parents=True, exist_ok=True)
        Git(factory.root).run("init", "-q", "--bare", str(factory.platform))
        self.path = factory.platform
        self.older = factory.commit_platform("qa", {"apps.yaml": "replicas: 1\n"})
        self.merge = factory.commit_platform("qa", {"apps.yaml": "replicas: 2\n"})
        self.later = factory.commit_platform("qa", {"apps.yaml": "replicas: 2\nimage: v2\n"})
        self.clock = FakeClock(0)

    def post(self, commit: str, context: str, state: str, description: str = "") -> str:
        args = ["--repo", str(self.path), "--commit", commit, "--context", context, "--state", state]
        result = CliRunner().invoke(cli, ["report-status", *args, "--description", description])
        assert result.exit_code == 0, result.output
        return result.output

    def context(self) -> GateContext:
        platform = PlatformRepo(str(self.path))
        forge = LocalForge(Git(self.path), platform)
        return GateContext(
            "qa", "c" * 40, self.merge, str(self.path), "qa", self.clock, forge=forge, platform=platform
        )

    def run(self, spec: Any, timeout: float = 300) -> list[Any]:
        gate = build_gate(GateSpec("commitStatus", spec, SRC))
        deadline = self.clock.now() + timeout
        return run_gates([gate], self.context(), deadline, lambda _: None, progress_interval=3600)


@pytest.fixture
def rollout(factory: ControlPlaneFactory) -> Rollout:
    return Rollout(factory)


def test_success_when_flux_reports_every_kustomization_on_the_merge_commit(rollout: Rollout) -> None:
    assert rollout.post(rollout.merge, APPS, "success", "reconciliation succeeded") == (
        f"success {APPS} on {rollout.merge[:12]}\n"
    )
    rollout.post(rollout.merge, INFRA, "success", "reconciliation succeeded")
    rollout.post(rollout.merge, "ci/lint", "failure", "not a reconciler: not matched")
    [outcome] = rollout.run({"contexts": ["kustomization/*"], "minCount": 2})
    assert outcome.gate == "commitStatus kustomization/* min 2"
    assert (outcome.state, outcome.message) == ("success", f"2 success ({APPS}, {INFRA})")


def test_a_later_commit_of_the_environment_branch_counts_unless_revision_is_merge(rollout: Rollout) -> None:
    rollout.post(rollout.later, APPS, "success")  # Flux reconciled D, which contains M
    [outcome] = rollout.run("kustomization/*")
    assert (outcome.state, outcome.message) == ("success", f"1 success ({APPS})")
    with pytest.raises(GateTimedOut) as err:
        rollout.run({"contexts": "kustomization/*", "revision": "merge"}, timeout=60)
    assert str(err.value) == (
        "qa: gates did not pass within the timeout: commitStatus kustomization/*: pending "
        f"(no status matching kustomization/* on {rollout.merge[:12]}; 1 of minCount 1 missing; {GENERIC})"
    )


def test_any_matching_failure_fails_at_once(rollout: Rollout) -> None:
    rollout.post(rollout.merge, APPS, "success")
    rollout.post(rollout.later, INFRA, "failure", "health check failed after 5m0s")
    with pytest.raises(GateFailed) as err:
        rollout.run({"contexts": ["kustomization/*"], "minCount": 2})
    assert not isinstance(err.value, GateTimedOut)
    assert str(err.value) == (
        "qa: gate commitStatus kustomization/* min 2 failed: "
        f"{INFRA} failure on {rollout.later[:12]}: health check failed after 5m0s"
    )
    assert rollout.clock.now() == 0  # the first check saw it: no waiting


def test_statuses_on_older_commits_are_ignored(rollout: Rollout) -> None:
    rollout.post(rollout.older, APPS, "failure", "the previous rollout failed")
    rollout.post(rollout.older, INFRA, "success")
    with pytest.raises(GateTimedOut) as err:  # nothing on M or D: waits, then times out
        rollout.run("kustomization/*", timeout=120)
    # the older statuses are read to name the silent contexts, never to judge
    assert str(err.value) == (
        "qa: gates did not pass within the timeout: commitStatus kustomization/*: pending "
        f"(no status matching kustomization/* on {rollout.merge[:12]} or the 1 commit after it on qa; "
        f"1 of minCount 1 missing; reported on {rollout.older[:12]}, the commit before, and not since: "
        f"{APPS}, {INFRA}; {GENERIC})"
    )
    assert rollout.clock.now() == 120
    rollout.post(rollout.merge, APPS, "success")
    [outcome] = rollout.run("kustomization/*")
    assert outcome.message == f"1 success ({APPS})"  # the older failure plays no part


def test_timeout_names_the_required_contexts_still_missing(rollout: Rollout) -> None:
    rollout.post(rollout.merge, APPS, "success")
    rollout.post(rollout.merge, "argocd/qa-apps", "pending", "sync running")
    spec = {"required": [APPS, "argocd/qa-apps", "argocd/qa-infra"], "interval": "20s"}
    with pytest.raises(GateTimedOut) as err:
        rollout.run(spec, timeout=100)
    assert str(err.value) == (
        "qa: gates did not pass within the timeout: commitStatus 3 required: pending "
        f"(1 of 3 success ({APPS}); never reported (argocd/qa-infra); not success (argocd/qa-apps pending); "
        f"{GENERIC})"
    )
    assert rollout.clock.slept == [20, 20, 20, 20, 20]  # polled at its interval until the deadline


def test_the_last_status_of_a_context_on_a_commit_is_its_state(rollout: Rollout) -> None:
    rollout.post(rollout.merge, APPS, "failure", "dependency not ready")
    rollout.post(rollout.merge, APPS, "success", "reconciliation succeeded")  # Flux retried
    [outcome] = rollout.run("kustomization/apps/*")
    assert outcome.state == "success"
    rollout.post(rollout.merge, APPS, "failure", "health check failed")
    with pytest.raises(GateFailed, match="health check failed"):
        rollout.run("kustomization/apps/*")


def test_waits_for_statuses_that_arrive_while_polling(rollout: Rollout) -> None:
    class Cluster(FakeClock):
        """Flux on a cluster: reconciles the branch head 45 s after the merge and reports."""

        def sleep(self, seconds: float) -> None:
            super().sleep(seconds)
            if self.t >= 45 and not NoteStatuses(Git(rollout.path)).history(rollout.later):
                NoteStatuses(Git(rollout.path)).post(rollout.later, Status(APPS, "success"))

    rollout.clock = Cluster(0)
    [outcome] = rollout.run({"contexts": "kustomization/*", "interval": "10s"})
    assert outcome.state == "success"
    assert rollout.clock.now() == 50  # the first check after the status arrived


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "needs 'contexts' (patterns such as kustomization/*) or 'required' (exact contexts)"),
        ({"contexts": []}, "'contexts' must be a non-empty list of strings"),
        ({"contexts": ["a", 3]}, "'contexts' must be a non-empty list of strings"),
        ({"contexts": "a", "minCount": -1}, "'minCount' must be a whole number of at least 0, got -1"),
        ({"contexts": "a", "minCount": "2"}, "'minCount' must be a whole number of at least 0, got '2'"),
        (  # no status at all is never a pass
            {"contexts": "a", "minCount": 0},
            "'minCount' 0 with no 'required' would pass with no status at all: give at least 1",
        ),
        ({"contexts": "a", "revision": "head"}, "'revision' must be one of descendants, merge, got 'head'"),
        ({"contexts": "a", "interval": "0s"}, "'interval' must be longer than zero"),
        ({"contexts": "a", "context": "b"}, "unknown field 'context', did you mean 'contexts'?"),
        (5, "expects a mapping, got an integer"),
    ],
)
def test_bad_specs_are_config_errors_naming_the_line(spec: Any, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        CommitStatusGate.from_spec(spec, SRC)
    assert str(err.value) == f"promoter.yaml:14: gate commitStatus: {message}"


def test_report_status_refuses_what_it_cannot_post(rollout: Rollout, tmp_path: Path) -> None:
    def post(*args: str) -> Any:
        return CliRunner().invoke(cli, ["report-status", "--context", APPS, "--state", "success", *args])

    result = post("--repo", str(rollout.path), "--commit", "no-such-ref")
    assert (result.exit_code, result.output) == (
        2,
        f"error: --commit no-such-ref: no such commit in {rollout.path}\n",
    )
    result = post("--repo", "https://github.com/org/platform", "--commit", "qa")
    assert result.exit_code == 2
    assert "report-status writes to a local platform repo" in result.output
    result = post("--repo", str(tmp_path), "--commit", "qa")
    assert (result.exit_code, result.output) == (2, f"error: --repo {tmp_path}: not a git repository\n")
    # a branch name is resolved, and the environment variables a command gate sets are defaults
    result = CliRunner().invoke(
        cli,
        ["report-status", "--context", APPS, "--state", "error", "--description", "x" * 200],
        env={"PROMOTER_PLATFORM_REPO": f"file://{rollout.path}", "PROMOTER_PLATFORM_SHA": "qa"},
    )
    assert result.exit_code == 0, result.output
    [status] = NoteStatuses(Git(rollout.path)).history(rollout.later)
    assert (status.context, status.state, status.description) == (APPS, "error", "x" * 137 + "...")


PIPELINE = pipeline(
    stage("dev", timeout="10m", gates='[{commitStatus: {contexts: ["kustomization/*"], interval: 20s}}]'),
    "qa",
    "prod",
)


def test_a_promotion_waits_for_the_cluster_to_report_on_what_was_merged(
    factory: ControlPlaneFactory,
) -> None:
    path = factory.create(
        {"promoter.yaml": PIPELINE, "workloads/app.yaml": WORKLOAD},
        platform_branches=("dev",),
    )
    before = Git(factory.platform).out("rev-parse", "dev")
    platform = NoteStatuses(Git(factory.platform))
    platform.post(before, Status(APPS, "failure", "an older rollout"))  # on an ancestor: ignored

    class Flux(FakeClock):
        """Reconciles dev's head a minute after a merge and posts success on that commit."""

        def sleep(self, seconds: float) -> None:
            super().sleep(seconds)
            head = Git(factory.platform).out("rev-parse", "dev")
            if head != before and self.t >= 60 and not platform.history(head):
                platform.post(head, Status(APPS, "success", "reconciliation succeeded"))

    clock = Flux(0)
    report = orchestrator(path, clock).promote(Git(path).out("rev-parse", "main"), to="dev")
    [dev] = report.results
    assert dev.state == "success", dev.message
    assert [(g.gate, g.state, g.message) for g in dev.gates] == [
        ("commitStatus kustomization/*", "success", f"1 success ({APPS})")
    ]
    assert platform.history(dev.merge_sha or "")[0].context == APPS
    assert clock.now() >= 60


def test_a_promotion_timing_out_says_why_by_the_flux_its_clusters_run(factory: ControlPlaneFactory) -> None:
    """The Pipeline says Flux 2.8 (spec.versions): the step carries it to the gate, whose timeout
    says that a failed reconciliation posts nothing there."""
    gate = '[{commitStatus: {contexts: ["kustomization/*"], interval: 20s}}]'
    text = pipeline(stage("dev", timeout="2m", gates=gate), "qa", "prod")
    text = text.replace("spec:\n", "spec:\n  versions: {flux: '2.8'}\n", 1)
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD}, platform_branches=("dev",))
    report = orchestrator(path, FakeClock(0)).promote(Git(path).out("rev-parse", "main"), to="dev")
    [dev] = report.results
    assert dev.state == "failure"
    assert dev.message.endswith(
        "1 of minCount 1 missing; Flux 2.8 posts no failure status: a failed reconciliation looks like "
        "silence; the hub gate sees it)"
    ), dev.message
    assert [g.state for g in dev.gates] == ["pending"]


def test_a_long_timeout_message_shortens_its_lists_and_keeps_the_cause(rollout: Rollout) -> None:
    names = [f"kustomization/platform-{'x' * 40}/cluster-{i}" for i in range(5)]
    for name in names[:3]:
        rollout.post(rollout.merge, name, "success", "reconciliation succeeded")
    with pytest.raises(GateTimedOut) as err:
        rollout.run({"required": names}, timeout=60)
    [outcome] = err.value.outcomes
    assert len(outcome.message) <= 400
    assert outcome.message == (
        f"3 of 5 success ({names[0]}, +2 more); never reported ({names[3]}, +1 more); {GENERIC}"
    )
