"""The checks on a promotion PR's head commit (``prChecks``, docs/github.md#checks-before-the-merge):
its check runs (``GET /repos/{o}/{r}/commits/{ref}/check-runs``, what GitHub Actions and other
Apps post) and its commit statuses (the combined status, ``GET .../commits/{ref}/status``, what
older CI systems post), each read page by page and polled with ETags like the PR itself.

A check run that was run again is a new check run of the same name: the newest (the highest id)
is the one that counts, as on the PR's page.
"""

from __future__ import annotations

from typing import Any

import github
from github.CheckRun import CheckRun
from github.CommitCombinedStatus import CommitCombinedStatus

from promoter.forges.base import CheckState, PRCheck, status_check
from promoter.forges.github.api import GitHubHttp

PAGE = 100
#: Conclusions that pass, as branch protection counts them; any other conclusion of a completed
#: check run fails (failure, timed_out, cancelled, action_required, startup_failure, stale).
PASSING = ("success", "neutral", "skipped")


def pr_checks(http: GitHubHttp, gh: github.Github, repo_url: str, sha: str) -> list[PRCheck]:
    """Every check run (the newest per name) and every commit status on ``sha``."""
    return [*check_runs(http, gh, repo_url, sha), *statuses(http, gh, repo_url, sha)]


def check_runs(http: GitHubHttp, gh: github.Github, repo_url: str, sha: str) -> list[PRCheck]:
    url = f"{repo_url}/commits/{sha}/check-runs"
    runs: list[CheckRun] = []
    page = 1
    while True:
        params = {"per_page": PAGE, "page": page, "filter": "latest"}
        data = http.get_json("get check runs", gh, url, params, poll=True)
        items: list[dict[str, Any]] = data.get("check_runs") or []
        runs += [CheckRun(gh.requester, {}, item, completed=True) for item in items]
        if len(items) < PAGE or len(runs) >= int(data.get("total_count") or 0):
            break
        page += 1
    newest: dict[str, CheckRun] = {}
    for run in runs:
        if run.name not in newest or run.id > newest[run.name].id:
            newest[run.name] = run
    return [_check(run) for run in newest.values()]


def statuses(http: GitHubHttp, gh: github.Github, repo_url: str, sha: str) -> list[PRCheck]:
    """The combined status's statuses: GitHub keeps the newest per context there."""
    url = f"{repo_url}/commits/{sha}/status"
    found: dict[str, PRCheck] = {}
    page = 1
    while True:
        params = {"per_page": PAGE, "page": page}
        data = http.get_json("get PR statuses", gh, url, params, poll=True)
        combined = CommitCombinedStatus(gh.requester, {}, data)
        for status in combined.statuses:
            found.setdefault(status.context, status_check(status.context, status.state, status.target_url))
        if len(combined.statuses) < PAGE or len(found) >= combined.total_count:
            return list(found.values())
        page += 1


def _check(run: CheckRun) -> PRCheck:
    state: CheckState
    if run.status != "completed":
        state, detail = "pending", run.status
    elif run.conclusion in PASSING:
        state, detail = "success", run.conclusion
    else:
        state, detail = "failure", run.conclusion or "no conclusion"
    app = run.app.slug if run.app is not None else ""
    return PRCheck(run.name, "check-run", state, detail, run.html_url, app)
