"""The gates of an environment on a merged platform commit: run until they pass, fail or time
out, reported on the promotion PR; a failure rolls the environment back where it asks to."""

from __future__ import annotations

from typing import Any

from promoter.clock import Clock
from promoter.console import Console
from promoter.errors import GateFailed
from promoter.forges.base import Forge, PullRequest
from promoter.gates import GateContext, build_gate
from promoter.gates.base import Gate
from promoter.gates.runner import GateOutcome, run_gates
from promoter.model import Environment, MainObjects
from promoter.platform.repo import PlatformRepo
from promoter.promotion.options import Options
from promoter.promotion.report import gate_report
from promoter.promotion.rollback import Rollbacks


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
        self, main: MainObjects, env: Environment, merge_sha: str, deadline: float, pr: PullRequest | None
    ) -> list[GateOutcome]:
        """Every gate's outcome once all passed; GateFailed (rolled back where asked) if not."""
        gates = [build_gate(spec) for spec in env.gates]
        if not gates:
            return []
        self.out.say(f"{env.name}: gates on {merge_sha[:12]}: {', '.join(g.describe() for g in gates)}")
        outcomes = self._run(main, env, merge_sha, gates, deadline, pr)
        for outcome in outcomes:
            self.out.say(f"{env.name}: gate {outcome}")
        self._report(pr, env, merge_sha, outcomes, "all gates passed")
        return outcomes

    def _run(
        self,
        main: MainObjects,
        env: Environment,
        merge_sha: str,
        gates: list[Gate],
        deadline: float,
        pr: PullRequest | None,
    ) -> list[GateOutcome]:
        ctx = GateContext(
            env.name,
            main.commit,
            merge_sha,
            self.platform.url,
            env.gitops_branch,
            self.clock,
            env.gitops_path,
            self.forge,
            platform=self.platform,
        )
        try:
            return run_gates(gates, ctx, deadline, self.out.progress, self.opts.progress_interval)
        except GateFailed as err:
            self._report(pr, env, merge_sha, err.outcomes, str(err))
            if env.on_failure == "rollback":
                restored = self.rollbacks.after_failure(main, env, merge_sha)
                raise type(err)(f"{err}; {restored}", err.outcomes) from err
            raise

    def _report(
        self, pr: PullRequest | None, env: Environment, merge_sha: str, outcomes: list[Any], verdict: str
    ) -> None:
        if pr is not None:
            self.forge.comment(pr, gate_report(env.name, merge_sha, outcomes, verdict))
