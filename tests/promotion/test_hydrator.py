"""The hydrator contract end to end on the local forge (docs/hydrator.md): ``hydrator.metadata``
in every promotion commit, the note on a render the branch already holds, and ``merge: next``
across runs, each run a fresh process's objects, as a workflow's jobs are."""

from __future__ import annotations

import json

from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.clock import FakeClock
from promoter.gitcmd import Git
from promoter.platform.hydrator import NOTES_REF, read_note
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, stage
from tests.support.hydrator import NOTES, head, hydrating, merge_with_git, run, show, statuses
from tests.support.waves import BROKEN_CHECK, create, waved_pipeline


def test_every_promotion_commit_carries_hydrator_metadata_as_argo_cd_writes_it(
    factory: ControlPlaneFactory,
) -> None:
    path = factory.create({"promoter.yaml": hydrating("dev", "qa", "prod"), "workloads/app.yaml": WORKLOAD})
    main = Git(path).out("rev-parse", "main")

    report = run(path, FakeClock(), wait="all")

    assert report.state == "done", [r.message for r in report.results]
    top = json.loads(factory.platform_file("dev", "hydrator.metadata") or "")
    assert top["drySha"] == main and top["subject"] == "initial main"
    assert top["author"] == "Test Author <author@example.com>" and "repoURL" not in top  # no origin
    assert "hydrator.metadata" in factory.platform_files("dev")  # at the top of gitops.path (the root)
    files = factory.platform_files("dev")
    assert {"small/hydrator.metadata", "small/README.md"} <= set(files)
    assert json.loads(factory.platform_file("dev", "small/hydrator.metadata") or "") == {
        "drySha": main,
        "commands": [f"promoter render --env dev --commit {main} --out rendered"],
    }
    # Argo CD notes each hydrated commit: the promotion commit (the PR's head, merged into dev)
    promoted = head(factory.platform, "promoter/dev")
    assert promoted is not None and read_note(Git(factory.platform), promoted) == main


def test_defaults_are_unchanged_without_the_opt_in(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    assert run(path, FakeClock(), wait="all").state == "done"
    for env in ("dev", "qa", "prod"):
        assert not [f for f in factory.platform_files(env) if f.endswith(("hydrator.metadata", "README.md"))]
    assert Git(factory.platform).commit_of(NOTES) is None


def test_a_render_the_branch_already_holds_gets_the_note_and_no_commit(factory: ControlPlaneFactory) -> None:
    path = factory.create({"promoter.yaml": hydrating("dev", "qa", "prod"), "workloads/app.yaml": WORKLOAD})
    first = Git(path).out("rev-parse", "main")
    assert run(path, FakeClock(), wait="all").state == "done"
    before = head(factory.platform, "dev")
    # a main commit that renders the same: Argo CD's no-op dry commit
    second = factory.commit("main", {"docs/notes.md": "nothing rendered\n"}, "docs only", keep=True)

    report = run(path, FakeClock(), wait="all")

    assert [r.state for r in report.results] == ["noop", "noop", "noop"]
    assert head(factory.platform, "dev") == before  # no commit
    assert json.loads(factory.platform_file("dev", "hydrator.metadata") or "")["drySha"] == first
    assert before is not None and read_note(Git(factory.platform), before) == second
    assert show(factory.platform, f"{NOTES_REF}:{before}") == f'{{"drySha":"{second}"}}\n'


def test_next_is_pushed_merged_by_a_person_and_gated_in_a_later_run(factory: ControlPlaneFactory) -> None:
    text = hydrating("dev", stage("qa", merge="next", gates='[{command: ["true"]}]'), "prod")
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    main = Git(path).out("rev-parse", "main")
    clock = FakeClock()

    first = run(path, clock)
    again = run(path, clock)  # a heartbeat: still waiting, nothing pushed again
    proposed = head(factory.platform, "qa-next")

    assert first.wait is not None and (first.wait.waiting_for, first.wait.environment) == ("merge", "qa")
    assert first.wait.message == "qa: waiting for someone to merge qa-next into qa"
    assert again.wait is not None and again.wait.since == first.wait.since
    assert proposed is not None and head(factory.platform, "qa-next") == proposed
    assert statuses(path)["qa"] == ("pending", "proposed on qa-next: waiting for its merge into qa")
    assert json.loads(show(factory.platform, f"{proposed}:hydrator.metadata") or "")["drySha"] == main
    assert read_note(Git(factory.platform), proposed) == main  # what GitOps Promoter reads first
    assert head(factory.platform, "promoter/qa") is None  # no PR of the promoter's
    assert not factory.platform_files("qa")  # the empty branch made for the merge

    merge_with_git(factory.root, factory.platform, "qa-next", "qa")
    clock.t += 600
    done = run(path, clock)

    assert done.state == "done", [r.message for r in done.results]
    qa = next(r for r in done.results if r.environment == "qa")
    assert qa.merge_sha == head(factory.platform, "qa") and [g.state for g in qa.gates] == ["success"]
    assert {e: s for e, (s, _) in statuses(path).items()} == {
        "dev": "success",
        "qa": "success",
        "prod": "success",
    }


def test_a_next_branch_deleted_unmerged_is_a_refused_promotion(factory: ControlPlaneFactory) -> None:
    text = hydrating("dev", stage("qa", merge="next"), "prod")
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    clock = FakeClock()
    assert run(path, clock).state == "waiting"
    Git(factory.platform).run(
        "update-ref", "-d", "refs/heads/qa-next"
    )  # GitOps Promoter's PR closed, branch gone

    report = run(path, clock)

    qa = next(r for r in report.results if r.environment == "qa")
    assert report.state == "failed" and qa.state == "failure"
    assert qa.message.startswith("qa: qa-next was deleted without being merged into qa; the promotion of")
    assert statuses(path)["qa"][0] == "failure"
    assert head(factory.platform, "qa-next") is None  # not pushed again


def test_a_next_branch_never_merged_fails_at_the_timeout(factory: ControlPlaneFactory) -> None:
    text = hydrating("dev", stage("qa", merge="next", timeout="1h"), "prod")
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    clock = FakeClock()
    assert run(path, clock).state == "waiting"
    clock.t += 3601

    report = run(path, clock)

    qa = next(r for r in report.results if r.environment == "qa")
    assert qa.state == "failure"
    assert "qa-next" in qa.message and "was not merged into qa within the timeout (1h" in qa.message


def test_a_next_render_already_merged_is_noted_on_the_next_branch(factory: ControlPlaneFactory) -> None:
    text = hydrating("dev", stage("qa", merge="next"), "prod")
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    clock = FakeClock()
    run(path, clock)
    merge_with_git(factory.root, factory.platform, "qa-next", "qa")
    assert run(path, clock).state == "done"
    proposed, merged = head(factory.platform, "qa-next"), head(factory.platform, "qa")
    second = factory.commit("main", {"docs/notes.md": "nothing rendered\n"}, "docs only", keep=True)

    report = run(path, clock)

    assert report.state == "done" and [r.state for r in report.results] == ["noop", "noop", "noop"]
    assert (head(factory.platform, "qa-next"), head(factory.platform, "qa")) == (proposed, merged)
    assert proposed is not None and read_note(Git(factory.platform), proposed) == second


def test_in_waves_each_folder_names_the_main_commit_it_holds(factory: ControlPlaneFactory) -> None:
    text = waved_pipeline(canary_gates=f"[{BROKEN_CHECK}]", fleet_gates="[]")
    path = create(factory, text.replace("spec:\n", "spec:\n  hydrator: {metadata: true}\n"))
    first = Git(path).out("rev-parse", "main")
    assert run(path, FakeClock(), wait="all").state == "done"
    broken = WORKLOAD.replace("path: ./qa}", "path: ./qa-BROKEN}")
    second = factory.commit("main", {"workloads/app.yaml": broken}, "break qa's canary", keep=True)

    report = run(path, FakeClock(), wait="all")  # the canary wave lands, its gate fails: stop

    assert report.state == "failed"
    held = {
        ct: json.loads(factory.platform_file("qa", f"{ct}/hydrator.metadata") or "")["drySha"]
        for ct in ("edge", "large", "small")
    }
    assert held == {"edge": second, "large": first, "small": first}
    assert json.loads(factory.platform_file("qa", "hydrator.metadata") or "")["drySha"] == second


def test_diff_plans_the_contracts_files_as_a_promotion_would(factory: ControlPlaneFactory) -> None:
    """``promoter diff`` after a promotion: the folders' README and ``hydrator.metadata`` stay (a
    plan without them would show them removed); a new main commit that changes a manifest shows the
    top ``hydrator.metadata`` naming it, as the promotion will write it."""
    path = factory.create({"promoter.yaml": hydrating("dev", "qa", "prod"), "workloads/app.yaml": WORKLOAD})
    assert run(path, FakeClock(), wait="all").state == "done"

    same = CliRunner().invoke(cli, ["diff", "--control-plane", str(path), "--env", "dev"])
    assert same.exit_code == 0, same.output
    assert "README.md" not in same.output and "hydrator.metadata" not in same.output

    changed = factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("main", "release")}, "a new ref", keep=True
    )
    moved = CliRunner().invoke(cli, ["diff", "--control-plane", str(path), "--env", "dev"])
    assert moved.exit_code == 1, moved.output  # diff's exit 1: there are changes
    assert "dev: +0 ~4 -0" in moved.output  # the manifest, the top metadata, the folder's two files
    assert f'+  "drySha": "{changed}",' in moved.output
    assert f"+promoter render --env dev --commit {changed} --out rendered" in moved.output
