"""One environment of a promotion: plan -> push -> land -> gates (DESIGN section 6).

State lives in the repos, so a run killed anywhere continues here: the ``promoter/<env>``
status on the main commit says how far it got, the platform branch's provenance says what is
deployed, and the promotion branch says what waits to be merged. The platform branch moving
under a promotion means planning again onto its new head.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from promoter.clock import Clock, format_duration
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import GateFailed, PromotionFailed, Superseded
from promoter.forges.base import Forge, PullRequest
from promoter.gates.runner import GateOutcome
from promoter.model import Environment, EnvironmentObjects, MainObjects, Status, promotion_branch
from promoter.platform.plan import TreePlan
from promoter.platform.provenance import Provenance
from promoter.platform.repo import PlatformRepo
from promoter.promotion.gating import Gating
from promoter.promotion.landing import BaseMoved, Landing
from promoter.promotion.options import Options
from promoter.promotion.report import EnvResult, change_summary, pr_body, pr_title
from promoter.promotion.rollback import Rollbacks, deployed_main
from promoter.promotion.statuses import Statuses
from promoter.rendering.tree import Rendered, render_environment

MAX_REPLANS = 5
Step = Callable[[], "EnvResult"]


@dataclass(frozen=True)
class Planned:
    """What one attempt found and rendered: the branches as they are now, and the new tree."""

    objects: EnvironmentObjects
    rendered: Rendered
    base: str | None
    existing: str | None  # the promotion branch
    deployed: str | None  # the main commit the platform branch holds
    plan: TreePlan


class EnvironmentRun:
    """The collaborators of one run, and the promotion of one main commit to one environment."""

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
        self.statuses = Statuses(forge)
        self.landing = Landing(platform, forge, clock, console, options.pacing)
        self.rollbacks = Rollbacks(
            control_plane, platform, self.statuses, self.landing, console, clock, options
        )
        self.gating = Gating(platform, forge, clock, console, options, self.rollbacks)
        self.passed: set[str] = set()  # environments this run saw succeed (a dry run posts nothing)
        self._start = 0.0  # when the environment under way started: its deadline counts from here
        self._partial = EnvResult("", "failure")  # what it has done so far, for a failure's report
        self._prs: dict[str, PullRequest] = {}
        self._prepared: dict[tuple[str, str], tuple[EnvironmentObjects, Rendered]] = {}

    def promote(self, main: MainObjects, env: Environment) -> EnvResult:
        """Take ``main`` to ``env`` unless it is there already, failed there, or the environment
        before has not passed it."""
        return self._timed(main, env, lambda: self._promote(main, env, self._current(main, env)))

    def schedule(self, main: MainObjects, env: Environment) -> EnvResult:
        """Render ``env`` again with ``main`` (the commit it runs): new environment values."""
        return self._timed(
            main, env, lambda: self._attempts(main, env, self._current(main, env), trust_current=True)
        )

    def _current(self, main: MainObjects, env: Environment) -> Status | None:
        """The environment's status on the main commit, as this run starts it (counted in its
        requests)."""
        return self.statuses.of(main.commit).get(self.statuses.context_of(env))

    def prepare(self, main: MainObjects, env: Environment) -> tuple[EnvironmentObjects, Rendered]:
        """Load and render an environment once per run (bad input fails here: exit 2)."""
        key = (main.commit, env.name)
        if key not in self._prepared:
            objects = self.cp.environment(env)
            self._prepared[key] = (objects, render_environment(main, objects, env.name))
        return self._prepared[key]

    def _timed(self, main: MainObjects, env: Environment, run: Step) -> EnvResult:
        start, requests = self.clock.now(), self.forge.request_count()
        self._start, self._partial = start, EnvResult(env.name, "failure")
        result = self._outcome(main, env, run)
        result.duration = self.clock.now() - start
        result.requests = self.forge.request_count() - requests
        return result

    def _outcome(self, main: MainObjects, env: Environment, run: Step) -> EnvResult:
        context = self.statuses.context_of(env)
        try:
            return run()
        except Superseded as err:
            if not self.opts.dry_run:
                self.statuses.post(main.commit, context, "error", f"superseded: {err}", self.opts.run_url)
            self.out.say(f"{env.name}: superseded: {err}")
            return replace(self._partial, state="superseded", message=str(err))
        except _Held as err:
            self.out.say(f"{env.name}: FAILED: {str(err).removeprefix(env.name + ': ')}")
            return replace(self._partial, state="held", message=str(err))
        except PromotionFailed as err:
            if not self.opts.dry_run:
                self.statuses.post(main.commit, context, "failure", str(err), self.opts.run_url)
            self.out.say(f"{env.name}: FAILED: {str(err).removeprefix(env.name + ': ')}")
            gates = self._partial.gates
            if isinstance(err, GateFailed):
                gates = [o for o in err.outcomes if isinstance(o, GateOutcome)]
            return replace(self._partial, state="failure", message=str(err), gates=gates)

    def _promote(self, main: MainObjects, env: Environment, current: Status | None) -> EnvResult:
        if current and current.state == "success" and not self.opts.force:
            self.out.say(f"{env.name}: already promoted ({current.description})")
            return EnvResult(env.name, "skipped", "already promoted")
        if current and current.state in ("failure", "error") and not self.opts.force:
            raise _Held(
                f"{env.name}: {main.commit[:12]} failed here before ({current.description}); held, use --force to retry"
            )
        self._guard(main, env)
        return self._attempts(main, env, current, trust_current=False)

    def _attempts(
        self, main: MainObjects, env: Environment, current: Status | None, *, trust_current: bool
    ) -> EnvResult:
        """Attempts until one is not overtaken by a push to the platform branch. With
        ``trust_current`` (the scheduling flow), an unchanged tree of the main commit that
        already succeeded here is success at once."""
        for _ in range(MAX_REPLANS):
            try:
                return self._attempt(main, env, current, trust_current)
            except BaseMoved as moved:
                self.out.say(
                    f"{env.name}: {env.gitops_branch} moved to {moved.sha[:12]}; rendering onto it again"
                )
        raise PromotionFailed(
            f"{env.name}: {env.gitops_branch} kept moving under the promotion; try again later"
        )

    def _guard(self, main: MainObjects, env: Environment) -> None:
        i = main.pipeline.index(env.name)
        if i == 0 or self.opts.force:
            return
        previous = main.pipeline.environments[i - 1]
        if previous.name in self.passed:  # a dry run posts nothing: trust this run's own results
            return
        if not self.statuses.succeeded(main.commit, previous):
            raise PromotionFailed(
                f"{env.name}: guard: {main.commit[:12]} has not succeeded in {previous.name} yet (use --force to skip)"
            )

    def _attempt(
        self, main: MainObjects, env: Environment, current: Status | None, trust_current: bool
    ) -> EnvResult:
        """Plan onto the platform branch as it is now, push, land, gate. BaseMoved: plan again."""
        planned = self._plan(main, env)
        result = self._progress(
            EnvResult(env.name, "failure", files=len(planned.rendered.files), changes=planned.plan.changes)
        )
        if not planned.plan.changed and planned.base is not None:
            return self._unchanged(main, env, planned, result, current, trust_current)
        if self.opts.dry_run:
            self.out.say(
                f"{env.name}: dry run: would push {promotion_branch(env.name)} and merge into {env.gitops_branch} ({env.merge})"
            )
            return replace(
                result,
                state="dry-run",
                message=f"would push {promotion_branch(env.name)} and merge into {env.gitops_branch} ({env.merge})",
            )
        promotion_sha, superseded = self._promotion_commit(main, env, planned)
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
        merge_sha, pr_url = self._land(main, env, planned, promotion_sha, superseded)
        landed = self._progress(replace(result, merge_sha=merge_sha, pr_url=pr_url))
        return self._gates(main, env, merge_sha, landed)

    def _progress(self, result: EnvResult) -> EnvResult:
        """Remember how far this environment got: a failure later reports it (PR, merge commit)."""
        self._partial = result
        return result

    def _plan(self, main: MainObjects, env: Environment) -> Planned:
        objects, rendered = self.prepare(main, env)
        heads = self.platform.fetch([env.gitops_branch, promotion_branch(env.name)])
        base, existing = heads[env.gitops_branch], heads[promotion_branch(env.name)]
        deployed = deployed_main(self.platform, env, base) if base else None
        if deployed and deployed != main.commit and self.cp.git.is_ancestor(main.commit, deployed):
            raise Superseded(
                f"{env.gitops_branch} already has the newer main commit {deployed[:12]}; not going back"
            )
        provenance = Provenance.of(main, env, objects, rendered)
        plan = self.platform.plan(base, env.gitops_path, rendered.files, rendered.cluster_types, provenance)
        self.out.say(
            f"{env.name}: rendered {len(rendered.files)} files for {len(rendered.assignments)} assignments "
            f"on {len(rendered.cluster_types)} cluster types ({change_summary(plan.changes)}) "
            f"from main {main.commit[:7]}, {env.branch}@{objects.commit[:7]}"
        )
        return Planned(objects, rendered, base, existing, deployed, plan)

    def _unchanged(
        self,
        main: MainObjects,
        env: Environment,
        planned: Planned,
        result: EnvResult,
        current: Status | None,
        trust_current: bool,
    ) -> EnvResult:
        """The platform branch already holds this tree: done, or (a rerun after a merge) gated."""
        base, there = planned.base, planned.deployed
        assert base is not None
        proven = there is not None and there != main.commit and self.statuses.succeeded(there, env)
        if proven or (trust_current and there == main.commit and current and current.state == "success"):
            if not self.opts.dry_run:
                self.statuses.post(
                    main.commit,
                    self.statuses.context_of(env),
                    "success",
                    f"no changes ({env.gitops_branch} already has this content)",
                    self.opts.run_url,
                )
            self.out.say(f"{env.name}: no changes; {env.gitops_branch} is already at this content")
            return replace(result, state="noop", merge_sha=base, message="no changes to the platform branch")
        if self.opts.dry_run:
            message = f"would check the gates of {base[:12]}, which already has this content"
            self.out.say(f"{env.name}: dry run: {message}")
            return replace(result, state="dry-run", merge_sha=base, message=message)
        self.out.say(
            f"{env.name}: {env.gitops_branch} already has this content at {base[:12]}; checking gates"
        )
        pr = self.forge.find_pr(env, promotion_branch(env.name))
        pr_url = None
        if pr is not None and pr.state == "merged":  # report the gates where the merge was
            self._prs[env.name] = pr
            pr_url = pr.url
        return self._gates(main, env, base, self._progress(replace(result, merge_sha=base, pr_url=pr_url)))

    def _promotion_commit(
        self, main: MainObjects, env: Environment, planned: Planned
    ) -> tuple[str, str | None]:
        """Push the promotion branch (reusing it when a rerun finds it already right); its sha
        and the main commit whose pending promotion it supersedes."""
        superseded = None
        existing, base = planned.existing, planned.base
        if existing:
            theirs = self.platform.provenance(existing, env.gitops_path)
            parents = self.platform.git.out("rev-list", "--parents", "-n", "1", operands=[existing]).split()[
                1:
            ]
            if (
                theirs is not None
                and theirs.main_commit == main.commit
                and theirs.env_commit == planned.objects.commit
                and parents[:1] == ([base] if base else [])
            ):
                self.out.say(
                    f"{env.name}: {promotion_branch(env.name)} is already at this promotion ({existing[:12]})"
                )
                return existing, None
            old = theirs.main_commit if theirs else None
            if (
                old is not None
                and old != main.commit
                and self.statuses.state_of(old, self.statuses.context_of(env)) == "pending"
            ):
                superseded = old
        title = pr_title(env.name, main.commit, self._subject(main.commit))
        message = f"{title}\n\n{self._body(main, env, planned, superseded)}"
        sha = self.platform.commit(planned.plan, env.gitops_path, [base] if base else [], message)
        self.landing.push_branch(promotion_branch(env.name), existing, sha)
        self.out.say(f"{env.name}: pushed {promotion_branch(env.name)} at {sha[:12]}")
        return sha, superseded

    def _land(
        self, main: MainObjects, env: Environment, planned: Planned, sha: str, superseded: str | None
    ) -> tuple[str, str | None]:
        """Merge by the environment's policy; the merge commit and the PR's URL."""
        context = self.statuses.context_of(env)
        title = pr_title(env.name, main.commit, self._subject(main.commit))

        def opened(pr: PullRequest) -> None:
            self._prs[env.name] = pr
            self._progress(replace(self._partial, pr_url=pr.url))
            self.statuses.post(main.commit, context, "pending", f"PR open: {pr.url}", pr.url)
            self.out.say(f"{env.name}: PR {pr.url} ({env.merge} merge)")
            if env.merge == "manual":
                self.out.say(
                    f"{env.name}: waiting for someone to merge {pr.head_branch} into {pr.base_branch}"
                )

        landed = self.landing.land(
            env,
            branch=promotion_branch(env.name),
            base=planned.base,
            sha=sha,
            title=title,
            body=self._body(main, env, planned, superseded),
            deadline=self._start + env.timeout,
            on_open=opened,
        )
        assert landed.merge_sha is not None  # it waited for the merge
        if landed.pr is None:
            self.statuses.post(
                main.commit,
                context,
                "pending",
                f"pushed to {env.gitops_branch}; waiting for gates",
                self.opts.run_url,
            )
            self.out.say(f"{env.name}: pushed {sha[:12]} straight to {env.gitops_branch} (merge: direct)")
            return landed.merge_sha, None
        self.statuses.post(
            main.commit,
            context,
            "pending",
            f"merged {landed.merge_sha[:12]}; waiting for gates",
            landed.pr.url,
        )
        self.out.say(f"{env.name}: merged {landed.merge_sha[:12]} into {env.gitops_branch}")
        return landed.merge_sha, landed.pr.url

    def _body(self, main: MainObjects, env: Environment, planned: Planned, superseded: str | None) -> str:
        i = main.pipeline.index(env.name)
        previous = None
        if i > 0:
            prev = main.pipeline.environments[i - 1]
            state = self.statuses.state_of(main.commit, self.statuses.context_of(prev))
            previous = f"{prev.name}: {state or 'not promoted'}"
        return pr_body(
            environment=env.name,
            main_commit=main.commit,
            main_subject=self._subject(main.commit),
            env_branch=env.branch,
            env_commit=planned.objects.commit,
            previous=previous,
            changes=planned.plan.changes,
            run_url=self.opts.run_url,
            superseded=superseded,
        )

    def _gates(self, main: MainObjects, env: Environment, merge_sha: str, result: EnvResult) -> EnvResult:
        deadline = self._start + env.timeout
        outcomes = self.gating.check(main, env, merge_sha, deadline, self._prs.get(env.name))
        summary = "; ".join(f"{o.gate}: {o.state}" for o in outcomes) or "no gates"
        self.statuses.post(
            main.commit,
            self.statuses.context_of(env),
            "success",
            f"healthy at {merge_sha[:12]} ({summary})",
            self.opts.run_url,
        )
        self.out.say(f"{env.name}: success in {format_duration(self.clock.now() - self._start)}")
        return replace(result, state="success", message=summary, gates=outcomes)

    def _subject(self, commit: str) -> str:
        return self.cp.git.out("log", "-1", "--format=%s", operands=[commit])


class _Held(PromotionFailed):
    """The main commit failed in this environment before: held until ``--force``."""
