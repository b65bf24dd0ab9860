"""The promotion PR's own checks before its merge (``prChecks``, docs/github.md#checks-before-the-merge).

The platform repo's CI (kubeconform, a policy check) posts check runs and commit statuses on the
promotion PR's head commit. An environment that requires them waits, while one is pending, inside
the merge's wait (and its deadline, the environment's ``timeout``), and fails like a gate when one
fails: the PR stays unmerged, and its name and link are in the failure, on the PR and in
``promoter status``. ``require: all`` judges every check there is; a list judges the checks whose
names match its patterns (``*`` any text, ``/`` included) and waits for each pattern to match one.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass

from promoter.errors import ChecksFailed
from promoter.forges.base import CheckState, Forge, PRCheck, PullRequest
from promoter.model import Environment, PRChecksRequire, promotion_branch

_ORDER = {"failure": 0, "pending": 1, "success": 2}


@dataclass(frozen=True)
class Verdict:
    """The required checks as they are now: ``checks`` those that count, failed first."""

    state: CheckState
    checks: tuple[PRCheck, ...]
    why: str  # one line


def judge(require: PRChecksRequire, found: list[PRCheck] | None, *, runs_checks: bool) -> Verdict:
    """``require`` of the checks ``found`` on the PR's head (None: the forge keeps none).

    With ``all``, a PR with no checks is pending where CI starts them by itself (``runs_checks``:
    they are still to come) and passes where nothing would (the local forge)."""
    found = found or []
    if require == "all" and not found:
        if runs_checks:
            return Verdict("pending", (), "PR checks: none reported yet")
        return Verdict("success", (), "PR checks: none posted (nothing runs checks on this forge)")
    if require == "all":
        counted, missing = found, []
    else:
        counted = [c for c in found if _matches(c.name, require)]
        missing = [p for p in require if not any(fnmatch.fnmatchcase(c.name, p) for c in found)]
    return _verdict(tuple(sorted(counted, key=lambda c: (_ORDER[c.state], c.name, c.kind))), missing)


def _verdict(checks: tuple[PRCheck, ...], missing: list[str]) -> Verdict:
    """Any failure fails; else anything pending (or a pattern nothing matched yet) waits."""
    failed = [c for c in checks if c.state == "failure"]
    if failed:
        first = f"PR check {failed[0].name} failed ({failed[0].detail}): {failed[0].url or 'no link'}"
        more = "".join(f"; and {c.name} ({c.detail}): {c.url or 'no link'}" for c in failed[1:])
        return Verdict("failure", checks, first + more)
    pending = [f"{c.name} ({c.detail}) {c.url or ''}".rstrip() for c in checks if c.state == "pending"]
    pending += [f"{p} (not reported yet)" for p in missing]
    if pending:
        return Verdict("pending", checks, "PR checks pending: " + "; ".join(pending))
    return Verdict("success", checks, "PR checks passed: " + ", ".join(c.name for c in checks))


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def line_of(check: PRCheck) -> str:
    """``kubeconform: success (check run) https://...``: a check and its link."""
    kind = "check run" if check.kind == "check-run" else "status"
    detail = f"{check.state}" if check.detail == check.state else f"{check.state}, {check.detail}"
    return f"{check.name}: {detail} ({kind}) {check.url or 'no link'}"


def checks_report(where: str, sha: str, verdict: Verdict) -> str:
    """A PR comment: why the promoter did not merge, each required check with its link."""
    lines = [
        f"**{where}** PR checks on `{sha[:12]}`: {verdict.why}; not merged",
        "",
        "| check | kind | state | link |",
        "| --- | --- | --- | --- |",
    ]
    for c in verdict.checks:
        link = f"[{c.detail}]({c.url})" if c.url else c.detail
        lines.append(f"| {_cell(c.name)} | {c.kind} | {c.state} | {_cell(link)} |")
    if not verdict.checks:
        lines.append("| (none reported) | | | |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


class PRChecks:
    """The required checks of one environment's promotion PR, read at each look of the merge's
    wait: ``ready`` says whether they passed, and fails the environment when one failed."""

    def __init__(
        self,
        forge: Forge,
        env: Environment,
        say: Callable[[str], None],
        who: str = "",
        seen: Callable[[Verdict], None] = lambda v: None,
    ) -> None:
        assert env.pr_checks is not None
        self.forge, self.env, self.require = forge, env, env.pr_checks
        self.say, self.who, self.seen = say, who or env.name, seen
        self.last: Verdict | None = None
        self._told: set[tuple[str, str, str]] = set()

    def ready(self, pr: PullRequest) -> bool:
        """True once every required check passed; False while one is pending; ChecksFailed
        (said on the PR) when one failed."""
        verdict = judge(self.require, self.forge.pr_checks(pr), runs_checks=self.forge.runs_checks)
        self.last = verdict
        self.seen(verdict)
        self._tell(verdict)
        if verdict.state == "failure":
            raise self._failed(pr, verdict, verdict.why)
        return verdict.state == "success"

    @property
    def why(self) -> str:
        """What the last look found (``PR checks pending: ...``)."""
        return self.last.why if self.last is not None else "PR checks not read yet"

    def timed_out(self, pr: PullRequest) -> ChecksFailed:
        """The deadline came with a required check still pending (or not reported)."""
        assert self.last is not None
        why = (
            f"PR checks did not pass within the timeout: {self.last.why.removeprefix('PR checks pending: ')}"
        )
        return self._failed(pr, self.last, why)

    def _failed(self, pr: PullRequest, verdict: Verdict, why: str) -> ChecksFailed:
        self.forge.comment(
            pr, checks_report(self.who, pr.head_sha, Verdict(verdict.state, verdict.checks, why))
        )
        return ChecksFailed(f"{self.env.name}: {why}", verdict.checks)

    def _tell(self, verdict: Verdict) -> None:
        """Each check's state once, as it changes; the verdict once it passed."""
        for c in verdict.checks:
            if (c.name, c.kind, c.detail) not in self._told:
                self._told.add((c.name, c.kind, c.detail))
                self.say(f"{self.who}: PR check {line_of(c)}")
        if verdict.state == "success" and ("", "", "success") not in self._told:
            self._told.add(("", "", "success"))
            self.say(f"{self.who}: {verdict.why}")


def open_pr_verdict(forge: Forge, env: Environment) -> Verdict | None:
    """``promoter status``: the required checks of the environment's open promotion PR, as they
    are now; None when it requires none or has no open PR."""
    if env.pr_checks is None:
        return None
    pr = forge.find_pr(env, promotion_branch(env.name))
    if pr is None or pr.state != "open":
        return None
    return judge(env.pr_checks, forge.pr_checks(pr), runs_checks=forge.runs_checks)
