"""``merge: next`` inside one run that waits (``--wait all``), and against what GitOps Promoter
does to a ``-next`` branch (docs/hydrator.md)."""

from __future__ import annotations

import json
import subprocess

from promoter.clock import FakeClock
from promoter.gitcmd import Git
from promoter.platform.hydrator import read_note
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, stage
from tests.support.hydrator import forge_statuses, head, hydrating, merge_with_git, run, show


class ActingClock(FakeClock):
    """A fake clock that lets someone act while the run waits: ``act`` at the first sleep."""

    def __init__(self, act: object) -> None:
        super().__init__()
        self.act = act

    def sleep(self, seconds: float) -> None:
        if not self.slept:
            self.act()  # type: ignore[operator]
        super().sleep(seconds)


def test_a_run_that_waits_sees_the_merge_and_runs_the_gates(factory: ControlPlaneFactory) -> None:
    text = hydrating("dev", stage("qa", merge="next", gates='[{command: ["true"]}]'), "prod")
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    clock = ActingClock(lambda: merge_with_git(factory.root, factory.platform, "qa-next", "qa"))

    report = run(path, clock, wait="all")

    assert report.state == "done", [r.message for r in report.results]
    qa = next(r for r in report.results if r.environment == "qa")
    assert qa.merge_sha == head(factory.platform, "qa") and len(clock.slept) == 1


def test_a_next_branch_moved_to_other_content_is_refused(factory: ControlPlaneFactory) -> None:
    text = hydrating("dev", stage("qa", merge="next"), "prod")
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    clock = ActingClock(lambda: factory.commit_platform("qa-next", {"other.yaml": "x: 1\n"}))

    report = run(path, clock, wait="all")

    qa = next(r for r in report.results if r.environment == "qa")
    assert qa.state == "failure" and "qa: qa-next was moved to " in qa.message
    assert qa.message.endswith("without it being merged into qa; the promotion was refused")


def test_gitops_promoters_merge_of_the_active_branch_into_next_is_kept(factory: ControlPlaneFactory) -> None:
    """GitOps Promoter merges the active branch into the proposed one, keeping its tree
    (``gitMergeStrategyOurs``): the proposal is still there and is not pushed again."""
    text = hydrating("dev", stage("qa", merge="next"), "prod")
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    clock = FakeClock()
    assert run(path, clock).state == "waiting"
    git = Git(factory.platform)
    proposed, active = head(factory.platform, "qa-next"), head(factory.platform, "qa")
    assert proposed is not None and active is not None
    tree = git.out("rev-parse", f"{proposed}^{{tree}}")
    ours = git.out("commit-tree", tree, "-p", proposed, "-p", active, "-m", "Merge qa into qa-next (ours)")
    git.run("update-ref", "refs/heads/qa-next", ours)

    again = run(path, clock)

    assert again.state == "waiting" and head(factory.platform, "qa-next") == ours
    merge_with_git(factory.root, factory.platform, "qa-next", "qa")
    assert run(path, clock).state == "done"


def test_an_environment_in_a_folder_proposes_on_gitops_promoters_active_path_branch(
    factory: ControlPlaneFactory,
) -> None:
    text = hydrating("dev", stage("qa", merge="next", gitops="{branch: envs, path: qa}"), "prod")
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    origin = factory.with_origin()
    main = Git(path).out("rev-parse", "main")

    assert run(path, FakeClock()).state == "waiting"

    proposed = head(factory.platform, "envs-next/qa")  # <branch>-next/<activePath>
    assert proposed is not None and read_note(Git(factory.platform), proposed) == main
    found = json.loads(
        show(factory.platform, f"{proposed}:qa/hydrator.metadata") or ""
    )  # <activePath>/hydrator.metadata
    assert (found["drySha"], found["repoURL"]) == (main, origin.as_uri())
    assert show(factory.platform, f"{proposed}:hydrator.metadata") is None  # nothing outside the folder
    listed = subprocess.run(
        ["git", "-C", str(factory.platform), "ls-tree", "-r", "--name-only", proposed],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert "qa/small/README.md" in listed and all(p.startswith("qa/") for p in listed)


def test_a_newer_commit_that_renders_what_is_active_supersedes_the_proposal(
    factory: ControlPlaneFactory,
) -> None:
    text = hydrating("dev", stage("qa", merge="next"), "prod")
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    clock = FakeClock()
    run(path, clock)
    merge_with_git(factory.root, factory.platform, "qa-next", "qa")
    assert run(path, clock).state == "done"
    changed = factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("./qa}", "./qa-v2}")}, "qa v2", keep=True
    )
    assert run(path, clock).state == "waiting"  # qa-next proposes the change
    back = factory.commit("main", {"workloads/app.yaml": WORKLOAD}, "back to qa", keep=True)

    report = run(path, clock)

    qa = next(r for r in report.results if r.environment == "qa")
    active = head(factory.platform, "qa")
    assert qa.state == "noop" and head(factory.platform, "qa-next") == active  # the proposal withdrawn
    assert active is not None and read_note(Git(factory.platform), active) == back
    superseded = {c: (s.state, s.description) for c, s in forge_statuses(path, changed).items()}
    assert superseded["promoter/qa"] == ("error", f"superseded by {back[:12]}")
