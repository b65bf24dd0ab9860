"""Crash and resume on the github forge, and the secrets scan, with real promoter processes.

The promoter runs as a subprocess against the fake GitHub served over loopback HTTP
(``tests/support/fake_github_server.py``). ``tests/support/killhook_github.py`` SIGKILLs it right after one side
effect (the render commit, a push, a PR create, label or update, a merge, a status, the gate
report, a gate check), or a gate command kills it mid-gate; a rerun must then finish with one
merged PR per environment, one merge per platform branch, true statuses and provenance naming
the main commit. Git goes straight to the bare platform repo there (``url.<repo>.insteadOf``):
what matters is where the process dies, and git over HTTP nearly doubles a run's time.

The secrets scan uses the same setup with git over HTTP to the fake's loopback git server,
which refuses any request without the token as an ``Authorization`` header: no token (or App
key, or minted App token) in any output, file, git object, config, crash log, command line,
URL or GitHub object.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support import forkserver
from tests.support.fake_github import FakeGitHub, GitServer
from tests.support.fake_github_server import FakeGitHubServer
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage
from tests.support.paths import ROOT

P, CP = "org/platform", "org/control-plane"
TOKEN = "ghp_crashTOKENcrashTOKENcrash00000007"
APP_ID = "31337"
ENVS = ("dev", "qa", "prod")
PR_ENVS = ("dev", "qa")
# dev: a PR and Flux's statuses; qa: a PR and a command the test steers with two files;
# prod: merge: direct.
PIPELINE = pipeline(
    stage("dev", gates='[{commitStatus: {contexts: ["kustomization/*"], interval: 10s}}]'),
    stage("qa", gates="[{command: {run: 'GATE', shell: true}}]"),
    stage("prod", merge="direct"),
    platform="{url: GIT/org/platform, forge: github}",
)
GATE = (
    "if [ -e ARMED ]; then rm ARMED; kill -9 $PPID; sleep 1; fi; "
    'if [ -e FAILING ]; then echo "unhealthy $PROMOTER_GITHUB_TOKEN $PROMOTER_GITHUB_APP_PRIVATE_KEY" >&2; exit 1; fi; '
    "echo healthy"
)


class Reconciler:
    """Flux on the platform repo, as a ``FakeGitHub`` hook: a commit gets its
    ``kustomization/...`` success once the promoter has looked at it once, so the first gate
    check of every merge is pending and the second passes."""

    def __init__(self) -> None:
        self.reads: dict[str, int] = {}

    def __call__(self, fake: FakeGitHub, method: str, path: str) -> bool:
        match = re.fullmatch(rf"/repos/{P}/commits/(\w+)/statuses", path)
        if method == "GET" and match:
            sha = match.group(1)
            self.reads[sha] = self.reads.get(sha, 0) + 1
            if self.reads[sha] == 2:
                fake.post_status(P, sha, "kustomization/flux-system/apps", "success", "Applied revision")
        return False  # it keeps watching


@dataclass
class Served:
    """A control plane and a platform repo on the fake GitHub, served over loopback HTTP."""

    api: FakeGitHubServer
    git: GitServer
    factory: ControlPlaneFactory
    control_plane: Path
    tmp: Path
    env: dict[str, str] = field(default_factory=dict)  # credentials and git settings of each run

    @property
    def fake(self) -> FakeGitHub:
        return self.api.fake

    @property
    def armed(self) -> Path:
        """While this file exists, qa's gate command SIGKILLs the promoter (once)."""
        return self.tmp / "armed"

    @property
    def failing(self) -> Path:
        """While this file exists, qa's gate command fails."""
        return self.tmp / "failing"

    def run(self, kind: str, n: int, *args: str) -> subprocess.CompletedProcess[str]:
        """``promoter ARGS`` in a new process under ``tests.support.killhook_github KIND N``."""
        return forkserver.run(
            "tests.support.killhook_github", [kind, str(n), *args], cwd=ROOT, env={**os.environ, **self.env}
        )

    def promote(self, kill: tuple[str, int] = ("none", 0), *extra: str) -> subprocess.CompletedProcess[str]:
        return self.run(*kill, "promote", *self.options(), "--poll-interval", "5s", *extra)

    def options(self) -> list[str]:
        return [
            "--control-plane",
            str(self.control_plane),
            "--github-api-url",
            self.api.api_url,
            "--control-plane-repo",
            CP,
        ]

    def prs(self, env: str) -> list[dict[str, Any]]:
        return [p for p in self.fake.prs(P) if p["base"]["ref"] == env]

    def main(self) -> str:
        return git(self.control_plane, "rev-parse", "main").strip()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def serve(factory: ControlPlaneFactory, tmp: Path, git_token: str | Callable[[str], bool]) -> Served:
    api = FakeGitHubServer(tokens=(TOKEN,))
    gitd = GitServer({"/org/platform.git": factory.platform}, token=git_token)
    gate = GATE.replace("ARMED", str(tmp / "armed")).replace("FAILING", str(tmp / "failing"))
    pipeline = PIPELINE.replace("GIT", gitd.url).replace("GATE", gate)
    path = factory.create({"promoter.yaml": pipeline, "workloads/app.yaml": WORKLOAD}, platform_branches=ENVS)
    api.fake.add_repo(P, factory.platform)
    api.fake.add_repo(CP, path)
    api.fake.hooks.append(Reconciler())
    env = {"GIT_HTTP_LOW_SPEED_LIMIT": "1000", "GIT_HTTP_LOW_SPEED_TIME": "5"}
    return Served(api, gitd, factory, path, tmp, env)


@pytest.fixture
def served(factory: ControlPlaneFactory, tmp_path: Path) -> Iterator[Served]:
    """Git straight to the bare repo: a rewrite of the git server's URL, as a proxy would."""
    world = serve(factory, tmp_path, TOKEN)
    world.env.update(
        {
            "PROMOTER_GITHUB_TOKEN": TOKEN,
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": f"url.{factory.platform}.insteadOf",
            "GIT_CONFIG_VALUE_0": f"{world.git.url}/org/platform.git",
        }
    )
    yield world
    world.api.stop()
    world.git.stop()


def assert_finished(served: Served, x: str) -> None:
    """One merged PR per PR environment and none open; one merge per platform branch; X's
    statuses true and never failed; provenance naming X and every rendered file on each branch."""
    platform = served.factory.platform
    for env in PR_ENVS:
        prs = served.prs(env)
        assert [p["merged"] for p in prs] == [True], (env, prs)
        merges = git(platform, "rev-list", "--first-parent", "--merges", env).split()
        assert merges == [prs[0]["merge_commit_sha"]], (env, merges)
    assert served.prs("prod") == []  # merge: direct
    assert len(git(platform, "rev-list", "--first-parent", "prod").split()) == 2  # the seed, then X
    for env, target in zip(ENVS, ("t", "t2", "t3"), strict=True):
        assert f"mainCommit: {x}" in git(platform, "show", f"{env}:.promoter/promotion.yaml")
        assert git(platform, "ls-tree", "-r", "--name-only", env).split() == [
            ".github/CODEOWNERS",
            ".promoter/promotion.yaml",
            "README.md",
            f"small/app-{target}/namespace.yaml",
            f"small/app-{target}/platform-config.yaml",
            f"small/app-{target}/reconciler.yaml",
        ]
    latest = served.fake.latest_statuses(CP, x)
    assert {c: s["state"] for c, s in latest.items()} == {f"promoter/{e}": "success" for e in ENVS}
    history = served.fake.statuses.get((CP, x), [])
    assert not [s for s in history if s["state"] in ("failure", "error")], history


# The side effects of one clean run, in order. dev: render, push promoter/dev, create PR, label,
# status 1 (PR open), merge, status 2 (merged), gate check (pending), gate check (success),
# comment (the gate report), status 3 (success). qa the same with its command gate (statuses
# 4-6). prod (direct): render, push promoter/prod, push prod, status 7 (pushed), status 8.
# Every write of a run is tried, one after another, by the chain test below: the state a kill
# leaves is the same whether the run it ends started clean or resumed. Here, from a clean start,
# the points the chain cannot reach: a render and a gate check (no writes), the "merged" status
# (a resumed run skips it), and prod's render and "pushed" status (no PR there).
KILL_POINTS = [("render", 1), ("status", 2), ("gate", 1), ("render", 3), ("status", 7)]


@pytest.mark.parametrize(("kind", "n"), KILL_POINTS, ids=[f"{k}-{n}" for k, n in KILL_POINTS])
def test_sigkill_after_each_side_effect_then_rerun_finishes(served: Served, kind: str, n: int) -> None:
    x = served.main()
    killed = served.promote((kind, n))
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    rerun = served.promote()
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert_finished(served, x)


def test_sigkill_after_every_write_in_turn_then_rerun_finishes(served: Served, tmp_path: Path) -> None:
    """Run k resumes what run k-1 left and dies right after the next write to GitHub (a push,
    a PR request, a status) that no run has died after yet, until no write is left."""
    x = served.main()
    log, trace = tmp_path / "kills.log", tmp_path / "writes.log"
    served.env.update(KILLHOOK_LOG=str(log), KILLHOOK_TRACE=str(trace))
    runs = []
    for _ in range(40):
        runs.append(served.promote(("write", 1)))
        if runs[-1].returncode != -signal.SIGKILL:
            break
    last = runs[-1]
    assert last.returncode == 0, last.stdout + last.stderr
    kills = log.read_text().splitlines()
    assert len(kills) == len(runs) - 1 == len(set(kills))
    # A run resumed after a merge goes straight to the gates: no "merged" status (the kill
    # point status-2 above tries that one), but it finds the merged PR and comments the gate
    # report there; after prod's push it posts success once its gates pass (status-7 above).
    assert [line.split("\t")[0] for line in kills] == [
        *("push", "create_pr", "label", "status", "merge", "comment", "status"),  # dev
        *("push", "create_pr", "label", "status", "merge", "comment", "status"),  # qa
        *("push", "push", "status"),  # prod: promoter/prod, then prod itself
    ], kills
    # A resumed run repeats no write but the "PR open" status it posts when it finds its PR,
    # and the gate report comment of a run that died right after posting it.
    writes = [w for w in trace.read_text().splitlines() if not w.startswith(("render\t", "gate\t"))]
    repeated = sorted({w.split(": ")[0] for w in writes if writes.count(w) > 1})
    assert repeated == [
        "comment\tcomment on PR (dev)",
        "comment\tcomment on PR (qa)",
        "status\tpromoter/dev pending",
        "status\tpromoter/qa pending",
    ], writes
    assert_finished(served, x)


def test_sigkill_while_a_gate_command_runs_then_rerun_finishes(served: Served) -> None:
    x = served.main()
    served.armed.touch()
    killed = served.promote()
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert not served.armed.exists()  # qa's gate command was running when the promoter died
    assert "qa: gates on" in killed.stdout and "qa: success" not in killed.stdout
    rerun = served.promote()
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert_finished(served, x)


def test_sigkill_after_a_pr_update_then_rerun_finishes_the_newer_commit(served: Served) -> None:
    x = served.main()
    assert served.promote(("status", 1)).returncode == -signal.SIGKILL  # X's dev PR is open, pending
    y = served.factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("./dev", "./dev-y")}, "y", keep=True
    )
    killed = served.promote(("update_pr", 1))  # Y takes X's PR over
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert served.fake.calls("update_pr")
    rerun = served.promote()
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert_finished(served, y)
    (pr,) = served.prs("dev")
    assert pr["title"].startswith(f"Promote {y[:7]} to dev")
    assert served.fake.latest_statuses(CP, x)["promoter/dev"]["state"] == "error"
    assert f"superseded by {y[:12]}" in served.fake.latest_statuses(CP, x)["promoter/dev"]["description"]


# ------------------------------------------------------------------ secrets


def basic(token: str) -> str:
    return base64.b64encode(f"x-access-token:{token}".encode()).decode()


def app_key() -> tuple[str, Any]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return pem, key.public_key()


def found(text: str, secrets: list[str]) -> list[str]:
    return [secret[:12] + "..." for secret in secrets if secret in text]


def repo_text(repo: Path) -> str:
    """Every object of a repo, decompressed (packed or loose), and its config."""
    objects = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
        env={**os.environ, "GIT_NO_LAZY_FETCH": "1"},
    ).stdout
    config = repo / "config" if (repo / "config").is_file() else repo / ".git" / "config"
    return objects.decode("utf-8", "replace") + config.read_text()


def files_text(root: Path) -> dict[str, str]:
    return {
        str(path): path.read_bytes().decode("utf-8", "replace") for path in root.rglob("*") if path.is_file()
    }


@pytest.mark.parametrize("auth", ["token", "app"])
def test_no_secret_in_any_output_file_object_url_or_command_line(
    factory: ControlPlaneFactory, tmp_path: Path, auth: str
) -> None:
    """A success, a bad input, a failed gate, a token git refuses, a crash and ``promoter
    status``, with git over HTTP to a server that wants the token as a header."""
    world = serve(factory, tmp_path, TOKEN)
    crash_dir, argv_log = tmp_path / "tmp", tmp_path / "argv.log"
    crash_dir.mkdir()
    world.env.update(TMPDIR=str(crash_dir), KILLHOOK_ARGV_LOG=str(argv_log))
    if auth == "token":
        world.env["PROMOTER_GITHUB_TOKEN"] = TOKEN
        secrets = [TOKEN, basic(TOKEN)]
    else:
        pem, public = app_key()
        world.fake.app = (int(APP_ID), public)
        world.git.token = lambda token: token in world.fake.installation_tokens
        world.env.update(PROMOTER_GITHUB_APP_ID=APP_ID, PROMOTER_GITHUB_APP_PRIVATE_KEY=pem)
        secrets = [line for line in pem.splitlines() if not line.startswith("-----")]
    accepts = world.git.token
    try:
        pipeline = git(world.control_plane, "show", "main:promoter.yaml")
        factory.commit(
            "broken", {"promoter.yaml": pipeline, "workloads/app.yaml": "kind: [unclosed\n"}, "bad"
        )
        results = {"bad input": world.promote(("none", 0), "--commit", "broken")}
        results["success"] = world.promote()
        factory.commit("main", {"workloads/app.yaml": WORKLOAD.replace("./qa", "./qa-y")}, "y", keep=True)
        world.failing.touch()
        results["failed gate"] = world.promote()
        world.failing.unlink()
        factory.commit("main", {"workloads/app.yaml": WORKLOAD.replace("./dev", "./dev-z")}, "z", keep=True)
        world.git.token = lambda token: False
        results["refused by git"] = world.promote()
        world.git.token = accepts
        results["crash"] = world.promote(("crash", 1))
        results["status"] = world.run("none", 0, "status", *world.options(), "--output", "json")
    finally:
        world.api.stop()
        world.git.stop()

    codes = {name: r.returncode for name, r in results.items()}
    assert codes == {
        "bad input": 2,
        "success": 0,
        "failed gate": 1,
        "refused by git": 1,
        "crash": 3,
        "status": 0,
    }, {name: r.stdout + r.stderr for name, r in results.items()}
    assert "qa: FAILED" in results["failed gate"].stdout
    assert "Authentication failed" in results["refused by git"].stderr
    minted = sorted(world.fake.installation_tokens)
    assert bool(minted) == (auth == "app")
    jwts = [r.headers["Authorization"].split(" ", 1)[1] for r in world.fake.calls("app")]
    secrets += minted + [basic(t) for t in minted] + jwts
    given = [TOKEN] if auth == "token" else minted

    places: dict[str, str] = {}
    for name, result in results.items():
        places[f"{name}: stdout"], places[f"{name}: stderr"] = result.stdout, result.stderr
    logs = [Path(p) for p in re.findall(r"traceback is in (\S+)", results["crash"].stderr)]
    assert len(logs) == 1 and logs[0].parent == crash_dir
    cache = Path(os.environ["PROMOTER_CACHE_DIR"])
    places.update(files_text(tmp_path))  # repos, crash logs, the command lines
    places.update(files_text(cache.parent))  # the platform cache and HOME
    repos = [world.control_plane / ".git", factory.platform, *(cache / "platform").glob("*.git")]
    assert len(repos) == 3
    places.update({f"objects of {repo}": repo_text(repo) for repo in repos})
    # GitHub's side: URLs, headers other than the credentials, and what the promoter wrote there
    places["API URLs and headers"] = json.dumps(
        [
            [r.path, r.query, {k: v for k, v in r.headers.items() if k != "Authorization"}]
            for r in world.fake.requests
        ]
    )
    places["PRs, comments, statuses"] = json.dumps(
        [list(world.fake.pulls.values()), list(world.fake.statuses.values())], default=str
    )
    places["git URLs"] = json.dumps([[e["path"], e["query"]] for e in world.git.log])
    leaks = {where: found(text, secrets) for where, text in places.items() if found(text, secrets)}
    assert not leaks, leaks
    assert "RuntimeError: crashed after push promoter/dev with ***" in logs[0].read_text()

    # git got the token as a header on every request, never on a command line
    assert {e["authorization"] for e in world.git.log} <= {f"Basic {basic(t)}" for t in given}
    assert any(e["path"].endswith("/git-receive-pack") for e in world.git.log)
    argv = [json.loads(line) for line in argv_log.read_text().splitlines()]
    assert any(a[:1] == ["git"] and "push" in a for a in argv)
    api = {r.headers.get("Authorization", "") for r in world.fake.requests if r.call != "app"}
    # the API got only tokens it was given (a run stopped by bad input may mint one for git alone)
    assert api and api <= {f"token {t}" for t in given}
