"""One step of an environment's promotion (the whole environment, or one wave): plan onto the
platform branch as it is now -> push the promotion branch -> land by the merge policy -> gates.

A push to the platform branch under a step means planning again onto its new head. What a rerun
finds tells it how far an earlier run got: a step whose folders already hold the main commit
is gated again (or, when a later wave holds it too, was gated before).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace

from promoter.clock import Clock
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import PromotionFailed, Superseded
from promoter.forges.base import Forge, PullRequest
from promoter.model import Environment, EnvironmentObjects, MainObjects, Status, promotion_branch
from promoter.platform.owned import owned_tree
from promoter.platform.provenance import Provenance
from promoter.platform.repo import PlatformRepo
from promoter.promotion.control import ChangeControl
from promoter.promotion.gating import Gating
from promoter.promotion.graph import upstream_states
from promoter.promotion.hydrator import Hydrating
from promoter.promotion.landing import BaseMoved, Landing, MergePending
from promoter.promotion.messages import Facts, Texts, commit_facts, default_texts, texts
from promoter.promotion.mixed import Held
from promoter.promotion.nextbranch import head_branch
from promoter.promotion.options import Options
from promoter.promotion.prchecks import PRChecks, Verdict
from promoter.promotion.removals import Scene, find, judge
from promoter.promotion.report import EnvResult, WaveResult, change_summary, pr_body, pr_title, wave_rows
from promoter.promotion.rollback import Rollbacks
from promoter.promotion.sources import SourceChecker
from promoter.promotion.statuses import Statuses
from promoter.promotion.unchanged import Planned
from promoter.promotion.waves import Step, pending_description
from promoter.rendering.tree import FolderSubset, Rendered

MAX_REPLANS = 5


class Attempts(Hydrating, ABC):
    """The collaborators of a run, and one step of one environment at a time."""

    def __init__(
        self,
        control_plane: ControlPlane,
        platform: PlatformRepo,
        forge: Forge,
        clock: Clock,
        console: Console,
        options: Options,
    ) -> None:
        self.cp = control_plane
        self.platform = platform
        self.forge = forge
        self.clock = clock
        self.out = console
        self.opts = options
        self.statuses = Statuses(forge, repost=options.waits, wall=clock.wall)
        self.landing = Landing(platform, forge, clock, console, options.pacing)
        self.rollbacks = Rollbacks(
            control_plane, platform, self.statuses, self.landing, console, clock, options
        )
        self.gating = Gating(platform, forge, clock, console, options, self.rollbacks)
        self.sources = SourceChecker()  # checkSources: each source asked once per run
        self.passed: set[str] = set()  # environments this run saw succeed (a dry run posts nothing)
        self.asked: set[str] = set()  # environments this run asked an approval for (one per run)
        self._env_start = 0.0  # when the environment under way started
        self._start = 0.0  # when the step under way started: its deadline counts from here
        self._step: Step | None = None
        self._partial = EnvResult("", "failure")  # what the step has done so far, for a failure's report
        self._prs: dict[str, PullRequest] = {}
        self._steps: tuple[Step, ...] = ()  # the environment's steps in this run
        self._done: list[WaveResult] = []  # its waves done so far
        self._held: Held | None = None  # the scheduling flow on folders of several main commits
        self._came_with: str | None = None  # the earlier main commit whose content made this one a noop
        self.change: ChangeControl | None = None  # holds and change windows (DESIGN section 13)
        # per (main commit, environment): its objects, render and steps, once per run
        self._prepared: dict[tuple[str, str], tuple[EnvironmentObjects, Rendered, tuple[Step, ...]]] = {}

    @abstractmethod
    def prepare(self, main: MainObjects, env: Environment) -> tuple[EnvironmentObjects, Rendered]:
        """The environment's objects and render, once per run (``EnvironmentRun``)."""

    @abstractmethod
    def steps_of(self, main: MainObjects, env: Environment, *, waves: bool = True) -> tuple[Step, ...]:
        """The environment's steps: its waves, or with ``waves`` False the whole at once."""

    def _attempts(
        self, main: MainObjects, env: Environment, step: Step, current: Status | None, *, trust_current: bool
    ) -> EnvResult:
        """Attempts until one is not overtaken by a push to the platform branch. With
        ``trust_current`` (the scheduling flow), an unchanged tree of the main commit that
        already succeeded here is done at once."""
        for _ in range(MAX_REPLANS):
            try:
                return self._attempt(main, env, step, current, trust_current)
            except BaseMoved as moved:
                self.out.say(
                    f"{step.prefix(env.name)}: {env.gitops_branch} moved to {moved.sha[:12]}; rendering onto it again"
                )
        raise PromotionFailed(
            f"{env.name}: {env.gitops_branch} kept moving under the promotion; try again later"
        )

    def _attempt(
        self, main: MainObjects, env: Environment, step: Step, current: Status | None, trust_current: bool
    ) -> EnvResult:
        """Plan onto the platform branch as it is now, push, land, gate. BaseMoved: plan again."""
        planned = self._plan(main, env, step)
        result = self._progress(
            EnvResult(env.name, "failure", files=_file_count(planned, step), changes=planned.plan.changes)
        )
        if not planned.plan.changed and planned.base is not None:
            return self._unchanged(main, env, step, planned, result, current, trust_current)
        if self.change is not None:  # a hold or a closed window stops what would land (section 13)
            pr_open = self._phase(main, env, step) == "merge"  # a hold label can be on it
            self.change.stop(main, env, step, self.forge if pr_open else None)
        where = f"{head_branch(env)} and merge into {env.gitops_branch} ({env.merge})"
        if self.opts.dry_run:
            self.out.say(f"{step.prefix(env.name)}: dry run: would push {where}")
            return replace(result, state="dry-run", message=f"would push {where}")
        promotion_sha, superseded, wording = self._promotion_commit(main, env, step, planned)
        result = self._progress(replace(result, promotion_sha=promotion_sha))
        if superseded:
            self.statuses.post(
                superseded,
                self.statuses.context_of(env),
                "error",
                f"superseded by {main.commit[:12]}",
                self.opts.run_url,
            )
            self.out.say(f"{env.name}: supersedes the pending promotion of {superseded[:12]}")
        self._note(main, env, promotion_sha)
        if env.merge == "next":
            merge_sha, pr_url = self._land_next(main, env, step, promotion_sha), None
        else:
            wording = wording or self._texts(main, env, step, planned, superseded)  # a reused branch
            merge_sha, pr_url = self._land(main, env, step, planned, promotion_sha, wording)
        landed = self._progress(
            replace(result, merge_sha=merge_sha, pr_url=pr_url, checks=self._partial.checks)
        )
        return self._gates(main, env, step, merge_sha, landed)

    def _progress(self, result: EnvResult) -> EnvResult:
        """Remember how far this step got: a failure later reports it (PR, merge commit)."""
        self._partial = result
        return result

    def _plan(self, main: MainObjects, env: Environment, step: Step) -> Planned:
        objects, rendered = self.prepare(main, env)
        heads = self.platform.fetch([env.gitops_branch, head_branch(env)])
        base, existing = heads[env.gitops_branch], heads[head_branch(env)]
        if base is None and env.merge in ("manual", "next") and not self.opts.dry_run:
            base = self.platform.start_branch(env.gitops_branch)  # a person needs a branch to merge into
            self.out.say(f"{step.prefix(env.name)}: made {env.gitops_branch}, empty, for its first promotion")
        previous = self.platform.provenance(base, env.gitops_path) if base else None
        deployed = previous.main_commit if previous else None
        if deployed and deployed != main.commit and self.cp.git.is_ancestor(main.commit, deployed):
            raise Superseded(
                f"{env.gitops_branch} already has the newer main commit {deployed[:12]}; not going back"
            )
        provenance = Provenance.of(main, env, objects, rendered)
        files, managed = rendered.files, rendered.cluster_types
        if rendered.owns_tree:  # Kalypso's layout: stale folders go, dot-folders keep their files
            files, stale = owned_tree(
                self.platform, base, env.gitops_path, rendered.files, rendered.keeps_unwritten
            )
            managed = (*managed, *stale)
        only = None
        there = deployed
        if env.waves:
            provenance = provenance.landed(previous, step.name, step.cluster_types, last=step.last)
        if self._held is not None:
            provenance = self._held.provenance(provenance, step.cluster_types)
        if not step.whole:
            files = FolderSubset(rendered.files, step.cluster_types)
            only = _managed(step, rendered, previous)
            held = previous.main_commits(step.cluster_types) if previous else {None}
            if len(held) > 1:  # a cluster type with no folder (no assignment, or new) holds nothing
                held.discard(None)
            there = next(iter(held)) if len(held) == 1 else None
        plan = self._plan_tree(main, env, base, files, managed, provenance, only)
        scene = Scene(
            main, env, objects, files, base, previous, frozenset(managed if only is None else only), step.name
        )
        found = find(self.cp, self.platform.reader, scene)
        removals = judge(found, allow=self.opts.allow_removal, dry_run=self.opts.dry_run, say=self.out.say)
        kinds = len(step.cluster_types)
        self.out.say(
            f"{step.prefix(env.name)}: rendered {_rendered_count(rendered, step)} files for {len(rendered.assignments)} assignments "
            f"on {kinds} cluster types ({change_summary(plan.changes)}) "
            f"from main {main.commit[:7]}, {env.branch}@{objects.commit[:7]}"
        )
        return Planned(objects, rendered, base, existing, deployed, there, previous, plan, removals)

    def _promotion_commit(
        self, main: MainObjects, env: Environment, step: Step, planned: Planned
    ) -> tuple[str, str | None, Texts | None]:
        """Push the promotion branch (reusing it when a rerun finds it already right); its sha,
        the main commit whose pending promotion it supersedes, and the texts its commit was
        written with (None: the branch was reused, no text was needed)."""
        superseded = None
        existing, base = planned.existing, planned.base
        self._check_proposal(main, env, step, existing)
        if existing:
            theirs = self.platform.provenance(existing, env.gitops_path)
            parents = self.platform.git.out("rev-list", "--parents", "-n", "1", operands=[existing]).split()[
                1:
            ]
            if (
                theirs is not None
                and theirs.main_commit == main.commit
                and theirs.env_commit == planned.objects.commit
                and theirs.wave == step.name
                and dict(theirs.sources) == dict(planned.rendered.sources)  # Kalypso's workload repos
                and parents[:1] == ([base] if base else [])
            ):
                self.out.say(
                    f"{step.prefix(env.name)}: {head_branch(env)} is already at this promotion ({existing[:12]})"
                )
                return existing, None, None
            old = theirs.main_commit if theirs else None
            if (
                old is not None
                and old != main.commit
                and self.statuses.state_of(old, self.statuses.context_of(env)) == "pending"
            ):
                superseded = old
        wording = self._texts(main, env, step, planned, superseded)  # before any push
        sha = self.platform.commit(
            planned.plan, env.gitops_path, [base] if base else [], wording.commit_message
        )
        if self._already_proposed(env, existing, sha) and existing is not None:
            return existing, superseded, wording
        self.landing.push_branch(head_branch(env), existing, sha)
        self.out.say(f"{step.prefix(env.name)}: pushed {head_branch(env)} at {sha[:12]}")
        return sha, superseded, wording

    def _land(
        self,
        main: MainObjects,
        env: Environment,
        step: Step,
        planned: Planned,
        sha: str,
        wording: Texts,
    ) -> tuple[str, str | None]:
        """Merge by the environment's policy, with ``wording``'s PR; the merge commit and the PR's URL."""
        context, prefix = self.statuses.context_of(env), step.prefix(env.name)

        def opened(pr: PullRequest) -> None:
            self._prs[env.name] = pr
            self._progress(replace(self._partial, pr_url=pr.url))
            self.statuses.post(
                main.commit, context, "pending", pending_description(step, f"PR open: {pr.url}"), pr.url
            )
            self.out.say(f"{prefix}: PR {pr.url} ({env.merge} merge{wording.labelled})")
            if env.merge == "manual":
                self.out.say(f"{prefix}: waiting for someone to merge {pr.head_branch} into {pr.base_branch}")

        try:
            landed = self.landing.land(
                env,
                branch=promotion_branch(env.name),
                base=planned.base,
                sha=sha,
                title=wording.title,
                body=wording.body,
                deadline=self._merge_deadline(main, env, step),
                on_open=opened,
                who=prefix,
                labels=tuple(dict.fromkeys((*wording.labels, *planned.rendered.labels))),
                checks=self._pr_checks(env, prefix),
            )
        except MergePending as pending:  # since when: as the PR's status recorded it
            raise self._merge_pending(env, step, pending, self._since(main, env, step, "merge")) from None
        assert landed.merge_sha is not None  # it waited for the merge
        if landed.pr is None:
            what = f"pushed to {env.gitops_branch}; waiting for gates"
            self.statuses.post(
                main.commit, context, "pending", pending_description(step, what), self.opts.run_url
            )
            self.out.say(f"{prefix}: pushed {sha[:12]} straight to {env.gitops_branch} (merge: direct)")
            return landed.merge_sha, None
        what = f"merged {landed.merge_sha[:12]}; waiting for gates"
        self.statuses.post(main.commit, context, "pending", pending_description(step, what), landed.pr.url)
        self.out.say(f"{prefix}: merged {landed.merge_sha[:12]} into {env.gitops_branch}")
        return landed.merge_sha, landed.pr.url

    def _pr_checks(self, env: Environment, prefix: str) -> PRChecks | None:
        """``prChecks``: the PR's required checks; what each look saw goes in the step's result."""
        if env.pr_checks is None:
            return None

        def seen(verdict: Verdict) -> None:
            self._progress(replace(self._partial, checks=list(verdict.checks)))

        return PRChecks(self.forge, env, self.out.say, prefix, seen)

    def _texts(
        self, main: MainObjects, env: Environment, step: Step, planned: Planned, superseded: str | None
    ) -> Texts:
        """The PR's title, body and labels and the commit's message: the default text, or what
        the environment's ``messages`` templates render from it (promotion/messages.py)."""
        title = pr_title(env.name, main.commit, self.cp.git.subject(main.commit), step.label)
        default = default_texts(title, self._body(main, env, step, planned, superseded))
        if not env.messages:
            return default
        main_facts = commit_facts(self.cp.git, main.commit)
        facts = Facts(main_facts, step.label, step.name, planned.plan.changes, step.gates, self.opts.run_url)
        return texts(env, facts, default)

    def _body(
        self, main: MainObjects, env: Environment, step: Step, planned: Planned, superseded: str | None
    ) -> str:
        state_of = self.statuses.state_of
        previous = upstream_states(
            main.pipeline, env.name, lambda u: state_of(main.commit, self.statuses.context_of(u))
        )
        waves = None
        if not step.whole:
            coming = [(s.name, s.cluster_types, "this PR" if s is step else "waiting") for s in self._steps]
            waves = wave_rows(self._done, coming[len(self._done) :])
        removed = planned.removals.body() if planned.removals else ""
        return removed + pr_body(
            environment=env.name,
            main_commit=main.commit,
            main_subject=self.cp.git.subject(main.commit),
            env_branch=env.branch,
            env_commit=planned.objects.commit,
            previous=previous,
            changes=planned.plan.changes,
            run_url=self.opts.run_url,
            superseded=superseded,
            waves=waves,
            held=self._held.describe() if self._held else None,
            change_control=self.change.pr_note(env, step) if self.change else None,
        )

    def _gates(
        self,
        main: MainObjects,
        env: Environment,
        step: Step,
        merge_sha: str,
        result: EnvResult,
        *,
        named: str | None = None,
    ) -> EnvResult:
        if self.opts.waits:
            deadline = self._start + step.timeout
            pr = self._prs.get(env.name)
            outcomes = self.gating.check(main, env, step, merge_sha, deadline, pr, commit=named)
        else:
            outcomes = self._gates_once(main, env, step, merge_sha, named)
        summary = "; ".join(f"{o.gate}: {o.state}" for o in outcomes) or "no gates"
        return replace(result, state="success", message=summary, gates=outcomes)


def _managed(step: Step, rendered: Rendered, previous: Provenance | None) -> tuple[str, ...]:
    """The folders a wave replaces: its own; the last wave also removes the folders of cluster
    types that no longer exist."""
    gone = set(previous.cluster_types) - set(rendered.cluster_types) if previous and step.last else set()
    return tuple(sorted(set(step.cluster_types) | gone))


def _file_count(planned: Planned, step: Step) -> int:
    return _rendered_count(planned.rendered, step)


def _rendered_count(rendered: Rendered, step: Step) -> int:
    files = rendered.files
    return len(files) if step.whole else len(FolderSubset(files, step.cluster_types))
