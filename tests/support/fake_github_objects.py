"""GitHub REST objects in their real shape (users, repositories, pull requests, labels,
statuses, combined status), for the fake GitHub. Field lists follow the REST API reference
(API version 2022-11-28): whole objects, not the three fields the forge happens to read."""

from __future__ import annotations

from typing import Any


def user(api: str, web: str, login: str, uid: int, kind: str = "User") -> dict[str, Any]:
    return {
        "login": login,
        "id": uid,
        "node_id": f"MDQ6VXNlcj{uid}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
        "gravatar_id": "",
        "url": f"{api}/users/{login}",
        "html_url": f"{web}/{login}",
        "followers_url": f"{api}/users/{login}/followers",
        "following_url": f"{api}/users/{login}/following{{/other_user}}",
        "gists_url": f"{api}/users/{login}/gists{{/gist_id}}",
        "starred_url": f"{api}/users/{login}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/users/{login}/subscriptions",
        "organizations_url": f"{api}/users/{login}/orgs",
        "repos_url": f"{api}/users/{login}/repos",
        "events_url": f"{api}/users/{login}/events{{/privacy}}",
        "received_events_url": f"{api}/users/{login}/received_events",
        "type": kind,
        "user_view_type": "public",
        "site_admin": False,
    }


def repository(api: str, web: str, repo: Any) -> dict[str, Any]:
    """A repository as embedded in a pull request's head and base."""
    name = repo.full_name
    url = f"{api}/repos/{name}"
    owner = user(api, web, repo.owner, 9919, "Organization")
    templated = {
        "assignees_url": f"{url}/assignees{{/user}}",
        "blobs_url": f"{url}/git/blobs{{/sha}}",
        "branches_url": f"{url}/branches{{/branch}}",
        "collaborators_url": f"{url}/collaborators{{/collaborator}}",
        "comments_url": f"{url}/comments{{/number}}",
        "commits_url": f"{url}/commits{{/sha}}",
        "compare_url": f"{url}/compare/{{base}}...{{head}}",
        "contents_url": f"{url}/contents/{{+path}}",
        "git_commits_url": f"{url}/git/commits{{/sha}}",
        "git_refs_url": f"{url}/git/refs{{/sha}}",
        "git_tags_url": f"{url}/git/tags{{/sha}}",
        "issue_comment_url": f"{url}/issues/comments{{/number}}",
        "issue_events_url": f"{url}/issues/events{{/number}}",
        "issues_url": f"{url}/issues{{/number}}",
        "keys_url": f"{url}/keys{{/key_id}}",
        "labels_url": f"{url}/labels{{/name}}",
        "milestones_url": f"{url}/milestones{{/number}}",
        "notifications_url": f"{url}/notifications{{?since,all,participating}}",
        "pulls_url": f"{url}/pulls{{/number}}",
        "releases_url": f"{url}/releases{{/id}}",
        "statuses_url": f"{url}/statuses/{{sha}}",
        "trees_url": f"{url}/git/trees{{/sha}}",
        "archive_url": f"{url}/{{archive_format}}{{/ref}}",
    }
    plain = {
        f"{key}_url": f"{url}/{key}"
        for key in (
            "contributors",
            "deployments",
            "downloads",
            "events",
            "forks",
            "hooks",
            "languages",
            "merges",
            "stargazers",
            "subscribers",
            "subscription",
            "tags",
            "teams",
        )
    }
    host = web.split("://", 1)[1]
    return {
        "id": repo.id,
        "node_id": f"R_kgDO{repo.id}",
        "name": name.split("/")[1],
        "full_name": name,
        "private": True,
        "owner": owner,
        "html_url": f"{web}/{name}",
        "description": None,
        "fork": False,
        "url": url,
        **templated,
        **plain,
        "git_url": f"git://{host}/{name}.git",
        "ssh_url": f"git@{host}:{name}.git",
        "clone_url": f"{web}/{name}.git",
        "svn_url": f"{web}/{name}",
        "homepage": None,
        "size": 108,
        "stargazers_count": 0,
        "watchers_count": 0,
        "language": None,
        "has_issues": True,
        "has_projects": False,
        "has_downloads": True,
        "has_wiki": False,
        "has_pages": False,
        "has_discussions": False,
        "forks_count": 0,
        "mirror_url": None,
        "archived": False,
        "disabled": False,
        "open_issues_count": 0,
        "license": None,
        "allow_forking": False,
        "is_template": False,
        "web_commit_signoff_required": False,
        "topics": [],
        "visibility": "private",
        "forks": 0,
        "open_issues": 0,
        "watchers": 0,
        "default_branch": "main",
        "created_at": "2024-01-01T00:00:00Z",
        "updated_at": "2024-01-01T00:00:00Z",
        "pushed_at": "2024-01-01T00:00:00Z",
    }


def label(api: str, repo: str, name: str, lid: int) -> dict[str, Any]:
    return {
        "id": lid,
        "node_id": f"LA_kwDO{lid}",
        "url": f"{api}/repos/{repo}/labels/{name.replace(':', '%3A')}",
        "name": name,
        "color": "ededed",
        "default": False,
        "description": None,
    }


def _branch(api: str, web: str, repo_json: dict[str, Any], ref: str, sha: str) -> dict[str, Any]:
    owner = repo_json["owner"]["login"]
    return {
        "label": f"{owner}:{ref}",
        "ref": ref,
        "sha": sha,
        "user": repo_json["owner"],
        "repo": repo_json,
    }


def pull_request(
    api: str,
    web: str,
    repo_json: dict[str, Any],
    pr: dict[str, Any],
    *,
    base_sha: str,
    labels: list[dict[str, Any]],
    mergeable: bool | None,
    mergeable_state: str,
    node_id: str,
    listing: bool,
) -> dict[str, Any]:
    """A pull request; ``listing`` drops what GitHub leaves out of list responses."""
    name = repo_json["full_name"]
    number = pr["number"]
    url = f"{api}/repos/{name}/pulls/{number}"
    issue = f"{api}/repos/{name}/issues/{number}"
    html = f"{web}/{name}/pull/{number}"
    author = user(api, web, pr["user"], 41898282, "Bot")
    body: dict[str, Any] = {
        "url": url,
        "id": pr["id"],
        "node_id": node_id,
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": issue,
        "number": number,
        "state": pr["state"],
        "locked": False,
        "title": pr["title"],
        "user": author,
        "body": pr["body"],
        "created_at": pr["created_at"],
        "updated_at": pr["updated_at"],
        "closed_at": pr["closed_at"],
        "merged_at": pr["merged_at"],
        "merge_commit_sha": pr["merge_commit_sha"],
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "labels": labels,
        "milestone": None,
        "draft": pr["draft"],
        "commits_url": f"{url}/commits",
        "review_comments_url": f"{url}/comments",
        "review_comment_url": f"{api}/repos/{name}/pulls/comments{{/number}}",
        "comments_url": f"{issue}/comments",
        "statuses_url": f"{api}/repos/{name}/statuses/{pr['head_sha']}",
        "head": _branch(api, web, repo_json, pr["head"], pr["head_sha"]),
        "base": _branch(api, web, repo_json, pr["base"], base_sha),
        "_links": {
            "self": {"href": url},
            "html": {"href": html},
            "issue": {"href": issue},
            "comments": {"href": f"{issue}/comments"},
            "review_comments": {"href": f"{url}/comments"},
            "review_comment": {"href": f"{api}/repos/{name}/pulls/comments{{/number}}"},
            "commits": {"href": f"{url}/commits"},
            "statuses": {"href": f"{api}/repos/{name}/statuses/{pr['head_sha']}"},
        },
        "author_association": "NONE",
        "auto_merge": pr["auto_merge"],
        "active_lock_reason": None,
    }
    if listing:
        return body
    merged_by = user(api, web, pr["merged_by"], 583231) if pr["merged_by"] else None
    return {
        **body,
        "merged": pr["merged_at"] is not None,
        "mergeable": mergeable,
        "rebaseable": mergeable,
        "mergeable_state": mergeable_state,
        "merged_by": merged_by,
        "comments": pr["comments"],
        "review_comments": 0,
        "maintainer_can_modify": False,
        "commits": 1,
        "additions": 0,
        "deletions": 0,
        "changed_files": 0,
    }


def status_object(
    api: str, web: str, repo: str, sha: str, sid: int, body: dict[str, Any], now: str, by: str
) -> dict[str, Any]:
    creator = user(api, web, by, 41898282, "Bot")
    return {
        "url": f"{api}/repos/{repo}/statuses/{sha}",
        "avatar_url": creator["avatar_url"],
        "id": sid,
        "node_id": f"SC_kwDO{sid}",
        "state": body["state"],
        "description": body.get("description"),
        "target_url": body.get("target_url"),
        "context": body.get("context") or "default",
        "created_at": now,
        "updated_at": now,
        "creator": creator,
    }


def combined_status(
    api: str, repo_json: dict[str, Any], sha: str, latest: list[dict[str, Any]], chunk: list[dict[str, Any]]
) -> dict[str, Any]:
    states = {s["state"] for s in latest}
    if states & {"failure", "error"}:
        state = "failure"
    elif not latest or "pending" in states:
        state = "pending"
    else:
        state = "success"
    name = repo_json["full_name"]
    embedded = {key: value for key, value in repo_json.items() if not key.endswith("_at")}
    return {
        "state": state,
        "statuses": [{k: v for k, v in s.items() if k != "creator"} for s in chunk],
        "sha": sha,
        "total_count": len(latest),
        "repository": embedded,
        "commit_url": f"{api}/repos/{name}/commits/{sha}",
        "url": f"{api}/repos/{name}/commits/{sha}/status",
    }


def github_app(api: str, web: str, slug: str, app_id: int) -> dict[str, Any]:
    """An App as embedded in a check run (GitHub's ``integration``)."""
    owner = user(api, web, "github" if slug == "github-actions" else "org", 9919, "Organization")
    return {
        "id": app_id,
        "client_id": f"Iv1.{app_id:016x}",
        "slug": slug,
        "node_id": f"MDM6QXBw{app_id}",
        "owner": owner,
        "name": "GitHub Actions" if slug == "github-actions" else slug,
        "description": "Automate your workflow from idea to production",
        "external_url": f"{web}/features/actions" if slug == "github-actions" else f"{web}/apps/{slug}",
        "html_url": f"{web}/apps/{slug}",
        "created_at": "2018-07-30T09:30:17Z",
        "updated_at": "2024-04-10T20:33:16Z",
        "permissions": {"checks": "write", "contents": "read", "metadata": "read", "statuses": "write"},
        "events": ["check_run", "check_suite", "pull_request", "push"],
    }


def check_run(
    api: str,
    web: str,
    repo: str,
    run: dict[str, Any],
    app: dict[str, Any],
    pulls: list[dict[str, Any]],
) -> dict[str, Any]:
    """A check run (``GET /repos/{o}/{r}/commits/{ref}/check-runs``), from the fake's record:
    ``run`` holds id, name, head_sha, status, conclusion, suite, started_at, completed_at."""
    rid = run["id"]
    url = f"{api}/repos/{repo}/check-runs/{rid}"
    done = run["status"] == "completed"
    return {
        "id": rid,
        "name": run["name"],
        "node_id": f"CR_kwDO{rid}",
        "head_sha": run["head_sha"],
        "external_id": str(rid),
        "url": url,
        "html_url": f"{web}/{repo}/runs/{rid}",
        "details_url": f"{web}/{repo}/actions/runs/{rid}/job/{rid}",
        "status": run["status"],
        "conclusion": run["conclusion"],
        "started_at": run["started_at"],
        "completed_at": run["completed_at"],
        "output": {
            "title": run["conclusion"] if done else None,
            "summary": run.get("summary") or None,
            "text": None,
            "annotations_count": 0,
            "annotations_url": f"{url}/annotations",
        },
        "check_suite": {"id": run["suite"]},
        "app": app,
        "pull_requests": pulls,
    }


def check_run_pull(api: str, repo_id: int, repo: str, pr: dict[str, Any], base_sha: str) -> dict[str, Any]:
    """A pull request as a check run lists it: number and the heads, no more."""
    brief = {"id": repo_id, "url": f"{api}/repos/{repo}", "name": repo.split("/")[1]}
    return {
        "url": f"{api}/repos/{repo}/pulls/{pr['number']}",
        "id": pr["id"],
        "number": pr["number"],
        "head": {"ref": pr["head"], "sha": pr["head_sha"], "repo": brief},
        "base": {"ref": pr["base"], "sha": base_sha, "repo": brief},
    }
