"""One environment of a promotion (DESIGN section 6): guard, then each step (the whole
environment, or its waves in order, section 11) planned, pushed, landed and gated, then the
environment's status.

State lives in the repos, so a run killed anywhere continues here: the ``promoter/<env>``
status on the main commit says how far it got (and, while pending, in which wave), the
platform branch's provenance says which main commit each cluster-type folder holds, and the
promotion branch says what waits to be merged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from promoter.clock import format_duration
from promoter.errors import GateFailed, PromotionFailed, Superseded
from promoter.gates.runner import GateOutcome
from promoter.model import Environment, EnvironmentObjects, MainObjects, Status
from promoter.platform.objects import Change
from promoter.promotion import mixed, sources, waiting
from promoter.promotion.attempt import Attempts
from promoter.promotion.mixed import Held
from promoter.promotion.removals import Scene, preflight
from promoter.promotion.report import EnvResult, EnvState, WaveResult, came_with
from promoter.promotion.stops import BAKING, PASSED_BEFORE
from promoter.promotion.waiting import APPROVAL, Wait, Waiting
from promoter.promotion.waves import Step, flux_of, passed_description, resolve, whole
from promoter.rendering.tree import Rendered, render_environment

Run = Callable[[], EnvResult]


class EnvironmentRun(Attempts):
    """The promotion of one main commit to one environment, step by step."""

    def promote(self, main: MainObjects, env: Environment) -> EnvResult:
        """Take ``main`` to ``env`` unless it is there already, failed there, or the environment
        before has not passed it."""
        return self._timed(main, env, lambda: self._promote(main, env, self._current(main, env)))

    def schedule(
        self, main: MainObjects, env: Environment, *, waves: bool = False, per_folder: bool = False
    ) -> EnvResult:
        """Render ``env`` again with ``main`` (the commit it runs): new environment values; the
        whole environment at once unless ``waves``. With ``per_folder``, folders that hold other
        main commits (a promotion in waves under way or stopped) are rendered with their own."""
        held = self._held_commits(main, env) if per_folder else None
        steps = self.steps_of(main, env, waves=waves)
        self.preflight(main, env, steps)
        self._held, self.statuses.muted = held, held is not None
        try:
            return self._timed(
                main,
                env,
                lambda: self._steps_of(main, env, steps, self._current(main, env), trust_current=True),
            )
        finally:
            self._held, self.statuses.muted = None, False

    def _held_commits(self, main: MainObjects, env: Environment) -> Held | None:
        """What the folders hold when they hold several main commits, with the environment's
        render replaced by one that takes each folder from the render of its own commit."""
        base = self.platform.fetch([env.gitops_branch])[env.gitops_branch]
        previous = self.platform.provenance(base, env.gitops_path) if base else None
        objects, rendered = self.prepare(main, env)
        present = self.platform.reader.top(base, env.gitops_path)
        held = mixed.held(env, previous, self.steps_of(main, env), present)
        if held is None:
            return None
        self.out.say(
            f"{env.name}: its folders hold {len(held.groups())} main commits: {held.describe()}; "
            "each folder is rendered again with its own (no promoter/ status is posted)"
        )
        union = mixed.render_held(self.cp, env, objects, rendered, main.commit, held)
        key = (main.commit, env.name)
        self._prepared[key] = (objects, union, self._prepared[key][2])
        return held

    def prepare(self, main: MainObjects, env: Environment) -> tuple[EnvironmentObjects, Rendered]:
        """Load, render and resolve the waves of an environment once per run (bad input fails
        here: exit 2, before anything is pushed)."""
        key = (main.commit, env.name)
        if key not in self._prepared:
            objects = self.cp.environment(env)
            rendered = (self.opts.render or render_environment)(main, objects, env.name)
            self._prepared[key] = (objects, rendered, resolve(env, objects, main.pipeline.versions))
        objects, rendered, _ = self._prepared[key]
        return objects, rendered

    def preflight(self, main: MainObjects, env: Environment, steps: tuple[Step, ...] | None = None) -> None:
        """Before anything is pushed: with ``checkSources``, every source of the environment's
        targets answers; no step of ``env`` removes assignments past the removal guard (exit 2;
        a dry run and ``--allow-removal`` leave that to each step's plan)."""
        if env.check_sources:
            missing = self.sources.check(main, [env.name])
            sources.refuse(missing, f"checkSources of {env.name}: nothing was pushed")
        if self.opts.dry_run or self.opts.allow_removal:
            return
        objects, rendered = self.prepare(main, env)
        scene = Scene(main, env, objects, rendered.files, None, None, frozenset())
        preflight(self.cp, self.platform, scene, steps or self.steps_of(main, env), rendered.cluster_types)

    def steps_of(self, main: MainObjects, env: Environment, *, waves: bool = True) -> tuple[Step, ...]:
        """The environment's steps: its waves, or with ``waves`` False the whole at once."""
        objects, rendered = self.prepare(main, env)
        if waves:
            return self._prepared[(main.commit, env.name)][2]
        types = rendered.cluster_types
        return whole(env, types, flux_of(objects, types, main.pipeline.versions))

    def _current(self, main: MainObjects, env: Environment) -> Status | None:
        """The environment's status on the main commit, as this run starts it (counted in its
        requests)."""
        return self.statuses.of(main.commit).get(self.statuses.context_of(env))

    def _timed(self, main: MainObjects, env: Environment, run: Run) -> EnvResult:
        start, requests = self.clock.now(), self.forge.request_count()
        self._start, self._env_start = start, start
        self._partial, self._done, self._step = EnvResult(env.name, "failure"), [], None
        self._came_with = None
        result = self._outcome(main, env, run)
        result.duration = self.clock.now() - start
        result.requests = self.forge.request_count() - requests
        return result

    def _outcome(self, main: MainObjects, env: Environment, run: Run) -> EnvResult:
        context = self.statuses.context_of(env)
        try:
            return run()
        except Waiting as stopped:
            self.out.say(
                f"{stopped.wait.message} (since {format_duration(self.clock.wall() - stopped.wait.since)})"
            )
            return replace(self._ended(env, "waiting", str(stopped)), wait=stopped.wait)
        except Superseded as err:
            if not self.opts.dry_run:
                self.statuses.post(main.commit, context, "error", f"superseded: {err}", self.opts.run_url)
            self.out.say(f"{env.name}: superseded: {err}")
            return self._ended(env, "superseded", str(err))
        except _Held as err:
            self.out.say(f"{env.name}: HELD: {str(err).removeprefix(env.name + ': ')}")
            return self._ended(env, "held", str(err))
        except PromotionFailed as err:
            detail = str(err).removeprefix(env.name + ": ")
            message = f"{self._step.label}: {detail}" if self._step and self._step.name else str(err)
            if not self.opts.dry_run:
                self.statuses.post(main.commit, context, "failure", message, self.opts.run_url)
            self.out.say(f"{env.name}: FAILED: {message.removeprefix(env.name + ': ')}")
            gates = None
            if isinstance(err, GateFailed):
                gates = [o for o in err.outcomes if isinstance(o, GateOutcome)]
            return self._ended(env, "failure", message, gates)

    def _ended(
        self, env: Environment, state: EnvState, message: str, gates: list[GateOutcome] | None = None
    ) -> EnvResult:
        """The environment's result when a step did not go through: how far it got."""
        result = replace(
            self._partial, state=state, message=message, gates=self._partial.gates if gates is None else gates
        )
        if self._step is not None and not self._step.whole:
            wave = _wave_result(self._step, result, self.clock.now() - self._start)
            result = replace(result, waves=[*self._done, wave])
        return result

    def _promote(self, main: MainObjects, env: Environment, current: Status | None) -> EnvResult:
        if current and current.state == "success" and not self.opts.force:
            self.out.say(f"{env.name}: already promoted ({current.description})")
            return EnvResult(env.name, "skipped", "already promoted")
        if current and current.state in ("failure", "error") and not self.opts.force:
            raise _Held(held_message(env.name, main.commit, current))
        self._guard(main, env)
        if self.change is not None and not _under_way(current):  # a hold over a window over an approval
            self.change.stop(main, env, self.steps_of(main, env)[0], None)
        self._approval(main, env, current)
        return self._steps_of(main, env, self.steps_of(main, env), current, trust_current=False)

    def _approval(self, main: MainObjects, env: Environment, current: Status | None) -> None:
        """``--wait none``: an environment promoted only in a run approved for it (a job under a
        GitHub Environment with required reviewers) waits here, asked once: the run that gets
        here first records the request, later runs only report it; once under way (its status
        pending with anything else), later runs go on without asking again.

        A run asks for one approval at most, and a run that was itself approved asks for none:
        the workflow runs one approval job, after the run that asked (in a graph, prod-eu and
        prod-us may both get here in one run). An environment not asked waits with a check due
        at once, so the next run (any event, or the heartbeat) asks for it."""
        if self.opts.waits or env.name not in self.opts.approvals or env.name in self.opts.approved:
            return
        pending = current is not None and current.state == "pending"
        recorded = pending and current is not None and current.description.startswith(APPROVAL)
        if pending and not recorded:
            return
        asked = recorded and not self.opts.force  # by hand with --force: ask again (a rejected request)
        started = waiting.since(current, whole(env, ())[0], ("approval",), self.clock)
        if not asked and (self.asked or self.opts.approved):
            first = ", ".join(sorted(self.asked or self.opts.approved))
            message = f"{env.name}: {APPROVAL}, to be asked by the next run (this one is for {first})"
            raise Waiting(Wait("approval", env.name, "", started, self.clock.wall(), message))
        if not asked and not self.opts.dry_run:
            what = f"{APPROVAL} to promote to {env.name}"
            self.statuses.post(main.commit, self.statuses.context_of(env), "pending", what, self.opts.run_url)
        if not asked:
            self.asked.add(env.name)
        message = f"{env.name}: {APPROVAL} (the GitHub Environment {env.name}'s reviewers)"
        raise Waiting(Wait("approval", env.name, "", started, None, message, approval_requested=not asked))

    def _guard(self, main: MainObjects, env: Environment) -> None:
        """Every environment ``env`` follows has succeeded for the commit (section 14: all of
        them; a list Pipeline: the one before)."""
        if self.opts.force:
            return
        pipeline = main.pipeline
        missing = [
            name
            for name in pipeline.upstreams(env.name)
            # a dry run posts nothing: trust this run's own results
            if name not in self.passed
            and not self.statuses.succeeded(main.commit, pipeline.environments[pipeline.index(name)])
        ]
        if missing:
            raise PromotionFailed(
                f"{env.name}: guard: {main.commit[:12]} has not succeeded in {', '.join(missing)} yet "
                "(use --force to skip)"
            )

    def _steps_of(
        self,
        main: MainObjects,
        env: Environment,
        steps: tuple[Step, ...],
        current: Status | None,
        *,
        trust_current: bool,
    ) -> EnvResult:
        """Each step in order, each gated (and baked) before the next starts; the environment is
        done when its last step is."""
        self._steps = steps
        if len(steps) > 1:
            names = ", ".join(f"{s.name} ({', '.join(s.cluster_types)})" for s in steps)
            self.out.say(f"{env.name}: {len(steps)} waves: {names}")
        result = EnvResult(env.name, "noop")
        for step in steps:
            self._step, self._start = step, self.clock.now()
            result = self._attempts(main, env, step, current, trust_current=trust_current)
            if not step.whole:
                self._done.append(_wave_result(step, result, self.clock.now() - self._start))
            if result.state == "dry-run":
                if not step.last:
                    self.out.say(f"{step.prefix(env.name)}: dry run: the waves after it wait for it to pass")
                break
            self._after(main, env, step, result)
        final = _combined(result, self._done, self.prepare(main, env)[1])
        if not self.opts.dry_run and final.state != "dry-run":
            self.statuses.post(
                main.commit,
                self.statuses.context_of(env),
                "success",
                _success_description(env, final, self._came_with),
                self.opts.run_url,
            )
        if final.state == "success":
            self.out.say(f"{env.name}: success in {format_duration(self.clock.now() - self._env_start)}")
        return final

    def _after(self, main: MainObjects, env: Environment, step: Step, result: EnvResult) -> None:
        """A step passed: say so on the environment's status, and bake before going on. Without
        waiting, the last wave's bake is recorded on the status too (its start spans runs)."""
        if result.state != "success" or result.message == PASSED_BEFORE:
            return
        recorded = step.bake > 0 and not self.opts.waits
        if result.message != BAKING and (not step.last or recorded):
            following = None if step.last else self._steps[step.index]
            assert result.merge_sha is not None
            self.statuses.post(
                main.commit,
                self.statuses.context_of(env),
                "pending",
                passed_description(step, following, result.merge_sha, result.message),
                self.opts.run_url,
            )
        if step.bake > 0:
            self._bake(main, env, step)

    def _bake(self, main: MainObjects, env: Environment, step: Step) -> None:
        """Wait ``bake`` after a wave passed: its clusters run the change before more do."""
        then = "the next wave" if not step.last else "the environment is done"
        if not self.opts.waits:  # from the time the status recorded, in whichever run
            started = self._since(main, env, step, "bake")
            left = started + step.bake - self.clock.wall()
            if left > 0:
                message = f"{step.prefix(env.name)}: baking, {format_duration(left)} to go before {then}"
                raise Waiting(Wait("bake", env.name, step.name, started, started + step.bake, message))
            return
        self.out.say(f"{step.prefix(env.name)}: passed; baking {format_duration(step.bake)} before {then}")
        end = self.clock.now() + step.bake
        next_progress = self.clock.now() + self.opts.progress_interval
        while (now := self.clock.now()) < end:
            if now >= next_progress:
                self.out.say(f"{step.prefix(env.name)}: baking, {format_duration(end - now)} to go")
                next_progress = now + self.opts.progress_interval
            self.clock.sleep(min(end - now, self.opts.progress_interval))


def _wave_result(step: Step, result: EnvResult, duration: float) -> WaveResult:
    return WaveResult(
        step.name,
        list(step.cluster_types),
        result.state,
        result.message,
        result.pr_url,
        result.merge_sha,
        dict(result.changes),
        list(result.gates),
        duration,
    )


def _combined(last: EnvResult, waves: list[WaveResult], rendered: Rendered) -> EnvResult:
    """The environment's result: its one step's, or its waves' together."""
    if not waves:
        return last
    landed = [w for w in waves if w.merge_sha]
    state: EnvState = "dry-run" if last.state == "dry-run" else "noop"
    if state != "dry-run" and any(w.state == "success" for w in waves):
        state = "success"
    changes: dict[str, Change] = {}
    for w in waves:
        changes.update({k: v for k, v in w.changes.items() if k != ".promoter"})
    with_pr = [w for w in waves if w.pr_url]
    return replace(
        last,
        state=state,
        message="; ".join(f"{w.name}: {w.state}" for w in waves),
        files=len(rendered.files),
        changes=changes,
        pr_url=with_pr[-1].pr_url if with_pr else None,
        merge_sha=landed[-1].merge_sha if landed else last.merge_sha,
        gates=[g for w in waves for g in w.gates],
        waves=list(waves),
    )


def _success_description(env: Environment, result: EnvResult, earlier: str | None = None) -> str:
    """``earlier``: the main commit whose promotion put the unchanged content there."""
    if result.state == "noop":
        came = f", {came_with(earlier)}" if earlier else ""
        return f"no changes ({env.gitops_branch} already has this content{came})"
    if result.waves:
        done = ", ".join(f"{w.name} {w.state}" for w in result.waves)
        at = f" at {result.merge_sha[:12]}" if result.merge_sha else ""
        return f"{len(result.waves)} waves healthy{at} ({done})"
    assert result.merge_sha is not None
    return f"healthy at {result.merge_sha[:12]} ({result.message})"


#: What ends a hold: said with every run that finds a commit held.
CLEARS = "a new commit on main, a promotion by hand with force, or a rollback clears it"


def held_message(env: str, commit: str, current: Status) -> str:
    """``qa: 4052d4a0b1c2 failed here before (<why>); held, use --force to retry; held since
    <time>: <what clears it>``."""
    since = f" since {current.created_at}" if current.created_at else ""
    return (
        f"{env}: {commit[:12]} failed here before ({current.description}); held, use --force to retry; "
        f"held{since}: {CLEARS}"
    )


def _under_way(current: Status | None) -> bool:
    """Whether a promotion to the environment has started (past asking for its approval)."""
    return current is not None and current.state == "pending" and not current.description.startswith(APPROVAL)


class _Held(PromotionFailed):
    """The main commit failed in this environment before: held until ``--force``."""
