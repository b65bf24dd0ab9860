"""The two flows (DESIGN section 6): the promotion flow takes a main commit through the
environments in order; the scheduling flow renders one environment again with the main commit
it runs. Both are handed their collaborators and keep all state in them."""

from __future__ import annotations

from collections.abc import Mapping

from promoter.clock import Clock
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import PromotionFailed, UsageError
from promoter.forges.base import Forge
from promoter.model import Environment, MainObjects
from promoter.platform.repo import PlatformRepo
from promoter.promotion.environment import EnvironmentRun
from promoter.promotion.options import Options
from promoter.promotion.report import EnvResult, Report
from promoter.promotion.rollback import GoodState, deployed_main


class Orchestrator:
    def __init__(
        self,
        control_plane: ControlPlane,
        platform: PlatformRepo,
        forge: Forge,
        clock: Clock,
        console: Console,
        options: Options | None = None,
        routes: Mapping[str, tuple[PlatformRepo, Forge]] | None = None,
    ) -> None:
        """``routes``: the environments with a platform repo of their own (``gitops.repo``), by
        name, with that repo and its forge; the others use ``platform`` and ``forge``."""
        self.cp = control_plane
        self.platform = platform
        self.forge = forge
        self.clock = clock
        self.out = console
        self.opts = options or Options()
        self.run = EnvironmentRun(control_plane, platform, forge, clock, console, self.opts)
        self._routes = dict(routes or {})
        self._runs: dict[int, EnvironmentRun] = {id(platform): self.run}
        for route_platform, route_forge in self._routes.values():
            if id(route_platform) not in self._runs:
                run = EnvironmentRun(control_plane, route_platform, route_forge, clock, console, self.opts)
                run.passed = self.run.passed  # one run: an environment passed is passed for all
                self._runs[id(route_platform)] = run

    def run_for(self, env: Environment | str) -> EnvironmentRun:
        """The run of the platform repo ``env`` renders to."""
        name = env if isinstance(env, str) else env.name
        return self._runs[id(self._routes[name][0])] if name in self._routes else self.run

    def _platform(self, env: Environment) -> PlatformRepo:
        return self.run_for(env).platform

    def promote(self, commit: str, to: str | None = None) -> Report:
        """The promotion flow: take main commit ``commit`` through the environments in order."""
        main = self.cp.main(commit)
        envs = list(main.pipeline.environments)
        if to is not None:
            envs = envs[: _index(main, to) + 1]
            if self.opts.force:
                envs = envs[-1:]  # by hand: straight to the chosen environment
        report = Report("promotion", commit)
        subject = self.cp.git.out("log", "-1", "--format=%s", operands=[commit])
        if self._nothing_waits(commit, envs):
            self.out.say(
                f"main {commit[:12]} has succeeded in {', '.join(e.name for e in envs)}; nothing waits"
            )
            report.results = [EnvResult(e.name, "skipped", "already promoted") for e in envs]
            return report
        self.out.say(f'promoting main {commit[:12]} "{subject}" to {", ".join(e.name for e in envs)}')
        for env in envs:  # all input is checked before anything is pushed
            self.run_for(env).prepare(main, env)
        for env in envs:  # and no environment loses assignments past the guard, or misses a source
            self.run_for(env).preflight(main, env)
        for env in envs:
            result = self.run_for(env).promote(main, env)
            report.results.append(result)
            if result.ok:
                self.run.passed.add(env.name)
            if result.state == "dry-run":
                self.out.say(f"dry run: the environments after {env.name} wait for it to succeed")
                break
            if not result.ok:
                break
        return report

    def _nothing_waits(self, commit: str, envs: list[Environment]) -> bool:
        """``--wait none``: the commit succeeded everywhere already, so a wake-up (a heartbeat)
        is done in seconds: no render, one read of the statuses."""
        if self.opts.waits or self.opts.force or self.opts.dry_run:
            return False
        statuses = self.run.statuses.of(commit)
        return all(
            (st := statuses.get(self.run.statuses.context_of(e))) is not None and st.state == "success"
            for e in envs
        )

    def schedule(self, environment: str, commit: str | None = None) -> Report:
        """The scheduling flow: re-render one environment with the main commit last promoted there
        (each cluster-type folder with its own, when a promotion in waves left them at several);
        with ``commit``, every folder with that one."""
        chosen = commit is not None
        if commit is None:
            commit = self._deployed(environment)
        main = self.cp.main(commit)
        env = main.pipeline.environment(environment)
        if env is None:
            raise UsageError(
                f"--schedule {environment}: the Pipeline at {commit[:12]} has no such environment"
            )
        self.out.say(
            f"scheduling {environment} with main {commit[:12]}" + ("" if chosen else " (last promoted there)")
        )
        run = self.run_for(env)
        return Report(
            "scheduling", commit, [run.schedule(main, env, waves=self.opts.waves, per_folder=not chosen)]
        )

    def rollback(self, environment: str, to: str | None = None) -> GoodState:
        """``promoter rollback``: restore an environment to a known-good state by hand and hold
        the main commit that was there."""
        return self.run_for(environment).rollbacks.by_hand(environment, to)

    def _deployed(self, environment: str) -> str:
        """The main commit the environment's platform branch holds."""
        env = self.cp.main(self.cp.resolve(None)).pipeline.environment(environment)
        if env is None:
            raise UsageError(f"--schedule {environment}: the Pipeline on main has no such environment")
        platform = self._platform(env)
        base = platform.fetch([env.gitops_branch])[env.gitops_branch]
        found = deployed_main(platform, env, base) if base else None
        if found is None:
            raise PromotionFailed(
                f"{environment}: nothing has been promoted there yet; run the promotion flow first"
            )
        return self.cp.resolve(found)


def _index(main: MainObjects, name: str) -> int:
    if main.pipeline.environment(name) is None:
        names = ", ".join(e.name for e in main.pipeline.environments)
        raise UsageError(f"--to {name}: no such environment (the Pipeline has {names})")
    return main.pipeline.index(name)
