"""The run's rendering budget (docs/configuration.md#time-limits). Each render has its own limit
(``sandbox.RENDER_SECONDS``); these bound the sum, so that a template slow in every assignment
stops the run after a few of them, not after all: the whole run's rendering (in each render
process) gets ``run_seconds()``, 120 s unless ``--render-budget`` or ``PROMOTER_RENDER_BUDGET``
says, and any one template a sixth of that (20 s by default: a template at 100,000 files per
environment spends a few seconds)."""

from __future__ import annotations

from dataclasses import dataclass, field

from promoter.errors import TemplateError
from promoter.model import Template
from promoter.scheduling.targets import Assignment

RUN_SECONDS = 120.0
#: One template may spend this part of the run's budget.
TEMPLATE_SHARE = 6
_chosen: list[float] = []  # --render-budget of this run, if given


def set_run_seconds(seconds: float | None) -> None:
    """The budget of this run (None: the default)."""
    _chosen[:] = [] if seconds is None else [seconds]


def run_seconds() -> float:
    return _chosen[0] if _chosen else RUN_SECONDS


@dataclass
class Budget:
    """What one process's renders spent: in all, and per template (seconds, assignments)."""

    spent: float = 0.0
    by_template: dict[str, tuple[float, int]] = field(default_factory=dict)

    def spend(self, seconds: float, template: Template, a: Assignment) -> None:
        """Count one render; TemplateError (exit 2, naming the template, the assignments rendered
        and the time) once the template's share or the run's budget is spent."""
        self.spent += seconds
        mine, count = self.by_template.get(template.name, (0.0, 0))
        mine, count = mine + seconds, count + 1
        self.by_template[template.name] = (mine, count)
        run = run_seconds()
        share = run / TEMPLATE_SHARE
        if mine > share:
            what = (
                f"{count} assignment{'s' if count > 1 else ''} rendered in {_seconds(mine)} "
                f"(the last: {a}), over its share of {_seconds(share)} of the run's rendering budget ({_seconds(run)}, "
                "--render-budget): make it faster, or raise the budget"
            )
        elif self.spent > run:
            what = (
                f"rendering took {_seconds(self.spent)} in all, over the run's budget of {_seconds(run)} (--render-budget); "
                f"this template: {count} assignment{'s' if count > 1 else ''} in {_seconds(mine)} (the last: {a})"
            )
        else:
            return
        raise TemplateError(
            f"template {template.name!r}: {what}", file=template.source.file, line=template.source.line
        )


def _seconds(value: float) -> str:
    return f"{value:.1f}s" if value >= 1 else f"{value * 1000:.1f}ms"
