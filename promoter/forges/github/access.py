"""What the promoter's GitHub credentials may do, checked without changing anything
(``promoter validate --github``): a token that cannot write what a run writes is found before the
run, not as a warning in its log (docs/github-actions.md#holds-windows-and-overrides).

- **Contents write** on the control plane (holds, overrides and notification records on
  ``refs/promoter/*``; a release's ``promoter-wake``) and on the platform repo (its promotion
  branches): ``git push --dry-run`` of a new ref, which asks the server for its receive-pack and
  sends nothing; GitHub refuses that to a token without Contents write (HTTP 403).
- **Variables read and write** on the control plane (the heartbeat): the variable read, and,
  when it exists, written back with the value it has (nothing changes).
- **Commit statuses read** on the control plane.
- **Checks read** and **Commit statuses read** on a platform repo whose environments require
  their PRs' checks (``prChecks``): its check runs and combined status read at the environment's
  branch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from promoter.clock import Clock
from promoter.controlplane.repo import ControlPlane
from promoter.errors import PromoterError, UsageError, one_line
from promoter.forges.github.api import GitHubHttp, GitHubRequestError
from promoter.forges.github.auth import Credentials, credentials_from_env, git_auth_env
from promoter.forges.github.urls import control_plane_repo, github_api_url, parse_repo_url
from promoter.forges.github.variables import RepoVariables
from promoter.gitcmd import Git
from promoter.masking import mask
from promoter.model import Pipeline

#: The ref a dry-run push names: new, so that no fast-forward rule can refuse it.
PROBE_REF = "refs/promoter/access-check"


@dataclass(frozen=True)
class Finding:
    ok: bool
    text: str


def can_push(git: Git, url: str, token: Callable[[], str], ref: str, commit: str) -> str | None:
    """None when a push of ``commit`` to the new ``ref`` of ``url`` would be accepted; what git said
    otherwise. Nothing is pushed (``--dry-run``)."""
    env = git_auth_env(url, token()) if url.startswith(("https://", "http://")) else None
    proc = git.run(
        "push", "--dry-run", "--porcelain", operands=[url, f"{commit}:{ref}"], check=False, env=env
    )
    if proc.returncode == 0:
        return None
    said = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip().splitlines()
    return mask(one_line(said[-1] if said else f"git push exited {proc.returncode}"))


def check_contents(
    git: Git, where: str, url: str, token: Callable[[], str], commit: str, needs: str
) -> Finding:
    try:
        problem = can_push(git, url, token, PROBE_REF, commit)
    except PromoterError as err:
        problem = mask(one_line(str(err)))
    if problem is None:
        return Finding(True, f"{where}: Contents write ok ({needs})")
    return Finding(
        False,
        f"{where}: the promoter's credentials cannot push (Contents write): {needs} would fail: {problem}",
    )


def check_variables(http: GitHubHttp, credentials: Credentials, repo: str, name: str) -> Finding:
    """The heartbeat's variable: read, and written back unchanged when it exists."""
    variables = RepoVariables(http, credentials, repo)
    try:
        value = variables.get(name)
        if value is None:
            return Finding(
                True, f"{repo}: Variables read ok; {name} is made by the first run (Variables write)"
            )
        variables.put(name, value)
    except PromoterError as err:
        return Finding(
            False,
            f"{repo}: the heartbeat's {name} cannot be read and written (Variables read and write): {mask(one_line(str(err)))}",
        )
    return Finding(True, f"{repo}: Variables read and write ok (the heartbeat's {name})")


def check_statuses(http: GitHubHttp, credentials: Credentials, repo: str, commit: str) -> Finding:
    gh = http.client(credentials.api_auth(repo))
    url = f"{http.api_url}/repos/{repo}/commits/{commit}/statuses"
    try:
        http.call(
            "read statuses", lambda: gh.requester.requestJsonAndCheck("GET", url, parameters={"per_page": 1})
        )
    except GitHubRequestError as err:
        if err.status != 422:  # a commit GitHub does not have yet: the permission is not in question
            return Finding(
                False,
                f"{repo}: statuses cannot be read (Commit statuses read and write): {mask(one_line(str(err)))}",
            )
    return Finding(True, f"{repo}: Commit statuses read ok")


def check_pr_checks(http: GitHubHttp, credentials: Credentials, repo: str, branch: str) -> Finding:
    """``prChecks``: the check runs and the combined status of ``branch`` can be read."""
    gh = http.client(credentials.api_auth(repo))
    base = f"{http.api_url}/repos/{repo}/commits/{branch}"
    for path, needs in (("check-runs", "Checks read"), ("status", "Commit statuses read")):
        read = functools.partial(gh.requester.requestJsonAndCheck, "GET", f"{base}/{path}", {"per_page": 1})
        try:
            http.call(f"read {path}", read)
        except GitHubRequestError as err:
            if err.status != 422:  # a branch GitHub does not have yet: the permission is not in question
                return Finding(
                    False,
                    f"{repo}: the promotion PRs' checks cannot be read ({needs}): prChecks would fail: "
                    f"{mask(one_line(str(err)))}",
                )
    return Finding(True, f"{repo}: Checks read and Commit statuses read ok (prChecks)")


def _pr_checks(pipeline: Pipeline, http: GitHubHttp, credentials: Credentials) -> list[Finding]:
    """Each platform repo with an environment that has ``prChecks``, checked once."""
    found: dict[str, Finding] = {}
    for env in pipeline.environments:
        repo = parse_repo_url(pipeline.platform_of(env))
        if env.pr_checks is not None and repo is not None and repo.full_name not in found:
            found[repo.full_name] = check_pr_checks(http, credentials, repo.full_name, env.gitops_branch)
    return list(found.values())


def check_github(
    cp: ControlPlane, pipeline: Pipeline, commit: str, variable: str, clock: Clock, environ: Mapping[str, str]
) -> list[Finding]:
    """Every check above, for the control plane and each platform repo the Pipeline names, with
    the credentials of ``environ`` (as ``promote`` reads them)."""
    platforms = {}
    for env in pipeline.environments:
        url = pipeline.platform_of(env)
        repo = parse_repo_url(url)
        if repo is None:
            raise UsageError(
                f"{url}: not a GitHub repository URL; --github checks a Pipeline whose platform repo is on GitHub"
            )
        platforms[repo.full_name] = repo
    first = next(iter(platforms.values()))
    control = control_plane_repo(None, environ, cp)
    http = GitHubHttp(github_api_url(None, environ, first), clock)
    credentials = credentials_from_env(http, environ, (*platforms, control))
    findings = []
    origin = cp.origin_url
    if origin:
        needs = "holds, overrides and notification records on refs/promoter/*, a release's promoter-wake"
        findings.append(
            check_contents(cp.git, control, origin, lambda: credentials.token(control), commit, needs)
        )
    findings.append(check_statuses(http, credentials, control, commit))
    findings.append(check_variables(http, credentials, control, variable))
    for name, repo in platforms.items():
        token = functools.partial(credentials.token, name)
        findings.append(check_contents(cp.git, name, repo.git_url, token, commit, "the promotion branches"))
    return [*findings, *_pr_checks(pipeline, http, credentials)]
