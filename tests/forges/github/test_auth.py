"""Credentials: the token as a header over real smart HTTP, never in argv, URLs, config or output;
GitHub App installation tokens; where the token comes from."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import responses
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from promoter.cli.main import cli
from promoter.clock import FakeClock
from promoter.errors import UsageError
from promoter.forges.github.api import GitHubHttp
from promoter.forges.github.auth import AppInstallationTokens, StaticToken, credentials_from_env, git_auth_env
from promoter.masking import mask
from tests.support.fake_github import TOKEN, FakeGitHub, World, make_world, pipeline
from tests.support.helpers import ControlPlaneFactory

BASIC = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()


def promote(world: World) -> Result:
    return CliRunner().invoke(
        cli,
        ["promote", "--control-plane", str(world.control_plane), "--control-plane-repo", "org/control-plane"],
    )


def spy_on_commands(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    seen: list[list[str]] = []
    real = subprocess.run

    def run(cmd: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append([str(part) for part in cmd])
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", run)
    return seen


def cache_files() -> dict[str, bytes]:
    root = Path(os.environ["PROMOTER_CACHE_DIR"])
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_the_token_travels_as_a_header_and_nowhere_else(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(factory, monkeypatch, ghes=True, git_token=TOKEN, prod="direct")
    try:
        commands = spy_on_commands(monkeypatch)
        result = promote(world)

        assert result.exit_code == 0, result.output
        # the server refuses any request without the header; every request had it
        assert world.git.log and all(e["authorization"] == f"Basic {BASIC}" for e in world.git.log)
        assert any(e["path"].endswith("/git-receive-pack") for e in world.git.log)
        git_commands = [" ".join(c) for c in commands if c[0] == "git"]
        assert any(" push " in c for c in git_commands)
        places = {
            "command lines": "\n".join(git_commands),
            "git URLs": "\n".join(f"{e['path']}?{e['query']}" for e in world.git.log),
            "API URLs": "\n".join(f"{r.path}?{r.query}" for r in world.fake.requests),
            "output": result.output,
            **{name: data.decode("latin-1") for name, data in cache_files().items()},
        }
        leaks = [where for where, text in places.items() if TOKEN in text or BASIC in text]
        assert leaks == []
        assert any(name.endswith("/config") for name in places)  # the cache's .git/config was read
    finally:
        world.close()


def test_without_the_header_the_server_says_no(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(factory, monkeypatch, ghes=True, git_token=TOKEN)
    try:
        proc = subprocess.run(
            ["git", "ls-remote", f"{world.git.url}/org/platform.git"],
            capture_output=True,
            text=True,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"},
        )
        assert proc.returncode != 0 and "Authentication failed" in proc.stderr
    finally:
        world.close()


def test_a_refused_token_fails_without_showing_it(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(factory, monkeypatch, ghes=True, git_token="ghp_the_one_the_server_wants")
    try:
        before = factory.refs()
        result = promote(world)
        assert result.exit_code == 1
        error = result.output.splitlines()[-1]
        assert error.startswith("error: git ls-remote failed in ") and "Authentication failed for" in error
        assert error.endswith(
            "(the token, or the GitHub App, needs contents: write on org/platform; see docs/github.md)"
        )
        assert TOKEN not in result.output and BASIC not in result.output
        assert factory.refs() == before
    finally:
        world.close()


def test_masking_covers_the_header_form() -> None:
    env = git_auth_env("https://github.com/org/platform.git", "ghs_abcdefghijklmnop", {})
    header = env["GIT_CONFIG_VALUE_0"]
    assert header.startswith("Authorization: Basic ")
    assert mask(f"trace: {header}") == "trace: Authorization: Basic ***"
    assert mask("token ghs_abcdefghijklmnop") == "token ***"


def test_git_auth_env_keeps_the_callers_own_git_config() -> None:
    env = git_auth_env(
        "https://ghe.example.com/org/platform.git",
        "tok-1234567890",
        {"GIT_CONFIG_COUNT": "2", "GIT_HTTP_LOW_SPEED_TIME": "5"},
    )
    assert env["GIT_CONFIG_COUNT"] == "3"
    assert env["GIT_CONFIG_KEY_2"] == "http.https://ghe.example.com/org/platform.git.extraHeader"
    assert env["GIT_HTTP_LOW_SPEED_TIME"] == "5"
    assert git_auth_env("git@github.com:org/platform.git", "tok-1234567890", {}) == {}


# ------------------------------------------------------------------ where the token comes from


def test_promoter_token_comes_before_github_token() -> None:
    http = GitHubHttp("https://api.github.com", FakeClock())
    both = credentials_from_env(http, {"PROMOTER_GITHUB_TOKEN": "pat-one", "GITHUB_TOKEN": "actions-two"})
    assert isinstance(both, StaticToken) and both.token("o/r") == "pat-one"
    only = credentials_from_env(http, {"GITHUB_TOKEN": "actions-two\n"})
    assert only.token("o/r") == "actions-two"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {},
            "the github forge needs a token: set PROMOTER_GITHUB_TOKEN (or GITHUB_TOKEN, or GH_TOKEN), or a GitHub App "
            "with PROMOTER_GITHUB_APP_ID and PROMOTER_GITHUB_APP_PRIVATE_KEY; see docs/github.md",
        ),
        (
            {"PROMOTER_GITHUB_APP_ID": "12"},
            "GitHub App: PROMOTER_GITHUB_APP_PRIVATE_KEY is not set (both PROMOTER_GITHUB_APP_ID and "
            "PROMOTER_GITHUB_APP_PRIVATE_KEY are needed)",
        ),
        (
            {"PROMOTER_GITHUB_APP_ID": "12", "PROMOTER_GITHUB_APP_PRIVATE_KEY": "/no/such.pem"},
            "PROMOTER_GITHUB_APP_PRIVATE_KEY: neither a PEM private key nor the path of one",
        ),
    ],
)
def test_missing_credentials(env: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        credentials_from_env(GitHubHttp("https://api.github.com", FakeClock()), env)
    assert str(caught.value) == message


def test_no_token_is_exit_2_before_anything_moves(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(factory, monkeypatch, token=None)
    try:
        before = factory.refs()
        result = promote(world)
        assert result.exit_code == 2
        assert result.output.startswith("error: the github forge needs a token")
        assert factory.refs() == before and world.fake.requests == []
    finally:
        world.close()


# ------------------------------------------------------------------ GitHub App


def _key() -> tuple[str, Any]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return pem, key.public_key()


def test_github_app_installation_token_for_api_and_git(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pem, public = _key()
    fakes: list[FakeGitHub] = []
    world = make_world(
        factory,
        monkeypatch,
        ghes=True,
        token=None,
        prod="direct",
        git_token=lambda token: token in fakes[0].installation_tokens,
    )
    fakes.append(world.fake)
    world.fake.app = (123, public)
    key_file = tmp_path / "app.pem"
    key_file.write_text(pem)
    monkeypatch.setenv("PROMOTER_GITHUB_APP_ID", "123")
    monkeypatch.setenv("PROMOTER_GITHUB_APP_PRIVATE_KEY", str(key_file))  # a path works too
    try:
        result = promote(world)

        assert result.exit_code == 0, result.output
        app = [(r.method, r.path) for r in world.fake.calls("app")]
        assert app == [
            # one per owner: the first asked (the platform repo, read before anything is pushed by the
            # removal guard's look at what its branches hold)
            ("GET", "/repos/org/platform/installation"),
            ("POST", "/app/installations/4242/access_tokens"),
        ]
        (minted,) = world.fake.installation_tokens
        assert world.fake.token_scopes[minted] == {"org/platform", "org/control-plane"}  # and no other
        rest = [r for r in world.fake.requests if r.call != "app"]
        assert rest and all(r.headers["Authorization"] == f"token {minted}" for r in rest)
        basic = base64.b64encode(f"x-access-token:{minted}".encode()).decode()
        assert world.git.log and all(e["authorization"] == f"Basic {basic}" for e in world.git.log)
        assert minted not in result.output and pem.splitlines()[1] not in result.output
    finally:
        world.close()


def test_installation_tokens_are_renewed_before_they_expire(factory: ControlPlaneFactory) -> None:
    pem, public = _key()
    clock = FakeClock(start=0.0)
    fake = FakeGitHub(clock)
    fake.app = (7, public)
    fake.add_repo("org/platform", factory.root)
    http = GitHubHttp("https://api.github.com", clock, wall=fake.wall)
    tokens = AppInstallationTokens(http, "7", pem)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        fake.install(mock)
        first = tokens.token("org/platform")
        clock.sleep(3000)  # 10 minutes before expiry: still good
        assert tokens.token("org/platform") == first
        clock.sleep(400)  # within 5 minutes of expiry: a new one
        second = tokens.token("org/platform")
    assert second != first and len(fake.installation_tokens) == 2
    assert [r.path for r in fake.requests] == [
        "/repos/org/platform/installation",
        "/app/installations/4242/access_tokens",
        "/app/installations/4242/access_tokens",
    ]
    assert http.counts.total == 3


def test_a_three_hour_manual_wait_keeps_working_with_a_github_app(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """prod is merge: manual and a human merges after three hours; every installation token
    lives one hour (the fake refuses an expired one, on the API and over git): the promoter mints
    a new one before each expires and the promotion goes through."""
    pem, public = _key()
    fakes: list[FakeGitHub] = []

    def live(token: str) -> bool:
        return fakes[0].installation_tokens.get(token, 0.0) >= fakes[0].wall()

    world = make_world(factory, monkeypatch, ghes=True, token=None, prod="manual", git_token=live)
    fakes.append(world.fake)
    world.fake.app = (123, public)
    factory.commit(
        "main",
        {
            "promoter.yaml": pipeline(
                f"{{url: {world.git.url}/org/platform, forge: github}}", prod="manual"
            ).replace("    - name: prod\n", "    - name: prod\n      timeout: 4h\n")
        },
        "prod may wait four hours",
        keep=True,
    )
    monkeypatch.setenv("PROMOTER_GITHUB_APP_ID", "123")
    monkeypatch.setenv("PROMOTER_GITHUB_APP_PRIVATE_KEY", pem)

    def merge_after_three_hours(fake: FakeGitHub, method: str, path: str) -> bool:
        if method == "GET" and path == "/repos/org/platform/pulls/3" and fake.clock.now() >= 3 * 3600:
            fake.human_merges("org/platform", 3)
            return True
        return False

    world.fake.hooks.append(merge_after_three_hours)
    try:
        result = CliRunner().invoke(
            cli,
            [
                "promote",
                "--control-plane",
                str(world.control_plane),
                "--control-plane-repo",
                "org/control-plane",
                "--poll-interval",
                "1m",
                "--progress-interval",
                "30m",
            ],
        )

        assert result.exit_code == 0, result.output
        assert world.clock.now() >= 3 * 3600
        assert [(p["base"]["ref"], p["merged"]) for p in world.platform_prs] == [
            ("dev", True),
            ("qa", True),
            ("prod", True),
        ]
        main = subprocess.run(
            ["git", "-C", str(world.control_plane), "rev-parse", "main"], capture_output=True, text=True
        ).stdout.strip()
        assert world.statuses(main)["promoter/prod"] == "success"
        refused = [r for r in world.fake.requests if r.status == 401] + [
            e for e in world.git.log if e.get("status") == 401
        ]
        assert refused == []
        minted = [r for r in world.fake.requests if r.path == "/app/installations/4242/access_tokens"]
        assert len(minted) == len(world.fake.installation_tokens) >= 4  # one an hour, renewed early
        assert not any(token in result.output for token in world.fake.installation_tokens)
    finally:
        world.close()


def test_renewal_follows_githubs_clock_not_the_runners(factory: ControlPlaneFactory) -> None:
    """A runner whose clock is ten minutes behind GitHub's: the token's hour is measured against
    the answer's Date, so it is renewed five minutes before GitHub expires it, not fifteen after."""
    pem, public = _key()
    clock = FakeClock(start=0.0)
    fake = FakeGitHub(clock)
    fake.app = (7, public)
    fake.add_repo("org/platform", factory.root)
    http = GitHubHttp("https://api.github.com", clock, wall=lambda: fake.wall() - 600)
    tokens = AppInstallationTokens(http, "7", pem, ("org/platform",))
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        fake.install(mock)
        first = tokens.token("org/platform")
        clock.sleep(3290)  # GitHub: 5 min 10 s left; the runner's clock would say 15 min 10 s
        assert tokens.token("org/platform") == first
        clock.sleep(20)
        second = tokens.token("org/platform")
    assert second != first and fake.installation_tokens[second] > fake.wall()
