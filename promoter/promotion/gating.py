"""The gates of an environment on a merged platform commit: run until they pass, fail or time
out, reported on the promotion PR; a failure rolls the environment back where it asks to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from promoter.clock import Clock
from promoter.console import Console
from promoter.errors import GateFailed
from promoter.forges.base import Forge, PullRequest
from promoter.gates import GateContext, build_gate
from promoter.gates.base import Gate
from promoter.gates.hubapi import promotion_fields, record_merge
from promoter.gates.runner import GateOutcome, GatesPending, run_gates
from promoter.model import Environment, MainObjects
from promoter.platform.repo import PlatformRepo
from promoter.promotion.options import Options
from promoter.promotion.report import gate_report
from promoter.promotion.rollback import Rollbacks
from promoter.promotion.waves import Step


class Gating:
    def __init__(
        self,
        platform: PlatformRepo,
        forge: Forge,
        clock: Clock,
        console: Console,
        options: Options,
        rollbacks: Rollbacks,
    ) -> None:
        self.platform = platform
        self.forge = forge
        self.clock = clock
        self.out = console
        self.opts = options
        self.rollbacks = rollbacks

    def check(
        self,
        main: MainObjects,
        env: Environment,
        step: Step,
        merge_sha: str,
        deadline: float,
        pr: PullRequest | None,
        *,
        once: bool = False,
        others_passed_at: float | None = None,
        commit: str | None = None,
    ) -> list[GateOutcome]:
        """Every gate's outcome once all passed; GateFailed (rolled back where asked) if not.
        A wave's gates judge its cluster types only, and a failed wave rolls back its folders.
        ``once``: each gate checked once, GatesPending when not all passed; ``others_passed_at``:
        when the other gates passed in an earlier run (a soak counts from then); ``commit``: the
        main commit the gates are told (``PROMOTER_COMMIT``, the hub's record of M) when it is
        not ``main``: the earlier one whose render, equal to this one's, ``merge_sha`` holds."""
        self._record(
            main, env, merge_sha, commit or main.commit, promotion_fields(pr, env.on_failure, step.timeout)
        )
        gates = [build_gate(spec) for spec in step.gates]
        if not gates:
            return []
        prefix = step.prefix(env.name)
        self.out.say(f"{prefix}: gates on {merge_sha[:12]}: {', '.join(g.describe() for g in gates)}")
        ctx = self._context(env, step, commit or main.commit, merge_sha, others_passed_at)
        outcomes = self._run(main, env, step, ctx, gates, deadline, pr, once)
        for outcome in outcomes:
            self.out.say(f"{prefix}: gate {outcome}")
        self._report(pr, env, step, merge_sha, outcomes, "all gates passed")
        return outcomes

    def _record(
        self, main: MainObjects, env: Environment, merge_sha: str, commit: str, promotion: dict[str, Any]
    ) -> None:
        """The landed commit, at the hub named by PROMOTER_HUB_URL (docs/hub.md): what every
        cluster should now run. A hub that does not answer is a warning, never a failure."""
        pipeline = main.pipeline
        order = tuple(e.name for e in pipeline.environments)
        follows = {name: pipeline.upstreams(name) for name in order}
        problem = record_merge(
            self.platform,
            merge_sha,
            env.gitops_path,
            env.name,
            env.gitops_branch,
            commit,
            order,
            follows,
            promotion,
        )
        if problem:
            self.out.say(f"{env.name}: warning: {problem}")

    def _context(
        self, env: Environment, step: Step, commit: str, merge_sha: str, others_passed_at: float | None
    ) -> GateContext:
        return GateContext(
            env.name,
            commit,
            merge_sha,
            self.platform.url,
            env.gitops_branch,
            self.clock,
            env.gitops_path,
            self.forge,
            platform=self.platform,
            cluster_types=() if step.whole else step.cluster_types,
            flux=step.flux,
            others_passed_at=others_passed_at,
        )

    def _run(
        self,
        main: MainObjects,
        env: Environment,
        step: Step,
        ctx: GateContext,
        gates: list[Gate],
        deadline: float,
        pr: PullRequest | None,
        once: bool = False,
    ) -> list[GateOutcome]:
        merge_sha = ctx.platform_sha
        try:
            return run_gates(
                gates, ctx, deadline, self._say(env, step), self.opts.progress_interval, once=once
            )
        except GatesPending as pending:
            pending.others_passed_at = ctx.others_passed_at
            raise
        except GateFailed as err:
            self._report(pr, env, step, merge_sha, err.outcomes, str(err))
            if env.on_failure == "rollback":
                folders = None if step.whole else step.cluster_types
                restored = self.rollbacks.after_failure(main, env, merge_sha, folders)
                raise type(err)(f"{err}; {restored}", err.outcomes) from err
            raise

    def _say(self, env: Environment, step: Step) -> Callable[[str], None]:
        """Progress lines; a wave's name it: ``prod: wave canary (1/2): waiting ...``."""
        if step.whole:
            return self.out.progress
        prefix = f"{env.name}: "

        def say(line: str) -> None:
            self.out.progress(
                line.replace(prefix, f"{step.prefix(env.name)}: ", 1) if line.startswith(prefix) else line
            )

        return say

    def _report(
        self,
        pr: PullRequest | None,
        env: Environment,
        step: Step,
        merge_sha: str,
        outcomes: list[Any],
        verdict: str,
    ) -> None:
        if pr is not None:
            where = f"{env.name}, {step.label}" if step.name else env.name
            self.forge.comment(pr, gate_report(where, merge_sha, outcomes, verdict))
