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
from promoter.promotion import messages
from promoter.promotion.control import ChangeControl
from promoter.promotion.environment import EnvironmentRun
from promoter.promotion.graph import through
from promoter.promotion.options import Options
from promoter.promotion.report import EnvResult, Report
from promoter.promotion.rollback import GoodState, deployed_main
from promoter.promotion.signatures import verify_main


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
        change: ChangeControl | None = None,
    ) -> None:
        """``routes``: the environments with a platform repo of their own (``gitops.repo``), by
        name, with that repo and its forge; the others use ``platform`` and ``forge``. ``change``:
        the holds and change windows every step respects (DESIGN section 13)."""
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
                run.asked = self.run.asked
                self._runs[id(route_platform)] = run
        for each in self._runs.values():
            each.change = change

    def run_for(self, env: Environment | str) -> EnvironmentRun:
        """The run of the platform repo ``env`` renders to."""
        name = env if isinstance(env, str) else env.name
        return self._runs[id(self._routes[name][0])] if name in self._routes else self.run

    def _platform(self, env: Environment) -> PlatformRepo:
        return self.run_for(env).platform

    def promote(self, commit: str, to: str | None = None) -> Report:
        """The promotion flow: take main commit ``commit`` through the environments, each after
        all it follows (DESIGN sections 6 and 14)."""
        main = self.cp.main(commit)
        envs = _chosen(main, to, force=self.opts.force)
        report = Report("promotion", commit)
        subject = self.cp.git.subject(commit)
        if self._nothing_waits(commit, envs):
            self.out.say(
                f"main {commit[:12]} has succeeded in {', '.join(e.name for e in envs)}; nothing waits"
            )
            report.results = [EnvResult(e.name, "skipped", "already promoted") for e in envs]
            return report
        self._signatures(main)
        for env in envs:  # a PR or commit template's mistake stops the run before anything is pushed
            messages.check_environment(env)
        self.out.say(f'promoting main {commit[:12]} "{subject}" to {", ".join(e.name for e in envs)}')
        for env in envs:  # all input is checked before anything is pushed
            self.run_for(env).prepare(main, env)
        for env in envs:  # and no environment loses assignments past the guard, or misses a source
            self.run_for(env).preflight(main, env)
        stopped: dict[str, EnvResult] = {}  # environments that did not go through in this run
        for env in envs:
            blocking = [stopped[u] for u in main.pipeline.upstreams(env.name) if u in stopped]
            if blocking:
                stopped[env.name] = blocking[0]
                continue
            result = self.run_for(env).promote(main, env)
            report.results.append(result)
            if result.ok:
                self.run.passed.add(env.name)
            if result.state == "dry-run":
                self._after_dry_run(main, env)
            if not result.ok or result.state == "dry-run":
                stopped[env.name] = result
                if not result.ok and result.state != "waiting" and main.pipeline.fail_fast:
                    break
        self._say_blocked(main, envs, stopped, report)
        return report

    def _after_dry_run(self, main: MainObjects, env: Environment) -> None:
        following = main.pipeline.descendants(env.name)
        if following:
            self.out.say(f"dry run: the environments after {env.name} wait for it to succeed")

    def _say_blocked(
        self, main: MainObjects, envs: list[Environment], stopped: dict[str, EnvResult], report: Report
    ) -> None:
        """In a graph, what a run left alone because an environment it follows did not go
        through (in a list, the environment that stopped says it all)."""
        if main.pipeline.is_chain:
            return
        ran = {r.environment for r in report.results}
        for env in envs:
            if env.name in ran or env.name not in stopped:
                continue
            waits_on = [u for u in main.pipeline.upstreams(env.name) if u in stopped]
            states = ", ".join(f"{u} ({_why(stopped[u])})" for u in waits_on)
            self.out.say(f"{env.name}: not started: it follows {states}")

    def _signatures(self, main: MainObjects, *, verify: bool = True) -> None:
        """The Pipeline's ``signatures``: who signs the commits this run writes, and (``verify``)
        the main commit's own signature checked before anything is rendered or pushed."""
        for run in self._runs.values():
            run.platform.sign_with(main.pipeline.sign_commits)
        signer = verify_main(self.cp.git, main, self.forge, self.opts.verify_main) if verify else None
        if signer:
            self.out.say(f"main {main.commit[:12]}: signature verified ({signer})")

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
        self._signatures(main, verify=chosen)  # a commit promoted before was verified then
        messages.check_environment(env)
        run = self.run_for(env)
        return Report(
            "scheduling", commit, [run.schedule(main, env, waves=self.opts.waves, per_folder=not chosen)]
        )

    def rollback(self, environment: str, to: str | None = None) -> GoodState:
        """``promoter rollback``: restore an environment to a known-good state by hand and hold
        the main commit that was there."""
        self._signatures(self.cp.main(self.cp.resolve(None)), verify=False)
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


def _chosen(main: MainObjects, to: str | None, *, force: bool) -> list[Environment]:
    """The environments a promotion takes the commit to, in an order of promotion: all of them,
    or with ``to`` that one and every environment before it in the graph (with ``force``, by
    hand: that one alone)."""
    pipeline = main.pipeline
    if to is None:
        return list(pipeline.ordered())
    if pipeline.environment(to) is None:
        names = ", ".join(e.name for e in pipeline.environments)
        raise UsageError(f"--to {to}: no such environment (the Pipeline has {names})")
    if force:
        return [e for e in pipeline.environments if e.name == to]
    return through(pipeline, to)


def _why(result: EnvResult) -> str:
    """An environment that did not go through, in a word or two: what the ones after it wait on."""
    if result.state == "waiting" and result.wait is not None:
        return f"waiting for {result.wait.waiting_for}"
    return result.state
