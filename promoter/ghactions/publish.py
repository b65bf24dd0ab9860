"""A promotion run's report published to its GitHub Actions step: the step outputs
(docs/github-actions.md), the step summary and an annotation per environment that did not
succeed; nothing outside Actions."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from promoter.ghactions.runner import (
    active,
    add_summary,
    command,
    emit,
    end_group,
    mask_new_secrets,
    set_outputs,
)
from promoter.ghactions.summary import summary_markdown
from promoter.masking import mask
from promoter.model import Pipeline
from promoter.promotion.report import EnvResult, Report
from promoter.promotion.waiting import outputs_of


def _result_json(r: EnvResult) -> dict[str, object]:
    return {
        "state": r.state,
        "ok": r.ok,
        "message": r.message,
        "prUrl": r.pr_url,
        "mergeSha": r.merge_sha,
        "promotionSha": r.promotion_sha,
        "files": r.files,
        "duration": round(r.duration, 3),
        "waves": {w.name: w.state for w in r.waves},
    }


def report_outputs(report: Report) -> dict[str, str]:
    """The promote step's outputs (documented in docs/github-actions.md)."""
    failed = next((r.environment for r in report.results if not r.ok and r.state != "waiting"), "")
    return {
        "commit": report.main_commit,
        "flow": report.flow,
        "ok": "true" if report.ok else "false",
        "state": report.state,
        "environments": json.dumps([r.environment for r in report.results]),
        **outputs_of(report.wait),
        "failed-environment": failed,
        "results": json.dumps({r.environment: _result_json(r) for r in report.results}, sort_keys=True),
        "pr-urls": json.dumps({r.environment: r.pr_url for r in report.results if r.pr_url}, sort_keys=True),
        "report": json.dumps(report.to_json(), sort_keys=True),
    }


def publish_report(
    report: Report, environments: Sequence[str] = (), follows: Mapping[str, Sequence[str]] | None = None
) -> None:
    """Outputs, the step summary and an annotation per failed environment (when in Actions);
    ``follows``: what each environment follows, for a Pipeline that is a graph."""
    if not active():
        return
    end_group()
    mask_new_secrets()
    set_outputs(report_outputs(report))
    add_summary(summary_markdown(report, environments, follows))
    for r in report.results:
        if not r.ok:
            # a wait is the usual end of a run, and a held commit is news only in the run that
            # failed it: a notice; a failure in this run is an error
            kind = "error" if r.state in ("failure", "superseded") else "notice"
            emit(command(kind, mask(r.message or r.state), title=f"promoter: {r.environment} {r.state}"))


def publish_pipeline_report(report: Report, pipeline: Pipeline) -> None:
    """``publish_report`` with the Pipeline's environments, and (a Pipeline that is a graph)
    what each follows, for the summary's diagram."""
    environments = pipeline.environments
    follows = None if pipeline.is_chain else {e.name: pipeline.upstreams(e.name) for e in environments}
    publish_report(report, [e.name for e in environments], follows)
