"""``promoter diff`` in GitHub Actions: the diff as a markdown pull-request comment and step
summary, cut to GitHub's limits, and as the step's outputs (docs/github-actions.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from promoter.ghactions import runner
from promoter.promotion.diffs import EnvDiff, diff_text

COMMENT_MARKER = "<!-- promoter-diff -->"
MAX_COMMENT = 60_000  # GitHub refuses comments over 65,536 characters
MAX_SUMMARY = 512 * 1024  # a step summary may hold 1 MiB


def fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def diff_markdown(diffs: list[EnvDiff], limit: int) -> str:
    """The diff as markdown (a pull-request comment, a step summary), cut to ``limit`` characters."""
    main = diffs[0].main_commit[:12] if diffs else "-"
    head = [
        COMMENT_MARKER,
        f"### promoter: rendered changes (main `{main}`)",
        "",
        "| environment | platform branch | added | changed | removed |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for d in diffs:
        c = d.counts
        head.append(f"| {d.environment} | `{d.platform_branch}` | {c.added} | {c.changed} | {c.removed} |")
    text = "\n".join(head) + "\n"
    cut = "\n_The diff is too long to show here: run `promoter diff` to see all of it._\n"
    for d in diffs:
        if not d.changed:
            continue
        body = "".join(d.patches)
        mark = fence(body)
        block = f"\n<details><summary>{d.header()}</summary>\n\n{mark}diff\n{body}{mark}\n\n</details>\n"
        if len(text) + len(block) + len(cut) > limit:
            return text + cut
        text += block
    if not any(d.changed for d in diffs):
        text += "\nNo rendered changes.\n"
    return text


def diff_outputs(diffs: list[EnvDiff], comment_file: str | None, max_value: int) -> dict[str, str]:
    """The step outputs of ``promoter diff`` in GitHub Actions."""
    text = diff_text(diffs)
    if len(text) > max_value:
        text = text[:max_value] + "\n# (cut: the diff is longer than a step output may be)\n"
    outputs = {
        "commit": diffs[0].main_commit if diffs else "",
        "environments": json.dumps([d.environment for d in diffs]),
        "changed": "true" if any(d.changed for d in diffs) else "false",
        "changed-environments": json.dumps([d.environment for d in diffs if d.changed]),
        "diff": text,
    }
    if comment_file:
        outputs["comment-file"] = str(Path(comment_file).resolve())
    return outputs


def write_comment(diffs: list[EnvDiff], comment_file: str) -> None:
    """The pull-request comment, written to ``comment_file``."""
    Path(comment_file).write_text(diff_markdown(diffs, MAX_COMMENT), encoding="utf-8")


def publish_diff(diffs: list[EnvDiff], comment_file: str | None) -> None:
    """In Actions, the step's outputs (naming the comment file, if one was written) and summary."""
    runner.set_outputs(diff_outputs(diffs, comment_file, runner.MAX_OUTPUT_VALUE))
    runner.add_summary(diff_markdown(diffs, MAX_SUMMARY).replace(COMMENT_MARKER + "\n", ""))
