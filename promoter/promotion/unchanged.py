"""A step whose tree the platform branch already holds (DESIGN section 6, step 2): no commit and
no PR. Done at once when the main commit whose promotion put that content there succeeded in
the environment, whichever it was (a teammate's clone reads the same statuses, so it decides
the same); otherwise, when a merge by hand or an earlier main commit's promotion left the tree
there unproven, the gates run on the branch's head, told the main commit its provenance names.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace

from promoter.console import Console
from promoter.model import Environment, EnvironmentObjects, MainObjects, Status, promotion_branch
from promoter.platform.plan import TreePlan
from promoter.platform.provenance import Provenance
from promoter.promotion.mixed import Held
from promoter.promotion.removals import Removals
from promoter.promotion.report import EnvResult, came_with
from promoter.promotion.stops import PASSED_BEFORE, Stops
from promoter.promotion.waiting import GATES
from promoter.promotion.waves import Step, pending_description
from promoter.rendering.tree import Rendered


@dataclass(frozen=True)
class Planned:
    """What one attempt found and rendered: the branches as they are now, and the new tree."""

    objects: EnvironmentObjects
    rendered: Rendered
    base: str | None
    existing: str | None  # the promotion branch
    deployed: str | None  # the newest main commit the platform branch holds
    there: str | None  # the main commit the step's folders hold, if they agree
    previous: Provenance | None  # the platform branch's provenance
    plan: TreePlan
    removals: Removals | None = None  # the assignments it removes, allowed


class Unchanged(Stops, ABC):
    """The cases of an unchanged tree (mixed into ``Attempts``)."""

    out: Console
    _held: Held | None
    _came_with: str | None

    @abstractmethod
    def _progress(self, result: EnvResult) -> EnvResult:
        """Remember how far the step got (``Attempts``)."""

    @abstractmethod
    def _note_unchanged(self, main: MainObjects, env: Environment, base: str) -> None:
        """The note a render the branch already holds gets (``Hydrating``)."""

    @abstractmethod
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
        """The step's gates on ``merge_sha`` (``Attempts``)."""

    def _unchanged(
        self,
        main: MainObjects,
        env: Environment,
        step: Step,
        planned: Planned,
        result: EnvResult,
        current: Status | None,
        trust_current: bool,
    ) -> EnvResult:
        """The platform branch already holds this tree: done when the main commit whose
        promotion put it there succeeded here (DESIGN section 6, step 2: whichever it was);
        else (a rerun after a merge, or an earlier commit's content not proven yet) gated."""
        base, there, prefix = planned.base, planned.there, step.prefix(env.name)
        assert base is not None
        self._note_unchanged(main, env, base)
        earlier = there if there is not None and there != main.commit else None
        proven = earlier is not None and self.statuses.succeeded(earlier, env)
        trusted = (
            trust_current and there == main.commit and current is not None and current.state == "success"
        )
        if proven and earlier is not None:
            self._came_with = earlier
            self.out.say(
                f"{prefix}: no changes; {env.gitops_branch} already has this content ({came_with(earlier)})"
            )
            message = f"no changes to the platform branch ({came_with(earlier)})"
            return replace(result, state="noop", merge_sha=base, message=message)
        if trusted or self._held is not None:
            self.out.say(f"{prefix}: no changes; {env.gitops_branch} is already at this content")
            return replace(result, state="noop", merge_sha=base, message="no changes to the platform branch")
        if there == main.commit and self._later_landed(main, step, planned.previous):
            self.out.say(f"{prefix}: {PASSED_BEFORE}")
            return replace(result, state="success", merge_sha=base, message=PASSED_BEFORE)
        if there == main.commit and not self.opts.waits:
            passed = self._passed_in_earlier_run(main, env, step)
            if passed:
                self.out.say(f"{prefix}: {passed}")
                return replace(result, state="success", merge_sha=base, message=passed)
        return self._gated_again(main, env, step, base, result, earlier)

    def _gated_again(
        self,
        main: MainObjects,
        env: Environment,
        step: Step,
        base: str,
        result: EnvResult,
        earlier: str | None,
    ) -> EnvResult:
        """Gates on the platform branch's head, which holds this tree: merged by hand since the
        last run, or put there by the ``earlier`` main commit, not proven here yet. The gates are
        told the main commit the tree's provenance names (``PROMOTER_COMMIT``): the trees are
        equal, so ``check-platform`` finds the commit it is told."""
        prefix, came = step.prefix(env.name), f" ({came_with(earlier)})" if earlier else ""
        if self.opts.dry_run:
            message = f"would check the gates of {base[:12]}, which already has this content{came}"
            self.out.say(f"{prefix}: dry run: {message}")
            return replace(result, state="dry-run", merge_sha=base, message=message)
        self.out.say(
            f"{prefix}: {env.gitops_branch} already has this content at {base[:12]}{came}; checking gates"
        )
        if not self.opts.waits and self._phase(main, env, step) not in ("gates", "soak"):
            # merged by hand since the last run: the gates' clock starts now, recorded here
            what = pending_description(step, f"merged {base[:12]}; {GATES}")
            self.statuses.post(main.commit, self.statuses.context_of(env), "pending", what, self.opts.run_url)
        pr = self.forge.find_pr(env, promotion_branch(env.name))
        pr_url = None
        if pr is not None and pr.state == "merged":  # report the gates where the merge was
            self._prs[env.name] = pr
            pr_url = pr.url
        gated = self._progress(replace(result, merge_sha=base, pr_url=pr_url))
        return self._gates(main, env, step, base, gated, named=earlier)

    def _later_landed(self, main: MainObjects, step: Step, previous: Provenance | None) -> bool:
        """Whether a later wave's folders hold ``main`` already (this wave passed its gates)."""
        later = self._steps[step.index :]
        return previous is not None and any(
            main.commit in previous.main_commits(s.cluster_types) for s in later
        )
