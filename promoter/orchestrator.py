"""The promotion flow and the scheduling flow (DESIGN section 6).

The orchestrator is handed its collaborators (control plane, platform repo, forge, clock,
console) and keeps all state in them, so any run can be killed and rerun: statuses on the
main commit say how far it got, the platform branch's provenance says what is deployed, and
the promotion branch says what is waiting to be merged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from promoter.clock import Clock, format_duration
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import (
    GateFailed,
    GitError,
    MergeRefused,
    PromotionFailed,
    Superseded,
    UsageError,
)
from promoter.forges.base import Forge, MergeNotReady, PullRequest
from promoter.gates import GateContext, build_gate
from promoter.gates.runner import GateOutcome, run_gates
from promoter.model import Environment, EnvironmentObjects, MainObjects, Status, promotion_branch
from promoter.platform.plan import TreePlan
from promoter.platform.provenance import Provenance
from promoter.platform.repo import PlatformRepo
from promoter.rendering.tree import Rendered, render_environment
from promoter.report import EnvResult, Report, change_summary, gate_report, pr_body, pr_title
from promoter.rollback import GoodState, Rollbacks, deployed_main


@dataclass
class Options:
    dry_run: bool = False
    force: bool = False
    poll_interval: float = 5.0
    progress_interval: float = 10.0
    run_url: str | None = field(default_factory=lambda: _run_url())


def _run_url() -> str | None:
    server, repo, run = (
        os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else None


class Orchestrator:
    def __init__(
        self,
        control_plane: ControlPlane,
        platform: PlatformRepo,
        forge: Forge,
        clock: Clock,
        console: Console,
        options: Options | None = None,
    ) -> None:
        self.cp = control_plane
        self.platform = platform
        self.forge = forge
        self.clock = clock
        self.out = console
        self.opts = options or Options()
        self._passed: set[str] = set()
        self._status_cache: dict[str, dict[str, Status]] = {}
        self._prs: dict[str, PullRequest] = {}
        self._prepared: dict[tuple[str, str], tuple[EnvironmentObjects, Rendered]] = {}

    # ------------------------------------------------------------ flows

    def promote(self, commit: str, to: str | None = None) -> Report:
        """The promotion flow: take main commit ``commit`` through the environments in order."""
        main = self.cp.main(commit)
        envs = list(main.pipeline.environments)
        if to is not None:
            envs = envs[: self._index(main, to) + 1]
            if self.opts.force:
                envs = envs[-1:]  # by hand: straight to the chosen environment
        report = Report("promotion", commit)
        subject = self._subject(commit)
        self.out.say(f'promoting main {commit[:12]} "{subject}" to {", ".join(e.name for e in envs)}')
        for env in envs:  # all input is checked before anything is pushed
            self._prepare(main, env)
        for env in envs:
            result = self._promote_one(main, env, scheduling=False)
            report.results.append(result)
            if result.ok:
                self._passed.add(env.name)
            if result.state == "dry-run":
                self.out.say(f"dry run: the environments after {env.name} wait for it to succeed")
                break
            if not result.ok:
                break
        return report

    def schedule(self, environment: str, commit: str | None = None) -> Report:
        """The scheduling flow: re-render one environment with the main commit last promoted there."""
        chosen = commit is not None
        head = self.cp.resolve(None)
        env = self.cp.main(head).pipeline.environment(environment)
        if commit is None:
            if env is None:
                raise UsageError(f"--env {environment}: the Pipeline on main has no such environment")
            base = self.platform.fetch([env.gitops_branch])[env.gitops_branch]
            found = deployed_main(self.platform, env, base) if base else None
            if found is None:
                raise PromotionFailed(
                    f"{environment}: nothing has been promoted there yet; run the promotion flow first"
                )
            commit = self.cp.resolve(found)
        main = self.cp.main(commit)
        env = main.pipeline.environment(environment)
        if env is None:
            raise UsageError(f"--env {environment}: the Pipeline at {commit[:12]} has no such environment")
        self.out.say(
            f"scheduling {environment} with main {commit[:12]}" + ("" if chosen else " (last promoted there)")
        )
        return Report("scheduling", commit, [self._promote_one(main, env, scheduling=True)])

    # ------------------------------------------------------------ one environment

    def _promote_one(self, main: MainObjects, env: Environment, *, scheduling: bool) -> EnvResult:
        start = self.clock.now()
        requests_before = self.forge.request_count()
        result = EnvResult(env.name, "failure")
        try:
            self._run_env(main, env, scheduling, result, start)
        except Superseded as err:
            result.state, result.message = "superseded", str(err)
            if not self.opts.dry_run:
                self.post_status(
                    main.commit, self.context_of(env), "error", f"superseded: {err}", self.opts.run_url
                )
            self.out.say(f"{env.name}: superseded: {err}")
        except PromotionFailed as err:
            result.state = "held" if result.state == "held" else "failure"
            result.message = str(err)
            if isinstance(err, GateFailed):
                result.gates = list(err.outcomes)  # type: ignore[arg-type]
            if not self.opts.dry_run and result.state != "held":
                self.post_status(main.commit, self.context_of(env), "failure", str(err), self.opts.run_url)
            self.out.say(f"{env.name}: FAILED: {err}")
        result.duration = self.clock.now() - start
        result.requests = self.forge.request_count() - requests_before
        return result

    def _run_env(
        self, main: MainObjects, env: Environment, scheduling: bool, result: EnvResult, start: float
    ) -> None:
        x = main.commit
        context = self.context_of(env)
        current = self._statuses(x).get(context)
        if not scheduling:
            if current and current.state == "success" and not self.opts.force:
                result.state, result.message = "skipped", "already promoted"
                self.out.say(f"{env.name}: already promoted ({current.description})")
                return
            if current and current.state in ("failure", "error") and not self.opts.force:
                result.state = "held"
                raise PromotionFailed(
                    f"{env.name}: {x[:12]} failed here before ({current.description}); held, use --force to retry"
                )
            self._guard(main, env)
        for _ in range(MAX_REPLANS):
            try:
                self._attempt(main, env, scheduling, result, start, current)
                return
            except _BaseMoved as moved:
                self.out.say(
                    f"{env.name}: {env.gitops_branch} moved to {moved.sha[:12]}; rendering onto it again"
                )
        raise PromotionFailed(
            f"{env.name}: {env.gitops_branch} kept moving under the promotion; try again later"
        )

    def _attempt(
        self,
        main: MainObjects,
        env: Environment,
        scheduling: bool,
        result: EnvResult,
        start: float,
        current: Status | None,
    ) -> None:
        """Plan onto the platform branch as it is now, push, merge, gate. _BaseMoved: plan again."""
        x, context = main.commit, self.context_of(env)
        env_objects, rendered = self._prepare(main, env)
        head_branch = promotion_branch(env.name)
        heads = self.platform.fetch([env.gitops_branch, head_branch])
        base, existing = heads[env.gitops_branch], heads[head_branch]
        deployed = deployed_main(self.platform, env, base) if base else None
        if deployed and deployed != x and self.cp.git.is_ancestor(x, deployed):
            raise Superseded(
                f"{env.gitops_branch} already has the newer main commit {deployed[:12]}; not going back"
            )
        provenance = Provenance(
            pipeline=main.pipeline.name,
            environment=env.name,
            main_commit=x,
            env_branch=env.branch,
            env_commit=env_objects.commit,
            cluster_types=rendered.cluster_types,
            files=len(rendered.files),
        )
        plan = self.platform.plan(base, env.gitops_path, rendered.files, rendered.cluster_types, provenance)
        result.files, result.changes = len(rendered.files), plan.changes
        self.out.say(
            f"{env.name}: rendered {len(rendered.files)} files for {len(rendered.assignments)} assignments "
            f"on {len(rendered.cluster_types)} cluster types ({change_summary(plan.changes)}) "
            f"from main {x[:7]}, {env.branch}@{env_objects.commit[:7]}"
        )

        if not plan.changed and base is not None:
            there_commit = deployed
            proven = (
                isinstance(there_commit, str)
                and there_commit != x
                and self.state_of(there_commit, context) == "success"
            )
            if proven or (scheduling and there_commit == x and current and current.state == "success"):
                result.state, result.merge_sha = "noop", base
                result.message = "no changes to the platform branch"
                if not self.opts.dry_run:
                    self.post_status(
                        x,
                        context,
                        "success",
                        f"no changes ({env.gitops_branch} already has this content)",
                        self.opts.run_url,
                    )
                self.out.say(f"{env.name}: no changes; {env.gitops_branch} is already at this content")
                return
            if self.opts.dry_run:
                result.state, result.merge_sha = "dry-run", base
                result.message = f"would check the gates of {base[:12]}, which already has this content"
                self.out.say(f"{env.name}: dry run: {result.message}")
                return
            # Our content is already merged (a rerun after a merge): check its health.
            self.out.say(
                f"{env.name}: {env.gitops_branch} already has this content at {base[:12]}; checking gates"
            )
            result.merge_sha = base
            pr = self.forge.find_pr(env, head_branch)
            if pr is not None and pr.state == "merged":  # report the gates where the merge was
                self._prs[env.name] = pr
                result.pr_url = pr.url
            self._gates(main, env, base, result, start)
            return

        if self.opts.dry_run:
            result.state = "dry-run"
            result.message = f"would push {head_branch} and merge into {env.gitops_branch} ({env.merge})"
            self.out.say(f"{env.name}: dry run: {result.message}")
            return

        promo_sha, superseded = self._promotion_commit(main, env, env_objects.commit, base, existing, plan)
        result.promotion_sha = promo_sha
        if superseded:
            self.post_status(superseded, context, "error", f"superseded by {x[:12]}", self.opts.run_url)
            self.out.say(f"{env.name}: supersedes the pending promotion of {superseded[:12]}")
        merge_sha = self._merge(main, env, base, promo_sha, plan, superseded, result, start)
        result.merge_sha = merge_sha
        self._gates(main, env, merge_sha, result, start)

    def _prepare(self, main: MainObjects, env: Environment) -> tuple[EnvironmentObjects, Rendered]:
        """Load and render an environment once per run (bad input fails here: exit 2)."""
        key = (main.commit, env.name)
        if key not in self._prepared:
            objects = self.cp.environment(env)
            self._prepared[key] = (objects, render_environment(main, objects, env.name))
        return self._prepared[key]

    def _guard(self, main: MainObjects, env: Environment) -> None:
        i = main.pipeline.index(env.name)
        if i == 0 or self.opts.force:
            return
        previous = main.pipeline.environments[i - 1].name
        if previous in self._passed:  # a dry run posts nothing: trust this run's own results
            return
        if self.state_of(main.commit, self.context_of(main.pipeline.environments[i - 1])) != "success":
            raise PromotionFailed(
                f"{env.name}: guard: {main.commit[:12]} has not succeeded in {previous} yet (use --force to skip)"
            )

    def _promotion_commit(
        self,
        main: MainObjects,
        env: Environment,
        env_commit: str,
        base: str | None,
        existing: str | None,
        plan: TreePlan,
    ) -> tuple[str, str | None]:
        """Push the promotion branch (reusing it when a rerun finds it already right)."""
        x = main.commit
        superseded = None
        if existing:
            theirs = self.platform.provenance(existing, env.gitops_path)
            parents = self.platform.git.out("rev-list", "--parents", "-n", "1", operands=[existing]).split()[
                1:
            ]
            if (
                theirs is not None
                and theirs.main_commit == x
                and theirs.env_commit == env_commit
                and parents[:1] == ([base] if base else [])
            ):
                self.out.say(
                    f"{env.name}: {promotion_branch(env.name)} is already at this promotion ({existing[:12]})"
                )
                return existing, None
            old = theirs.main_commit if theirs else None
            if old is not None and old != x and self.state_of(old, self.context_of(env)) == "pending":
                superseded = old
        title = pr_title(env.name, x, self._subject(x))
        message = f"{title}\n\n{self._body(main, env, env_commit, plan, superseded)}"
        sha = self.platform.commit(plan, env.gitops_path, [base] if base else [], message)
        try:
            self.platform.push({promotion_branch(env.name): (existing, sha)})
        except GitError:  # another promotion pushed the branch first: look again
            now = self.platform.fetch([promotion_branch(env.name)])[promotion_branch(env.name)]
            if now == existing:
                raise
            raise _BaseMoved(now or "nothing") from None
        self.out.say(f"{env.name}: pushed {promotion_branch(env.name)} at {sha[:12]}")
        return sha, superseded

    def _body(
        self, main: MainObjects, env: Environment, env_commit: str, plan: object, superseded: str | None
    ) -> str:
        i = main.pipeline.index(env.name)
        previous = None
        if i > 0:
            prev = main.pipeline.environments[i - 1]
            previous = f"{prev.name}: {self.state_of(main.commit, self.context_of(prev)) or 'not promoted'}"
        return pr_body(
            environment=env.name,
            main_commit=main.commit,
            main_subject=self._subject(main.commit),
            env_branch=env.branch,
            env_commit=env_commit,
            previous=previous,
            changes=plan.changes,  # type: ignore[attr-defined]
            run_url=self.opts.run_url,
            superseded=superseded,
        )

    def _merge(
        self,
        main: MainObjects,
        env: Environment,
        base: str | None,
        promo_sha: str,
        plan: object,
        superseded: str | None,
        result: EnvResult,
        start: float,
    ) -> str:
        x, context = main.commit, self.context_of(env)
        deadline = start + env.timeout
        if env.merge == "direct":
            self._push_onto(env, base, promo_sha)
            self.post_status(
                x, context, "pending", f"pushed to {env.gitops_branch}; waiting for gates", self.opts.run_url
            )
            self.out.say(
                f"{env.name}: pushed {promo_sha[:12]} straight to {env.gitops_branch} (merge: direct)"
            )
            return promo_sha
        title = pr_title(env.name, x, self._subject(x))
        env_commit = self._prepare(main, env)[0].commit
        pr = self.forge.open_pr(
            env,
            promotion_branch(env.name),
            promo_sha,
            title,
            self._body(main, env, env_commit, plan, superseded),
        )
        result.pr_url = pr.url
        self._prs[env.name] = pr
        self.post_status(x, context, "pending", f"PR open: {pr.url}", pr.url)
        self.out.say(f"{env.name}: PR {pr.url} ({env.merge} merge)")
        if env.merge == "manual":
            self.out.say(f"{env.name}: waiting for someone to merge {pr.head_branch} into {pr.base_branch}")
        merge_sha = self.wait_merge(env, pr, promo_sha, deadline, title, base)
        self.post_status(x, context, "pending", f"merged {merge_sha[:12]}; waiting for gates", pr.url)
        self.out.say(f"{env.name}: merged {merge_sha[:12]} into {env.gitops_branch}")
        return merge_sha

    def _push_onto(self, env: Environment, base: str | None, sha: str) -> None:
        """Push straight to the platform branch if it is still at ``base``; _BaseMoved if not."""
        try:
            self.platform.push({env.gitops_branch: (base, sha)})
        except GitError:
            now = self.platform.fetch([env.gitops_branch])[env.gitops_branch]
            if now != base:
                raise _BaseMoved(now or "nothing") from None
            raise

    def wait_merge(
        self,
        env: Environment,
        pr: PullRequest,
        promo_sha: str,
        deadline: float,
        title: str,
        base: str | None = None,
    ) -> str:
        """Until ``pr`` is merged: merge it (auto) or wait for a human (manual). With ``base``,
        an auto merge happens only onto that base: merging a render onto content it was not
        planned on would mix two promotions."""
        started = self.clock.now()
        next_progress = started + self.opts.progress_interval
        last = "waiting"
        while True:
            now_pr = self.forge.refresh_pr(pr)
            if now_pr.state == "merged" and now_pr.merge_sha:
                return now_pr.merge_sha
            if now_pr.head_sha != promo_sha:
                raise Superseded(
                    f"{pr.head_branch} moved to {now_pr.head_sha[:12]}; another promotion took over"
                )
            if now_pr.state == "closed":
                raise MergeRefused(f"{env.name}: the promotion PR {pr.url} was closed without merging")
            if env.merge == "auto":
                if base is not None:
                    moved = self.platform.fetch([env.gitops_branch])[env.gitops_branch]
                    if moved != base:
                        raise _BaseMoved(moved or "nothing")
                try:
                    return self.forge.merge_pr(now_pr, promo_sha, f"Merge {title}")
                except MergeNotReady as err:
                    last = str(err)
                except GitError:
                    moved = self.platform.fetch([env.gitops_branch])[env.gitops_branch]
                    if base is None or moved == base:
                        raise
                    raise _BaseMoved(moved or "nothing") from None
            now = self.clock.now()
            if now >= deadline:
                raise MergeRefused(
                    f"{env.name}: {pr.url} was not merged within {format_duration(now - started)} ({last})"
                )
            if now >= next_progress:
                self.out.say(
                    f"{env.name}: waiting {format_duration(now - started)}, merge ({env.merge}): {last}"
                )
                next_progress = now + self.opts.progress_interval
            self.clock.sleep(min(self.opts.poll_interval, max(deadline - now, 0.05)))

    def _gates(
        self, main: MainObjects, env: Environment, merge_sha: str, result: EnvResult, start: float
    ) -> None:
        x, context = main.commit, self.context_of(env)
        gates = [build_gate(spec) for spec in env.gates]
        ctx = GateContext(
            env.name,
            x,
            merge_sha,
            self.platform.url,
            env.gitops_branch,
            self.clock,
            env.gitops_path,
            self.forge,
            platform=self.platform,
        )
        outcomes: list[GateOutcome] = []
        if gates:
            self.out.say(f"{env.name}: gates on {merge_sha[:12]}: {', '.join(g.describe() for g in gates)}")
            try:
                outcomes = run_gates(
                    gates, ctx, start + env.timeout, self.out.say, self.opts.progress_interval
                )
            except GateFailed as err:
                self._report_gates(env, merge_sha, err.outcomes, str(err))
                if env.on_failure == "rollback":
                    raise type(err)(f"{err}; {self._roll_back(main, env, merge_sha)}", err.outcomes) from err
                raise
            for outcome in outcomes:
                self.out.say(f"{env.name}: gate {outcome}")
            self._report_gates(env, merge_sha, outcomes, "all gates passed")
        result.gates = outcomes
        summary = "; ".join(f"{o.gate}: {o.state}" for o in outcomes) or "no gates"
        self.post_status(x, context, "success", f"healthy at {merge_sha[:12]} ({summary})", self.opts.run_url)
        result.state, result.message = "success", summary
        self.out.say(f"{env.name}: success in {format_duration(self.clock.now() - start)}")

    def _report_gates(self, env: Environment, merge_sha: str, outcomes: list[Any], verdict: str) -> None:
        pr = self._prs.get(env.name)
        if pr is not None:
            self.forge.comment(pr, gate_report(env.name, merge_sha, outcomes, verdict))

    # ------------------------------------------------------------ rollback

    def _roll_back(self, main: MainObjects, env: Environment, failed_sha: str) -> str:
        return Rollbacks(self).after_failure(main, env, failed_sha)

    def rollback(self, environment: str, to: str | None = None) -> GoodState:
        """``promoter rollback``: restore an environment to a known-good state by hand and hold
        the main commit that was there."""
        return Rollbacks(self).by_hand(environment, to)

    # ------------------------------------------------------------ helpers

    def _statuses(self, commit: str) -> dict[str, Status]:
        """Statuses of a main commit, read once per run and kept in step with what we post."""
        if commit not in self._status_cache:
            self._status_cache[commit] = dict(self.forge.get_statuses(commit))
        return self._status_cache[commit]

    def post_status(self, commit: str, context: str, state: str, description: str, url: str | None) -> None:
        self.forge.set_status(commit, context, state, description, url)
        self._statuses(commit)[context] = Status(context, state, description[:140], url)

    def context_of(self, env: Environment) -> str:
        return self.forge.status_context(env.name)

    def state_of(self, commit: str, context: str) -> str | None:
        status = self._statuses(commit).get(context)
        return status.state if status else None

    def _index(self, main: MainObjects, name: str) -> int:
        if main.pipeline.environment(name) is None:
            names = ", ".join(e.name for e in main.pipeline.environments)
            raise UsageError(f"--to {name}: no such environment (the Pipeline has {names})")
        return main.pipeline.index(name)

    def _subject(self, commit: str) -> str:
        return self.cp.git.out("log", "-1", "--format=%s", operands=[commit])


MAX_REPLANS = 5


class _BaseMoved(Exception):
    """The platform branch moved under a promotion; plan again onto its new head."""

    def __init__(self, sha: str) -> None:
        super().__init__(sha)
        self.sha = sha
