"""How a run behaves: what the command line says, handed to every flow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from promoter.model import EnvironmentObjects, MainObjects
from promoter.promotion.landing import Pacing
from promoter.promotion.waiting import WaitMode
from promoter.rendering.tree import Rendered

# How an environment is rendered: (main, its branch's objects, its name) -> its tree.
RenderHook = Callable[[MainObjects, EnvironmentObjects, str], Rendered]


@dataclass(frozen=True)
class Options:
    dry_run: bool = False
    force: bool = False
    poll_interval: float = 5.0
    progress_interval: float = 10.0
    run_url: str | None = None  # the CI run promoting, linked from statuses and PRs
    waves: bool = False  # the scheduling flow lands wave by wave (the promotion flow always does)
    render: RenderHook | None = None  # None: promoter's own render; a Kalypso control plane gives its own
    #: ``all``: wait in the run (merges, gates, bakes); ``none``: stop where it waits (section 12)
    wait: WaitMode = "all"
    #: ``--wait none``: environments whose promotion starts only in a run approved for them
    #: (a job under a GitHub Environment with required reviewers); ``approved`` names those
    approvals: frozenset[str] = frozenset()
    approved: frozenset[str] = frozenset()
    #: why ``force`` passes a hold or a closed change window (it passes neither without one)
    reason: str | None = None
    #: ``--allow-removal``: a step may remove assignments past the removal guard (removals.py)
    allow_removal: bool = False
    #: ``--verify-main`` (``PROMOTER_VERIFY_MAIN``): the main commit's signature checked by git or
    #: GitHub whatever the Pipeline at that commit says (a commit cannot switch its own check off)
    verify_main: str | None = None

    @property
    def waits(self) -> bool:
        return self.wait == "all"

    @property
    def pacing(self) -> Pacing:
        return Pacing(self.poll_interval, self.progress_interval, self.waits)
