"""Verified commits on the github forge, through the CLI, against the fake GitHub's git database:
promotion commits made by GitHub for an App (signed, "Verified"), refused for a token; merges
left as GitHub's merge API made them; the main commit verified by GitHub."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from promoter.cli.main import cli
from promoter.forges.github.commits import Verification, rebuilt
from promoter.forges.github.shapes import MalformedAnswer
from promoter.gitcmd import Git
from tests.support.fake_github import World, make_world
from tests.support.fake_github import pipeline as world_pipeline
from tests.support.fake_github_commits import APP_BOT, GitDatabase
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, stage
from tests.support.helpers import pipeline as build_pipeline
from tests.support.signing_keys import ssh_key

P = "org/platform"


def _app(world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A GitHub App's credentials for the run, and the fake knowing the App."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    world.fake.app = (123, key.public_key())
    monkeypatch.delenv("PROMOTER_GITHUB_TOKEN", raising=False)
    monkeypatch.setenv("PROMOTER_GITHUB_APP_ID", "123")
    monkeypatch.setenv("PROMOTER_GITHUB_APP_PRIVATE_KEY", pem)


def _with_signatures(
    factory: ControlPlaneFactory, world: World, signatures: str, pipeline: str | None = None
) -> str:
    """Main with ``signatures`` in its Pipeline (by default the world's); its sha."""
    text = (pipeline or world_pipeline(qa="direct", prod="direct")) + f"  signatures: {signatures}\n"
    return factory.commit("main", {"promoter.yaml": text, "workloads/app.yaml": WORKLOAD}, "sign")


@pytest.fixture
def world(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[World]:
    w = make_world(factory, monkeypatch, prod="direct", qa="direct")
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/control-plane")
    yield w
    w.close()


@pytest.fixture
def database(world: World, tmp_path: Path) -> GitDatabase:
    return GitDatabase(world.fake, tmp_path / "github-keys").serve()


def _promote(world: World, *args: str) -> Result:
    command = ["promote", "--control-plane", str(world.control_plane), "--poll-interval", "5s", *args]
    return CliRunner().invoke(cli, command)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _verified(repo: Path, database: GitDatabase, sha: str) -> tuple[str, str]:
    """git's own verdict on ``sha`` against GitHub's signing key, and its author."""
    verdict = _git(
        repo, "-c", f"gpg.ssh.allowedSignersFile={database.allowed}", "log", "-1", "--format=%G?", sha
    )
    return verdict, _git(repo, "log", "-1", "--format=%an <%ae>", sha)


def test_an_apps_promotion_commits_are_made_and_signed_by_github(
    world: World,
    database: GitDatabase,
    factory: ControlPlaneFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    _app(world, monkeypatch, tmp_path)
    _with_signatures(factory, world, "{commits: github}")

    result = _promote(world)

    assert result.exit_code == 0, result.output
    platform = world.platform
    made = [r for r in world.fake.calls("git_commit")]
    assert [(r.method, r.status) for r in made] == [("POST", 201)] * 3  # dev, qa, prod: one each
    bot = f"{APP_BOT[0]} <{APP_BOT[1]}>"
    dev_head = _git(platform, "rev-parse", "promoter/dev")
    assert _verified(platform, database, dev_head) == ("G", bot)
    # dev merged by GitHub's merge API: its merge commit is GitHub's own, not made again
    assert _git(platform, "rev-parse", "dev^2") == dev_head
    assert _git(platform, "rev-parse", "dev") == world.platform_prs[0]["merge_commit_sha"]
    assert _git(platform, "log", "-1", "--format=%s", "dev") == "Merge pull request #1 from org/promoter/dev"
    # qa and prod are merge: direct: the branch is GitHub's signed commit itself
    for env in ("qa", "prod"):
        assert _verified(platform, database, _git(platform, "rev-parse", env)) == ("G", bot)
        assert _git(platform, "rev-parse", env) == _git(platform, "rev-parse", f"promoter/{env}")
    assert _git(platform, "for-each-ref", "refs/promoter/") == ""  # every staging ref deleted
    deleted = [(r.method, r.path, r.status) for r in world.fake.calls("git_ref")]
    assert [d[0] for d in deleted] == ["DELETE"] * 3 and all(d[2] == 204 for d in deleted)
    assert all(d[1].startswith(f"/repos/{P}/git/refs/promoter/staging/") for d in deleted)


def test_a_rerun_reuses_githubs_commit_on_the_promotion_branch(
    world: World,
    database: GitDatabase,
    factory: ControlPlaneFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    _app(world, monkeypatch, tmp_path)
    manual = build_pipeline(
        stage("dev", merge="manual"), "qa", "prod", platform="{url: https://github.com/org/platform}"
    )
    _with_signatures(factory, world, "{commits: github}", manual)
    first = _promote(world, "--wait", "none")
    assert first.exit_code == 0, first.output
    assert len(world.fake.calls("git_commit")) == 1  # dev's PR waits for a person
    dev = _git(world.platform, "rev-parse", "promoter/dev")
    assert _verified(world.platform, database, dev)[0] == "G"

    again = _promote(world, "--wait", "none")

    assert again.exit_code == 0, again.output
    assert f"dev: promoter/dev is already at this promotion ({dev[:12]})" in again.output
    assert len(world.fake.calls("git_commit")) == 1  # nothing made again
    assert world.platform_prs[0]["head"]["sha"] == dev


def test_a_tokens_api_commit_is_not_signed_and_nothing_is_pushed(
    world: World, database: GitDatabase, factory: ControlPlaneFactory
) -> None:
    _with_signatures(factory, world, "{commits: github}")
    before = _git(world.platform, "for-each-ref")

    result = _promote(world)

    assert result.exit_code == 2, result.output
    error = next(line for line in result.output.splitlines() if line.startswith("error: "))
    assert error == (
        "error: promoter.yaml: spec.signatures.commits: github: GitHub did not sign the promotion commit it "
        f"made on {P} (verification: unsigned: the commit is not signed); GitHub signs the API commits of a "
        "GitHub App (PROMOTER_GITHUB_APP_ID), not a token's: use an App, or signatures.commits: git"
    )
    assert _git(world.platform, "for-each-ref") == before  # the staging ref deleted, no branch moved


def test_githubs_commit_is_fetched_when_its_payload_does_not_rebuild_it(
    world: World,
    database: GitDatabase,
    factory: ControlPlaneFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    _app(world, monkeypatch, tmp_path)
    _with_signatures(factory, world, "{commits: github}")
    database.break_payload = True

    result = _promote(world)

    assert result.exit_code == 0, result.output
    moved = [r for r in world.fake.calls("git_ref") if r.method == "PATCH"]
    assert len(moved) == 3  # the staging ref pointed at GitHub's commit, fetched from there
    assert _verified(world.platform, database, _git(world.platform, "rev-parse", "qa"))[0] == "G"
    assert _git(world.platform, "for-each-ref", "refs/promoter/") == ""


def test_githubs_verification_of_the_main_commit(
    world: World, database: GitDatabase, factory: ControlPlaneFactory, tmp_path: Path
) -> None:
    alice = ssh_key(tmp_path / "keys", "alice", "alice@example.com")
    database.register(alice)
    unsigned = _with_signatures(factory, world, "{verifyMain: github}")

    refused = _promote(world)

    assert refused.exit_code == 2, refused.output
    error = next(line for line in refused.output.splitlines() if line.startswith("error: "))
    assert error == (
        f"error: promoter.yaml:1: spec.signatures.verifyMain: github: main commit {unsigned[:12]} is not "
        "promoted: unsigned: the commit is not signed"
    )
    assert (
        world.fake.calls("create_pr") == []
        and _git(world.platform, "for-each-ref", "refs/heads/promoter/") == ""
    )

    git = [
        "git",
        "-C",
        str(world.control_plane),
        "-c",
        "gpg.format=ssh",
        "-c",
        f"user.signingkey={alice.private}",
    ]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-S", "-m", "signed by alice"], check=True)
    signed = _git(world.control_plane, "rev-parse", "main")

    accepted = _promote(world)

    assert accepted.exit_code == 0, accepted.output
    assert (
        f"main {signed[:12]}: signature verified (GitHub (valid: the signature is valid))" in accepted.output
    )
    asked = [r.path for r in world.fake.calls("get_commit")]
    assert asked == [
        f"/repos/org/control-plane/commits/{unsigned}",
        f"/repos/org/control-plane/commits/{signed}",
    ]


def test_an_unknown_key_is_githubs_reason(
    world: World, database: GitDatabase, factory: ControlPlaneFactory, tmp_path: Path
) -> None:
    mallory = ssh_key(tmp_path / "keys", "mallory", "mallory@example.com")
    _with_signatures(factory, world, "{verifyMain: github}")
    git = [
        "git",
        "-C",
        str(world.control_plane),
        "-c",
        "gpg.format=ssh",
        "-c",
        f"user.signingkey={mallory.private}",
    ]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-S", "-m", "signed by mallory"], check=True)

    result = _promote(world)

    assert result.exit_code == 2, result.output
    assert result.output.rstrip().endswith(
        "is not promoted: unknown_key: the key that made the signature is on no GitHub account"
    )


def test_an_answer_without_verification_is_malformed() -> None:
    with pytest.raises(MalformedAnswer) as caught:
        Verification.of(
            {"sha": "a" * 40, "verification": {"verified": "yes"}}, "POST /repos/org/platform/git/commits"
        )
    assert str(caught.value) == (
        "GitHub answered POST /repos/org/platform/git/commits with no verification object (verified, reason)"
    )
    assert caught.value.exit_code == 1


def test_githubs_payload_and_signature_make_the_signed_commit_again(tmp_path: Path) -> None:
    key = ssh_key(tmp_path / "keys")
    repo = tmp_path / "repo.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    git = Git(repo)
    tree = git.out("mktree", input=b"")
    signing = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key.private}"]
    proc = subprocess.run(
        ["git", "-C", str(repo), *signing, "commit-tree", "-S", "-m", "Promote abc to dev", tree],
        capture_output=True,
        text=True,
        check=True,
    )
    sha = proc.stdout.strip()
    raw = git.out("cat-file", "commit", sha) + "\n"
    head, _, message = raw.partition("\n\n")
    lines = head.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("gpgsig "))
    signature = "\n".join([lines[start][len("gpgsig ") :], *(ln[1:] for ln in lines[start + 1 :])]) + "\n"
    payload = "\n".join(lines[:start]) + "\n\n" + message
    other = tmp_path / "other.git"
    subprocess.run(["git", "init", "-q", "--bare", str(other)], check=True)

    made = rebuilt(Git(other), Verification(True, "valid", signature, payload))

    assert made == sha  # the same object, byte for byte, without fetching it
    assert rebuilt(Git(other), Verification(False, "unsigned")) is None


def test_a_rollback_by_hand_is_githubs_signed_commit_too(
    world: World,
    database: GitDatabase,
    factory: ControlPlaneFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    _app(world, monkeypatch, tmp_path)
    x = _with_signatures(factory, world, "{commits: github}")
    assert _promote(world).exit_code == 0
    text = (world.control_plane / "promoter.yaml").read_text()
    factory.commit(
        "main", {"promoter.yaml": text, "workloads/app.yaml": WORKLOAD.replace("./qa", "./qa2")}, "y"
    )
    assert _promote(world).exit_code == 0
    assert len(world.fake.calls("git_commit")) == 4  # y changes qa's render alone

    result = CliRunner().invoke(
        cli, ["rollback", "--control-plane", str(world.control_plane), "--env", "qa", "--to", x]
    )

    assert result.exit_code == 0, result.output
    assert len(world.fake.calls("git_commit")) == 5  # the restoring commit, made by GitHub
    qa = _git(world.platform, "rev-parse", "qa")
    assert _verified(world.platform, database, qa) == ("G", f"{APP_BOT[0]} <{APP_BOT[1]}>")
    assert _git(world.platform, "log", "-1", "--format=%s", qa).startswith(f"Roll back qa to {x[:7]}")
