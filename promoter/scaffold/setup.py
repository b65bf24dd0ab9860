"""What ``promoter init`` writes for: the promoter's copy and the commit to pin (a tag looked up
to its SHA), the environments and their branches (from ``--environments``, else the Pipeline)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable

import yaml

from promoter.controlplane.documents import PIPELINE_FILE
from promoter.controlplane.repo import ControlPlane
from promoter.errors import UsageError
from promoter.gitcmd import Git, valid_branch
from promoter.scaffold.workflows import Follows, Setup, upstreams_of

REPO = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
SHA = re.compile(r"[0-9a-f]{40}")
TAG = re.compile(r"v?[0-9][0-9A-Za-z._+-]{0,100}")
ENV_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def setup_of(
    repo: str,
    ref: str,
    tag: str | None,
    auth: str,
    environments: str | None,
    main: str,
    private: bool,
    note: Callable[[str], None],
) -> Setup:
    """What ``init``'s flags ask for, checked; ``note``: where to say what was looked up (a tag's
    commit, the Pipeline's environments)."""
    if not REPO.fullmatch(repo) or repo.split("/")[1] in (".", ".."):
        raise UsageError(f"--promoter-repo {repo!r}: not a GitHub repository OWNER/NAME")
    ref, tag = _pin(repo, ref, tag, note)
    if not valid_branch(main) or not _plain(main):
        raise UsageError(
            f"--main-branch {main!r}: not a plain branch name (letters, digits, '.', '_', '/', '-')"
        )
    names, branches, follows = _environments(environments, main, note)
    if main in branches:
        raise UsageError(f"--main-branch {main!r}: an environment's branch too")
    return Setup(repo, ref, tag, names, main, auth, private, branches if branches != names else (), follows)


def _pin(repo: str, ref: str, tag: str | None, note: Callable[[str], None]) -> tuple[str, str | None]:
    """The commit to pin and its tag: ``ref`` a full SHA (``tag`` its tag, if given), or a
    release tag looked up to its commit."""
    ref = ref.lower() if SHA.fullmatch(ref.lower()) else ref
    if not SHA.fullmatch(ref):
        _check_tag_ref(ref, tag)
        ref, tag = _tag_commit(repo, ref, note), ref
    if tag is not None and not _tag_like(tag):
        raise UsageError(f"--tag {tag!r}: not a version tag (such as v0.1.0)")
    return ref, tag


def _check_tag_ref(ref: str, tag: str | None) -> None:
    """A ``--ref`` that is no full SHA: a version tag, without ``--tag``."""
    if re.fullmatch(r"[0-9a-fA-F]{7,39}", ref):
        raise UsageError(f"--ref {ref}: a short SHA; give the commit's full 40-character SHA")
    if not _tag_like(ref):
        raise UsageError(
            f"--ref {ref!r}: not a full commit SHA or a version tag (a branch moves): "
            "git rev-parse 'v0.1.0^{commit}' in your copy gives the SHA to pin"
        )
    if tag is not None:
        raise UsageError("--tag goes with a SHA in --ref: it names the tag of that commit")


def _tag_commit(repo: str, tag: str, note: Callable[[str], None]) -> str:
    """The commit SHA of release tag ``tag`` of ``repo`` on GitHub ($GITHUB_SERVER_URL, else
    github.com): a tag can move, the SHA cannot (zizmor's unpinned-uses), so the workflows pin the
    SHA with the tag in a comment. An annotated tag is followed to its commit."""
    server = os.environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    url = f"{server}/{repo}.git"
    refs = [f"refs/tags/{tag}", f"refs/tags/{tag}^{{}}"]
    listed = Git(".").run("ls-remote", operands=[url, *refs], check=False, env={"GIT_TERMINAL_PROMPT": "0"})
    found: dict[str, str] = {}
    for line in listed.stdout.decode().splitlines():
        sha_of, _, name = line.partition("\t")
        found[name] = sha_of
    sha = found.get(refs[1]) or found.get(refs[0])
    if listed.returncode != 0 or sha is None:
        why = listed.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no such tag"]
        raise UsageError(
            f"--ref {tag}: cannot find the tag's commit at {url} ({why[0]}); give its full SHA: "
            f"--ref $(git rev-parse '{tag}^{{commit}}') --tag {tag} in your copy of the promoter"
        )
    note(f"--ref {tag}: pinned as its commit {sha}")
    return sha


def local_environments(flag: str | None, main: str) -> tuple[tuple[str, ...], tuple[str, ...], Follows]:
    """``init --local``'s environments: ``--environments``, checked as for the workflows, else
    dev, qa and prod (no Pipeline is read: the repos are new)."""
    return _environments(flag or "dev,qa,prod", main, lambda line: None)


def _environments(
    flag: str | None, main: str, note: Callable[[str], None]
) -> tuple[tuple[str, ...], tuple[str, ...], Follows]:
    """The environments' names, branches and what each follows where that is not the one listed
    before it: from ``--environments`` (``prod-eu:staging``, ``edge:prod-eu+prod-us``), else the
    Pipeline, else dev, qa and prod."""
    if flag is None:
        found = _pipeline(main, note)
        if found is not None:
            return found
    entries = [item.strip().partition(":") for item in (flag or "dev,qa,prod").split(",")]
    names = tuple(name.strip() for name, _, _ in entries)
    _check_names(names, flag)
    follows = tuple(
        (name.strip(), tuple(u.strip() for u in ups.split("+"))) for name, colon, ups in entries if colon
    )
    _check_follows(names, follows)
    _no_cycle(names, follows)
    return names, names, follows


def _check_names(names: tuple[str, ...], flag: str | None) -> None:
    for name in names:
        if not ENV_NAME.fullmatch(name) or yaml.safe_load(name) != name:
            raise UsageError(
                f"--environments: {name!r} is not an environment name: lowercase letters, digits and '-', "
                "at most 63, and not a word YAML reads as a boolean or number"
            )
    if len(set(names)) != len(names):
        raise UsageError(f"--environments {flag!r}: an environment is named twice")


def _check_follows(names: tuple[str, ...], follows: Follows) -> None:
    """Each environment follows others of the list, never itself."""
    for name, ups in follows:
        for up in ups:
            if up not in names or up == name:
                raise UsageError(
                    f"--environments: {name} follows {up!r}, "
                    + ("itself" if up == name else f"not one of {', '.join(names)}")
                )


def _no_cycle(names: tuple[str, ...], follows: Follows) -> None:
    ups = upstreams_of(names, follows)
    done: set[str] = set()
    while len(done) < len(names):
        ready = {n for n in names if n not in done and set(ups[n]) <= done}
        if not ready:
            stuck = ", ".join(n for n in names if n not in done)
            raise UsageError(f"--environments: a cycle: no commit could ever reach {stuck}")
        done |= ready


def _pipeline(
    main: str, note: Callable[[str], None]
) -> tuple[tuple[str, ...], tuple[str, ...], Follows] | None:
    """The environments of the Pipeline at the head of ``main`` (local, else origin's; nothing is
    fetched) in the working directory's repo, or None without one."""
    head = _pipeline_head(main)
    if head is None:
        return None
    pipeline = ControlPlane(".", main, label="the working directory").main(head).pipeline
    names = tuple(env.name for env in pipeline.environments)
    branches = tuple(env.branch for env in pipeline.environments)
    follows = tuple((env.name, env.follows) for env in pipeline.environments if env.follows is not None)
    odd = [b for b in branches if not _plain(b)]
    if odd:
        raise UsageError(
            f"{PIPELINE_FILE}: branch {odd[0]!r}: the workflows take plain branch names "
            "(letters, digits, '.', '_', '/', '-'); give --environments to choose"
        )
    note(f"environments from {main}:{PIPELINE_FILE} at {head[:12]}: {', '.join(names)}")
    return names, branches, follows


def _pipeline_head(main: str) -> str | None:
    """The head of ``main`` in the working directory's repo when it holds a Pipeline, else None."""
    git = Git(".")
    if not git.ok("rev-parse", "--git-dir"):
        return None
    head = git.commit_of(f"refs/heads/{main}") or git.commit_of(f"refs/remotes/origin/{main}")
    if head is None or git.read_file(head, PIPELINE_FILE) is None:
        return None
    return head


def _plain(branch: str) -> bool:
    """A branch name that is the same text in YAML, in a flow list and in an expression string."""
    return bool(re.fullmatch(r"[A-Za-z0-9._/-]+", branch)) and yaml.safe_load(branch) == branch


def _tag_like(name: str) -> bool:
    return bool(TAG.fullmatch(name)) and valid_branch(name) and not name.endswith((".", ".lock"))
