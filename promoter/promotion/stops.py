"""Where a run that does not wait (``--wait none``, DESIGN section 12) stops inside a step, and
what it reads back from the environment's status to continue where an earlier run stopped."""

from __future__ import annotations

from promoter.clock import Clock
from promoter.forges.base import Forge, PullRequest
from promoter.gates.runner import GateOutcome, GatesPending
from promoter.model import Environment, MainObjects, Status
from promoter.promotion import waiting
from promoter.promotion.gating import Gating
from promoter.promotion.landing import MergePending
from promoter.promotion.options import Options
from promoter.promotion.statuses import Statuses
from promoter.promotion.waiting import Wait, Waiting, phase_of
from promoter.promotion.waves import Step, pending_description

#: A wave found landed with a later wave landed too: its gates passed in an earlier run.
PASSED_BEFORE = "gates passed before (a later wave holds this commit)"
#: ``--wait none``: a wave found baking (its status says so): its gates passed in an earlier run.
BAKING = "gates passed before; baking"


class Stops:
    """The waiting points of a step when the run does not wait (mixed into ``Attempts``)."""

    clock: Clock
    forge: Forge
    opts: Options
    statuses: Statuses
    gating: Gating
    _start: float
    _steps: tuple[Step, ...]
    _prs: dict[str, PullRequest]

    def _merge_deadline(self, main: MainObjects, env: Environment, step: Step) -> float:
        """The merge's deadline on the run's clock: from this step's start while waiting in the
        run; else from when the PR was opened, in any run."""
        if self.opts.waits:
            return self._start + step.timeout
        return waiting.deadline(self.clock, self._since(main, env, step, "merge"), step.timeout)

    def _status(self, main: MainObjects, env: Environment) -> Status | None:
        """The environment's status on the main commit as it is now (this run's posts included)."""
        return self.statuses.of(main.commit).get(self.statuses.context_of(env))

    def _phase(self, main: MainObjects, env: Environment, step: Step) -> waiting.Phase | None:
        return phase_of(self._status(main, env), step)

    def _since(self, main: MainObjects, env: Environment, step: Step, *phases: waiting.Phase) -> float:
        return waiting.since(self._status(main, env), step, phases, self.clock)

    def _passed_in_earlier_run(self, main: MainObjects, env: Environment, step: Step) -> str | None:
        """``--wait none``: the status says the step passed its gates in an earlier run (it
        bakes, or a later wave is under way): not gated again, so its bake is not restarted."""
        if self._phase(main, env, step) == "bake":
            return BAKING
        if any(self._phase(main, env, later) for later in self._steps[step.index :]):
            return PASSED_BEFORE
        return None

    def _merge_pending(self, env: Environment, step: Step, pending: MergePending, started: float) -> Waiting:
        """Where a run that does not wait for a merge stops: a human's merge (or review) is an
        event; an automatic merge, and the PR's pending checks (``prChecks``), are worth looking
        at again after the poll interval."""
        manual = env.merge == "manual" and not pending.checks
        review = "review" in pending.why.lower() and not pending.checks
        why = f"someone to merge {pending.pr.url}" if manual else f"{pending.pr.url}: {pending.why}"
        return Waiting(
            Wait(
                "approval" if review else "merge",
                env.name,
                step.name,
                started,
                None if manual else self.clock.wall() + self.opts.poll_interval,
                f"{step.prefix(env.name)}: waiting for {why}",
            )
        )

    def _gates_once(
        self, main: MainObjects, env: Environment, step: Step, merge_sha: str, named: str | None = None
    ) -> list[GateOutcome]:
        """``--wait none``: each gate checked once, the timeout and the soak counted from the
        times the status recorded; Waiting when some have not passed yet. ``named``: the main
        commit the gates are told, when not the promoted one (``Gating.check``)."""
        started = waiting.gates_started(self._status(main, env), step, self.clock)
        soak = None
        if self._phase(main, env, step) == "soak":  # on the run's clock, as the gates count
            soak = self.clock.now() - (self.clock.wall() - self._since(main, env, step, "soak"))
        deadline = waiting.deadline(self.clock, started, step.timeout)
        try:
            return self.gating.check(
                main,
                env,
                step,
                merge_sha,
                deadline,
                self._prs.get(env.name),
                once=True,
                others_passed_at=soak,
                commit=named,
            )
        except GatesPending as pending:
            if pending.others_passed_at is not None and soak is None:  # the soak starts: record it
                took = self.clock.wall() - started
                what = pending_description(step, waiting.soak_description(merge_sha, took))
                self.statuses.post(
                    main.commit, self.statuses.context_of(env), "pending", what, self.opts.run_url
                )
            due = self.clock.wall() + max(pending.due - self.clock.now(), 0.0)
            raise Waiting(
                Wait(
                    "gates",
                    env.name,
                    step.name,
                    started,
                    due,
                    f"{step.prefix(env.name)}: waiting for {pending}",
                )
            ) from None
