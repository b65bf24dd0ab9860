"""A whole promotion driven only by events, through the example workflows (DESIGN section 12):
push to main, the platform repo's promoter-wake dispatch (a promotion PR merged), the
heartbeat, and runs by hand. No job waits: each run does what needs no waiting and ends.

Time is faked in the repos, where the promotion's clocks live: moving every recorded status
time back by N seconds is N seconds passing for every clock that spans runs (a bake, a gate's
timeout, a manual merge's timeout), while each run itself takes real time, measured here as
its runner time.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from promoter.changecontrol.holds import HOLDS_REF
from promoter.changecontrol.notify import NOTIFICATIONS_REF
from promoter.changecontrol.records import Records
from promoter.cli.main import cli
from promoter.clock import iso, parse_iso
from promoter.forges.notes import NOTES_REF
from promoter.ghactions.heartbeat import CRONS, cadence
from promoter.gitcmd import Git
from tests.actions.github_stand_in import GitHubStandIn
from tests.actions.test_workflow_harness import (
    EXAMPLES,
    Workflows,
    condition,
    head,
    promote_runs,
    workflows,
)
from tests.support import forkserver
from tests.support.helpers import ENV, ControlPlaneFactory, pipeline, stage
from tests.support.inbox import Inbox
from tests.support.paths import ROOT
from tests.support.waves import QA_TYPES

__all__ = ["workflows"]  # the harness's fixtures, shared

PROMOTE = EXAMPLES / "control-plane/.github/workflows/promote.yml"
WAKE = EXAMPLES / "platform-repo/.github/workflows/promoter-wake.yml"
CANARY = "\n        - {name: canary, clusterTypes: [edge], bake: 30m}"
#: A progress line of a job that waits (``--wait all``): none may appear.
WAITED = re.compile(r"waiting \S+ \(\S+ left\)|baking, \S+ to go$", re.M)
HEARTBEAT = 10 * 60


def firing(cron: str) -> tuple[float, float]:
    """The period and the offset from midnight, in seconds, of one of the heartbeat's crons (the
    forms it uses: ``*/10 * * * *``, ``7 * * * *``, ``37 */6 * * *``)."""
    minute, hour = cron.split()[:2]
    if minute.startswith("*/"):
        return 60.0 * int(minute[2:]), 0.0
    period = 3600.0 * (int(hour[2:]) if hour.startswith("*/") else 1)
    return period, 60.0 * int(minute)


def fires(start: float, end: float) -> list[tuple[float, str]]:
    """Every firing of the heartbeat's crons in (start, end], fake time 0 being a midnight."""
    out = []
    for cron in CRONS.values():
        period, offset = firing(cron)
        k = max(0, int((start - offset) // period))
        while (at := offset + k * period) <= end:
            if at > start:
                out.append((at, cron))
            k += 1
    return sorted(out)


def travel(path: Path, seconds: float) -> None:
    """``seconds`` pass for the promotion: every status time recorded in the control plane's
    notes, and every hold's times, move back by that much."""
    git = Git(path)
    _travel_holds(git, seconds)
    listing = git.run("notes", f"--ref={NOTES_REF}", "list", check=False).stdout.decode().split()
    for commit in listing[1::2]:
        lines = []
        for line in git.out("notes", f"--ref={NOTES_REF}", "show", operands=[commit]).splitlines():
            if not line.strip():
                continue  # git notes append separates the entries with a blank line
            entry = json.loads(line)
            stamped = parse_iso(entry["created_at"])
            assert stamped is not None
            entry["created_at"] = iso(stamped - seconds)
            lines.append(json.dumps(entry, sort_keys=True))
        git.run("notes", f"--ref={NOTES_REF}", "add", "-f", "-m", "\n".join(lines), operands=[commit])


def _travel_holds(git: Git, seconds: float) -> None:
    def back(stamp: str | None) -> str | None:
        when = parse_iso(stamp) if stamp else None
        return iso(when - seconds) if when is not None else stamp

    def change(doc: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
        holds = [{**h, "at": back(h.get("at")), "until": back(h.get("until"))} for h in doc.get("holds", [])]
        return ({**doc, "holds": holds}, "time passes") if holds else None

    Records(git, HOLDS_REF).update(change)

    def receivers(doc: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
        deliveries = [d for e in doc.get("events", {}).values() for d in e.get("receivers", {}).values()]
        for delivery in deliveries:  # the event's own data ("event") stays: a retry sends it as it was
            for key in ("first", "next", "since", "at"):
                if isinstance(delivery.get(key), int | float):
                    delivery[key] -= seconds
        return (doc, "time passes") if deliveries else None

    Records(git, NOTIFICATIONS_REF).update(receivers)


@dataclass
class Run:
    event: str
    at: float  # fake time since the push, seconds
    seconds: float  # runner time: the jobs' wall time
    jobs: list[str]
    state: str
    waiting: str
    flows: Workflows | None = None

    @property
    def billed(self) -> int:
        """GitHub-hosted minutes: each job that got a runner, rounded up to the minute (each job
        here takes seconds: one minute each)."""
        return len(self.jobs)


@dataclass
class Timeline:
    """The runs of one promotion, each started by an event at a fake time; the control plane's
    repository variables (the heartbeat's) live in GitHub's stand-in, where the runs set them."""

    factory: ControlPlaneFactory
    make: Callable[[dict[str, Any]], Workflows]
    github: GitHubStandIn
    now: float = 0.0
    runs: list[Run] = field(default_factory=list)

    pending: float = 0.0  # time passed that the notes have not been moved back by yet
    caller: Path = PROMOTE  # the control plane's workflow that the events run

    def wait(self, seconds: float) -> None:
        self.pending += seconds
        self.now += seconds

    def _travel(self) -> None:
        if self.pending:
            travel(self.factory.path, self.pending)
            self.pending = 0.0

    @property
    def variables(self) -> dict[str, str]:
        return self.github.variables.setdefault("org/control-plane", {})

    @property
    def armed_cron(self) -> str | None:
        """The heartbeat's cron that gets a runner now (promoter/ghactions/heartbeat.py), None when idle."""
        setting = self.variables.get("PROMOTER_HEARTBEAT", "armed")
        return None if setting == "idle" else CRONS.get(setting, CRONS["armed"])

    def event(self, name: str, **github: Any) -> Run:
        if name == "schedule" and "event" not in github:  # the firing of the cadence in force
            github["event"] = {"schedule": self.armed_cron or CRONS["armed"]}
        flows = self.make(
            {"event_name": name, "ref_name": "main", "sha": head(self.factory), **self.api(), **github}
        )
        flows.variables = self.variables
        cron = github.get("event", {}).get("schedule") if name == "schedule" else None
        runs = name != "schedule" or cron == self.armed_cron
        if runs:
            self._travel()  # a run reads the clocks: the time passed so far, all at once
        started = time.monotonic()
        outputs = flows.call(self.caller)
        seconds = time.monotonic() - started
        assert flows.skipped == (not runs), f"the caller's if: for {name} {cron} with {self.variables}"
        if flows.skipped:  # not the armed cadence's cron, or disarmed: no runner, nothing billed
            run = Run(name, self.now, 0.0, [], "skipped", "")
            self.runs.append(run)
            return run
        for action in promote_runs(flows):
            assert not WAITED.search(action.stderr), f"a job waited: {WAITED.search(action.stderr)}"
        run = Run(
            name,
            self.now,
            seconds,
            [j.job for j in flows.jobs if not j.skipped],
            str(outputs["state"] or ""),
            f"{outputs['waiting-for'] or ''} {outputs['waiting-environment'] or ''}".strip(),
            flows,
        )
        self.runs.append(run)
        return run

    def api(self) -> dict[str, str]:
        """The github context's API and token: GitHub's stand-in."""
        return {"api_url": self.github.url, "token": "ghs_harness-job-token"}

    def heartbeats(self, until: float) -> list[Run]:
        """The schedule's events up to ``until``, each cron's firings as GitHub sends them; those
        of the cadence in force at each (the ten-minute cron's while idle), the others' skipped
        firings counted as events."""
        done = []
        for at, cron in fires(self.now, until):
            self.wait(at - self.now)
            mine = cron == (self.armed_cron or CRONS["armed"])
            run = self.event("schedule", event={"schedule": cron})
            if mine or run.jobs:
                done.append(run)
        self.wait(until - self.now)
        return done

    def billed(self) -> int:
        return sum(r.billed for r in self.runs)

    def report(self, title: str) -> None:
        total = sum(r.seconds for r in self.runs)
        ran = sum(1 for r in self.runs if r.jobs)
        print(
            f"\n{title}: {len(self.runs)} events, {ran} runs, {self.billed()} billed minutes, "
            f"{total:.1f} s of runner time (harness)"
        )
        for r in self.runs:
            print(
                f"  {r.at / 60:7.1f} min  {r.event:<20} {r.seconds:5.1f} s  {r.state:<8} {r.waiting} {r.jobs}"
            )


def setup(factory: ControlPlaneFactory, *stages: str | tuple[str, dict[str, str]]) -> None:
    text = pipeline(*stages)
    factory.commit("main", {"promoter.yaml": text}, "the pipeline of this promotion", keep=True)
    factory.commit("qa", {"env.yaml": QA_TYPES}, "qa: three cluster types")


def merge_by_hand(factory: ControlPlaneFactory, env: str) -> str:
    git = Git(factory.platform)
    head_sha, base = git.commit_of(f"refs/heads/promoter/{env}"), git.commit_of(f"refs/heads/{env}")
    assert head_sha is not None
    tree = git.out("rev-parse", f"{head_sha}^{{tree}}")
    sha = git.out("commit-tree", tree, "-p", base or head_sha, "-p", head_sha, "-m", "merged by a human")
    git.run("update-ref", f"refs/heads/{env}", sha)
    return sha


def platform_wake(line: Timeline, merge_sha: str, env: str) -> None:
    """The platform repo's workflow on the merged promotion PR, run as GitHub runs it (its
    ``curl`` to ``GITHUB_API_URL``, here GitHub's stand-in): it dispatches promoter-wake."""
    pull = {"merged": True, "head": {"ref": f"promoter/{env}"}, "merge_commit_sha": merge_sha}
    flows = line.make(
        {
            "event_name": "pull_request",
            "event": {"pull_request": pull},
            "repository": "org/platform",
            **line.api(),
        }
    )
    outputs = line.factory.path.parent / "wake-outputs"
    os.environ["GITHUB_OUTPUT"] = str(outputs)  # the steps' outputs file, as the runner gives one
    before = len(line.github.dispatches)
    try:
        flows.run(WAKE, variables={"PROMOTER_CONTROL_PLANE": "org/control-plane"})
    finally:
        del os.environ["GITHUB_OUTPUT"]
        outputs.unlink(missing_ok=True)
    (job,) = flows.jobs
    assert not job.failed, [getattr(r, "stderr", "") for _, r in job.steps]
    sent = line.github.dispatches[before:]
    assert sent == [
        (
            "org/control-plane",
            {"event_type": "promoter-wake", "client_payload": {"event": "pull_request", "sha": merge_sha}},
        )
    ]
    line.runs.append(Run("relay (platform)", line.now, 0.0, ["wake"], "sent", ""))


@pytest.fixture
def github() -> Iterator[GitHubStandIn]:
    stand_in = GitHubStandIn().start()
    yield stand_in
    stand_in.stop()


def statuses(factory: ControlPlaneFactory, commit: str) -> dict[str, str]:
    git = Git(factory.path)
    text = git.run("notes", f"--ref={NOTES_REF}", "show", operands=[commit], check=False).stdout.decode()
    latest = {}
    for line in filter(str.strip, text.splitlines()):
        entry = json.loads(line)
        latest[entry["context"].removeprefix("promoter/")] = entry["state"]
    return latest


def test_a_whole_promotion_is_driven_by_events_and_the_heartbeat_runs_only_while_it_bakes(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory, github: GitHubStandIn
) -> None:
    """Scenario (b), then (a): the promotion with a 30-minute qa bake and prod merged by hand two
    hours later; then a day with nothing waiting."""
    setup(factory, "dev", stage("qa", waves=CANARY), stage("prod", merge="manual", timeout="24h"))
    x = head(factory)
    line = Timeline(factory, workflows, github)

    pushed = line.event("push")  # dev, then qa's canary lands and starts its 30-minute bake
    assert line.variables == {"PROMOTER_HEARTBEAT": "armed"}
    baking = line.heartbeats(until=20 * 60)
    baked = line.heartbeats(until=30 * 60)  # the bake is over: qa's last wave, then prod asks
    assert line.variables == {"PROMOTER_HEARTBEAT": "idle"}  # prod waits for a person: no heartbeat
    waiting = line.heartbeats(until=150 * 60)  # two hours on, someone merges prod's PR
    line.wait(60)
    line._travel()
    platform_wake(line, merge_by_hand(factory, "prod"), "prod")
    woken = line.event("repository_dispatch", event={"action": "promoter-wake"})
    idle = line.heartbeats(until=24 * 3600)  # the rest of the day: nothing waits
    line.report("(b) dev -> qa (bake 30m) -> prod (merged by hand 2h later), then (a) the rest of the day")

    assert (pushed.state, pushed.waiting, pushed.jobs) == ("waiting", "bake qa", ["advance"])
    assert {(r.state, r.waiting) for r in baking} == {("waiting", "bake qa")}
    # the heartbeat after the bake: qa done, prod's approval asked (once) and its PR opened
    assert [(r.state, r.waiting, r.jobs) for r in baked] == [
        ("waiting", "merge prod", ["advance", "approval", "approved"])
    ]
    assert {r.state for r in waiting} == {"skipped"}  # 12 heartbeats, none billed
    assert (woken.state, woken.jobs) == ("done", ["advance"])  # the dispatch after the merge
    assert {r.state for r in idle} == {"skipped"} and len(idle) > 100  # (a): 0 minutes a day
    assert statuses(factory, x) == {"dev": "success", "qa": "success", "prod": "success"}
    assert line.billed() <= 10  # the push, 3 heartbeats (2 + 1 jobs), the relay, the dispatch


def test_a_gate_times_out_once_and_the_held_commit_stays_quiet(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory, github: GitHubStandIn
) -> None:
    """Scenario (c): a promotion held after a failure, for a day: one red run."""
    never = "[{commitStatus: {contexts: [kustomization/*]}}]"
    setup(factory, "dev", stage("qa", timeout="30m", gates=never), "prod")
    line = Timeline(factory, workflows, github)

    first = line.event("push")
    beats = line.heartbeats(until=24 * 3600)
    line.wait(60)
    status = line.event("repository_dispatch", event={"action": "promoter-wake"})  # a cluster's status
    line.report("(c) a gate that times out, then the commit held for a day")

    assert (first.state, first.waiting) == ("waiting", "gates qa")
    ran = [(r.state, r.waiting) for r in beats if r.jobs]
    assert ran == [("waiting", "gates qa")] * 2 + [("failed", "")]  # exit 1 once
    assert {r.state for r in beats if not r.jobs} == {"skipped"}  # then 0 minutes for the day
    assert status.state == "held"  # a later wake-up: exit 0, nothing posted
    assert status.flows is not None
    [held] = promote_runs(status.flows)
    assert held.returncode == 0
    log = held.stdout + held.stderr
    assert "qa: HELD: " in log and "held since " in log and "clears it" in log
    assert "::notice title=promoter%3A qa held::" in held.stderr and "::error" not in held.stderr
    assert statuses(factory, head(factory)) == {"dev": "success", "qa": "failure"}


def test_a_newer_commit_while_prod_waits_supersedes_it_there(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory, github: GitHubStandIn
) -> None:
    setup(factory, "dev", "qa", stage("prod", merge="manual", timeout="24h"))
    line = Timeline(factory, workflows, github)
    older = head(factory)
    first = line.event("push")
    line.wait(HEARTBEAT)
    newer = factory.commit("main", {"workloads/note.txt": "a newer main commit\n"}, "newer", keep=True)

    second = line.event("push")
    line.wait(60)
    line._travel()
    platform_wake(line, merge_by_hand(factory, "prod"), "prod")
    woken = line.event("repository_dispatch", event={"action": "promoter-wake"})
    line.report("a newer main commit while prod waits")

    assert (first.state, first.waiting, second.state, second.waiting) == (
        "waiting",
        "merge prod",
        "waiting",
        "merge prod",
    )
    assert second.jobs == ["advance", "approval", "approved"]  # prod's approval, asked for the newer
    assert woken.state == "done"
    assert statuses(factory, older)["prod"] == "error"  # superseded by the newer commit
    assert statuses(factory, newer) == {"dev": "success", "qa": "success", "prod": "success"}
    assert newer in (factory.platform_file("prod", ".promoter/promotion.yaml") or "")


@pytest.mark.asleep  # until the window opens: 10 to 70 s
def test_a_closed_window_ends_the_run_waiting_and_the_first_heartbeat_after_it_opens_goes_on(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory, github: GitHubStandIn
) -> None:
    """qa's change window (docs/change-control.md) opens at the next full minute: the push's run
    promotes dev, meets the closed window and ends waiting for it, the heartbeat armed; the first
    heartbeat after the opening promotes qa and prod. Windows read the wall clock, so real time
    passes here (10 to 70 s, asleep)."""
    opens = (datetime.now(UTC) + timedelta(seconds=70)).replace(second=0, microsecond=0)
    hours = f"{opens:%H:%M}-{opens + timedelta(hours=2):%H:%M}"
    setup(factory, "dev", stage("qa", windows=f'{{timeZone: UTC, allow: [{{hours: "{hours}"}}]}}'), "prod")
    line = Timeline(factory, workflows, github)

    pushed = line.event("push")
    assert (pushed.state, pushed.waiting) == ("waiting", "window qa"), pushed
    assert line.variables == {"PROMOTER_HEARTBEAT": "armed"}  # only time opens a window
    assert statuses(factory, head(factory)) == {"dev": "success"}  # qa not started
    time.sleep(max(0.0, opens.timestamp() - time.time()) + 0.5)
    line.wait(HEARTBEAT)  # the first heartbeat after the opening
    resumed = line.event("schedule")
    line.report("a closed window, then the heartbeat after it opens")

    assert (resumed.state, resumed.jobs) == ("done", ["advance", "approval", "approved"])  # prod asks
    assert line.variables == {"PROMOTER_HEARTBEAT": "idle"}
    assert statuses(factory, head(factory)) == {"dev": "success", "qa": "success", "prod": "success"}
    assert line.billed() == 4  # the push's job, the heartbeat's three


def test_a_killed_run_leaves_the_heartbeat_armed_and_the_next_run_goes_on(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory, github: GitHubStandIn
) -> None:
    setup(factory, "dev", stage("qa", waves=CANARY), "prod")
    line = Timeline(factory, workflows, github)
    line.variables["PROMOTER_HEARTBEAT"] = "idle"  # nothing waited before this push
    # the push's run, killed (SIGKILL: a lost runner) right after its second push to the platform
    args = [
        "promote",
        "--control-plane",
        str(factory.path),
        "--wait",
        "none",
        "--heartbeat-variable",
        "PROMOTER_HEARTBEAT",
    ]
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "org/control-plane",
           "GITHUB_API_URL": github.url, "PROMOTER_GITHUB_TOKEN": "ghs_harness-job-token"}  # fmt: skip
    killed = forkserver.run("tests.support.killhook", ["push", "2", *args], cwd=ROOT, env=env, timeout=300)
    assert killed.returncode == -9, killed.stderr
    assert line.variables["PROMOTER_HEARTBEAT"] == "armed"  # armed before its first push

    woken = line.event("schedule")  # the next heartbeat does its work
    rest = line.heartbeats(until=40 * 60)
    line.report("a killed run")

    assert (woken.state, woken.waiting) == ("waiting", "bake qa")
    assert [r.state for r in rest if r.jobs][-1] == "done"
    assert line.variables["PROMOTER_HEARTBEAT"] == "idle"
    assert statuses(factory, head(factory)) == {"dev": "success", "qa": "success", "prod": "success"}


def test_a_push_to_a_held_environment_branch_is_approved_before_its_scheduling_flow(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory
) -> None:
    done = CliRunner().invoke(cli, ["promote", "--control-plane", str(factory.path)])
    assert done.exit_code == 0, done.output
    factory.commit("prod", {"env.yaml": ENV.replace("REGION: here", "REGION: there")}, "prod: move")
    on_prod = workflows({"event_name": "push", "ref_name": "prod", "sha": head(factory, "prod")})

    outputs = on_prod.call(EXAMPLES / "environments/prod/.github/workflows/schedule.yml")

    assert [j.job for j in on_prod.jobs if not j.skipped] == ["advance", "approval", "approved"]
    [approved] = promote_runs(on_prod)  # the advance job's promote step did not run
    advance = next(j for j in on_prod.jobs if j.job == "advance")
    assert dict(advance.steps)["Promote, as far as it goes without waiting"] is None
    assert json.loads(approved.outputs["results"])["prod"]["state"] == "success"
    assert outputs["state"] == "done"
    assert "REGION: there" in (factory.platform_file("prod", "small/app-t3/platform-config.yaml") or "")


def hold(factory: ControlPlaneFactory, *args: str, env: dict[str, str] | None = None) -> str:
    """``promoter hold`` or ``release`` by hand (an on-call's laptop): its output."""
    done = CliRunner().invoke(cli, [*args, "--control-plane", str(factory.path)], env=env)
    assert done.exit_code == 0, done.output
    return done.output


def test_a_hold_with_an_end_is_ended_by_the_first_heartbeat_after_it(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory, github: GitHubStandIn
) -> None:
    """A 4-hour hold on prod: the push promotes dev and qa and ends waiting for the hold, the
    heartbeat armed hourly for its end; it tightens to every ten minutes in the last hour, and the
    first heartbeat after the end promotes prod with no other event."""
    setup(factory, "dev", "qa", "prod")
    hold(factory, "hold", "prod", "--reason", "INC-4711 payments degraded", "--until", "4h")
    line = Timeline(factory, workflows, github)

    pushed = line.event("push")
    assert (pushed.state, pushed.waiting) == ("waiting", "hold prod"), pushed
    assert line.variables == {"PROMOTER_HEARTBEAT": "armed-hourly"}
    beats = line.heartbeats(until=4 * 3600 + HEARTBEAT)
    line.report("a 4-hour hold on prod, ended by the heartbeat")

    ran = [r for r in beats if r.jobs]
    assert [(r.state, r.waiting) for r in ran[:-1]] == [("waiting", "hold prod")] * (len(ran) - 1)
    assert (ran[-1].state, ran[-1].jobs) == ("done", ["advance", "approval", "approved"])  # prod asks
    assert 4 * 3600 <= ran[-1].at <= 4 * 3600 + HEARTBEAT  # no later than ten minutes after its end
    assert [r.at for r in ran[:4]] == [7 * 60 + h * 3600 for h in range(4)]  # hourly, then every ten
    assert line.variables == {"PROMOTER_HEARTBEAT": "idle"}
    assert statuses(factory, head(factory)) == {"dev": "success", "qa": "success", "prod": "success"}
    assert line.billed() <= 30  # the push, 4 hourly and 5 ten-minute heartbeats, the last's 3 jobs


def test_a_release_from_a_laptop_wakes_the_promotion_and_the_dispatched_run_finishes_prod(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory, github: GitHubStandIn
) -> None:
    """A hold without an end disarms the heartbeat (only a release ends it); ``promoter release``
    with GitHub credentials sends promoter-wake itself, and the run it starts finishes prod."""
    setup(factory, "dev", "qa", "prod")
    hold(factory, "hold", "prod", "--reason", "INC-4711 payments degraded")
    line = Timeline(factory, workflows, github)
    pushed = line.event("push")
    assert (pushed.state, pushed.waiting) == ("waiting", "hold prod")
    assert line.variables == {"PROMOTER_HEARTBEAT": "idle"}  # nothing but a release ends it
    assert {r.state for r in line.heartbeats(until=3600)} == {"skipped"}

    flags = ["--control-plane-repo", "org/control-plane", "--github-api-url", github.url]
    said = hold(factory, "release", "prod", *flags, env={"PROMOTER_GITHUB_TOKEN": "ghp_on-call-token"})
    assert "woke the promotion: promoter-wake sent to org/control-plane" in said
    assert github.dispatches == [
        (
            "org/control-plane",
            {
                "event_type": "promoter-wake",
                "client_payload": {"event": "release", "environment": "prod", "wave": None},
            },
        )
    ]
    woken = line.event("repository_dispatch", event={"action": "promoter-wake"})
    line.report("a hold released from a laptop")

    assert (woken.state, woken.jobs) == ("done", ["advance", "approval", "approved"])
    assert statuses(factory, head(factory)) == {"dev": "success", "qa": "success", "prod": "success"}

    # without credentials it says how to wake it, and wakes nothing
    hold(factory, "hold", "prod", "--reason", "again")
    said = hold(
        factory,
        "release",
        "prod",
        *flags,
        env={"PROMOTER_GITHUB_TOKEN": "", "GITHUB_TOKEN": "", "GH_TOKEN": ""},
    )
    assert "gh api --method POST repos/org/control-plane/dispatches -f event_type=promoter-wake" in said
    assert len(github.dispatches) == 1


def heartbeat_runs(start: float, opens: float) -> list[tuple[float, str]]:
    """The heartbeat's runs while a promotion waits for a window that opens at ``opens`` (fake
    seconds from a midnight), from a run at ``start``: each cron's firings judged by the example
    workflow's own ``if:`` (harness's expression language), each run arming the cadence that
    promoter/ghactions/heartbeat.py chooses for the time left, until the run after the opening."""
    expression = yaml.safe_load(PROMOTE.read_text())["jobs"]["promote"]["if"]
    setting = cadence([opens], start)
    runs = []
    for at, cron in fires(start, opens + 6 * 3600):
        context = {"github": {"event_name": "schedule", "event": {"schedule": cron}}}
        if not condition(expression, {**context, "vars": {"PROMOTER_HEARTBEAT": setting}}):
            continue  # no runner, not billed
        runs.append((at, setting))
        if at >= opens:
            return runs  # this run goes on: the window is open
        setting = cadence([opens], at)
    raise AssertionError("no heartbeat after the opening")


def test_a_weekend_behind_a_closed_window_bills_under_an_hour() -> None:
    """A commit merged Friday 18:00 against a Mon-Fri 09:00-17:00 window waits 63 hours: the
    cadence widens to six-hourly, then hourly, then every ten minutes; a weeknight (17:00 to 09:00)
    the same. Counted on a simulated clock (windows read the wall clock: tests/actions runs the
    real opening above), with the workflow's real ``if:``, one billed minute a run."""
    hour = 3600.0
    friday_18 = 18 * hour  # fake time 0 is Friday's midnight
    weekend = heartbeat_runs(friday_18, friday_18 + 63 * hour)
    weeknight = heartbeat_runs(17 * hour, 33 * hour)
    hold = heartbeat_runs(0.0, 4 * hour)
    for title, runs in (("weekend", weekend), ("weeknight", weeknight), ("4-hour hold", hold)):
        cadences = {s: sum(1 for _, c in runs if c == s) for s in CRONS}
        print(f"\n{title}: {len(runs) + 1} billed minutes (the push and {len(runs)} heartbeats: {cadences})")
    assert len(weekend) + 1 <= 60 and len(weeknight) + 1 <= 30 and len(hold) + 1 <= 30
    assert weekend[-1][0] - (friday_18 + 63 * hour) < 600  # no more than ten minutes late
    assert [s for _, s in weekend][:3] == ["armed-6h"] * 3


def test_a_receiver_down_during_the_push_gets_each_event_once_from_a_later_heartbeat(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory, github: GitHubStandIn
) -> None:
    """The promotion is done in the push's run, but the webhook answered 503: the run keeps the
    heartbeat armed for the retry (1 minute on), the receiver is back, and the first heartbeat
    after it delivers each event once, the same body; then the heartbeat disarms."""
    inbox = Inbox()
    threading.Thread(target=inbox.serve_forever, daemon=True).start()
    try:
        hook = (
            f"  notifications:\n    - {{name: audit, webhook: {{url: '{inbox.url}/hook'}}, events: [done]}}\n"
        )
        factory.commit(
            "main", {"promoter.yaml": pipeline("dev", "qa", "prod") + hook}, "receivers", keep=True
        )
        factory.commit("qa", {"env.yaml": QA_TYPES}, "qa: three cluster types")
        line = Timeline(factory, workflows, github)
        inbox.status = 503
        pushed = line.event("push", event={})
        assert (pushed.state, pushed.jobs) == ("done", ["advance", "approval", "approved"])
        assert inbox.received == [] and len(inbox.refused) >= 3
        assert line.variables == {"PROMOTER_HEARTBEAT": "armed"}  # a notification to retry
        inbox.status = 200
        beats = line.heartbeats(until=3600)
        line.report("a receiver down during the push, back for the heartbeat")
    finally:
        inbox.shutdown()
        inbox.server_close()
    ran = [r for r in beats if r.jobs]
    assert len(ran) == 1 and ran[0].at == HEARTBEAT  # the first heartbeat after the backoff
    bodies = [json.loads(body) for _, _, body in inbox.received]
    assert sorted(b["environment"] for b in bodies) == ["dev", "prod", "qa"]  # each once
    first = {json.loads(body)["key"]: json.loads(body) for _, _, body in inbox.refused}
    assert all(first[b["key"]] == b for b in bodies)  # the same body as the failed attempt
    assert line.variables == {"PROMOTER_HEARTBEAT": "idle"}
