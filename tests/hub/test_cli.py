"""``promoter hub ...`` on both engines: keys, native reports, recording and syncing platform
commits from a real git repo, and the reads as text and as the API's JSON (by database and by URL)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from promoter.cli.main import cli
from tests.support.hub_support import LiveHub, platform_repo


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, ["hub", *args], env=env)


def test_keys_add_list_revoke(hub_url: str) -> None:
    added = run(
        "keys", "add", "edge-1", "--environment", "dev", "--cluster-type", "small", "--database", hub_url
    )
    assert added.exit_code == 0, added.output
    key = added.stdout.strip().splitlines()[-1]
    assert key.startswith("phk_") and len(key) > 40
    listed = run("keys", "list", "--database", hub_url, "-o", "json")
    assert key not in listed.output
    assert [
        (k["owner"], k["role"], k["environment"], k["clusterType"]) for k in json.loads(listed.stdout)
    ] == [("edge-1", "cluster", "dev", "small")]
    again = run(
        "keys", "add", "edge-1", "--environment", "qa", "--cluster-type", "small", "--database", hub_url
    )
    assert again.exit_code == 2 and "registered in environment dev" in again.output
    bad = run(
        "keys", "add", "Edge_1", "--environment", "dev", "--cluster-type", "small", "--database", hub_url
    )
    assert bad.exit_code == 2 and "cluster 'Edge_1'" in bad.output
    assert run("keys", "revoke", "edge-1", "--database", hub_url).output.strip() == "revoked 1 key of edge-1"
    assert run("keys", "revoke", "edge-1", "--database", hub_url).exit_code == 2


def test_sync_report_and_reads(hub_db, tmp_path: Path) -> None:
    url = hub_db.url
    repo, (m0, m) = platform_repo(tmp_path)
    synced = run(
        "sync",
        "--platform-repo",
        repo,
        "--environment",
        "dev",
        "--environments",
        "dev,prod",
        "--database",
        url,
    )
    assert synced.exit_code == 0, synced.output
    assert synced.output.strip() == "dev: recorded 2 platform commit(s), 0 already known"
    assert (
        "0 platform commit(s), 2 already known"
        in run("sync", "--platform-repo", repo, "--environment", "dev", "--database", url).output
    )
    key = run(
        "keys", "add", "edge-1", "--environment", "dev", "--cluster-type", "small", "--database", url
    ).stdout.split()[-1]
    with LiveHub(hub_db) as live:
        reported = run(
            "report",
            "--url",
            live.url,
            "--reconciler",
            "Kustomization/flux-system/platform",
            "--state",
            "success",
            "--revision",
            f"dev@sha1:{m}",
            env={"PROMOTER_HUB_KEY": key},
        )
        assert reported.exit_code == 0, reported.output
        assert key not in reported.output
        by_url = run("rollout", "--env", "dev", "--commit", m[:10], "--url", live.url, "-o", "json")
    by_db = run("rollout", "--env", "dev", "--commit", m, "--database", url, "-o", "json")
    assert by_url.exit_code == 0 and by_db.exit_code == 0, by_url.output + by_db.output
    expected = {"total": 1, "success": 1, "failed": 0, "pending": 0, "stale": 0}
    for answer in (json.loads(by_url.stdout), json.loads(by_db.stdout)):
        assert answer["environment"] == "dev" and answer["commit"] == m
        assert {k: answer["clusterTypes"]["small"][k] for k in expected} == expected
        assert answer["clusterTypes"]["large"]["total"] == 0  # scheduled there, no cluster registered
    text = run("rollout", "--env", "dev", "--commit", m, "--database", url)
    assert "small" in text.output and "1/1" in text.output
    status = run("status", "--database", url)
    assert (
        status.output.splitlines()[0].startswith(f"dev {m[:12]}")
        and "prod: no platform commit recorded" in status.output
    )
    assert json.loads(run("drift", "--database", url, "-o", "json").stdout) == []
    history = json.loads(run("history", "--cluster", "edge-1", "--database", url, "-o", "json").stdout)
    assert [h["state"] for h in history] == ["success"]
    assert m0 != m


def test_record_one_commit_and_bad_input(hub_db, tmp_path: Path) -> None:
    url = hub_db.url
    repo, (_, m) = platform_repo(tmp_path, commits=2)
    recorded = run(
        "record", "--platform-repo", repo, "--environment", "dev", "--commit", m, "--database", url
    )
    assert recorded.exit_code == 0 and recorded.output.strip() == f"dev: {m[:12]} recorded"
    missing = run(
        "record", "--platform-repo", repo, "--environment", "dev", "--commit", "f" * 40, "--database", url
    )
    assert missing.exit_code == 2 and "not a commit of" in missing.output
    unknown = run("rollout", "--env", "dev", "--commit", "e" * 40, "--database", url)
    assert unknown.exit_code == 2 and "no platform commit or main commit" in unknown.output
    no_token = run(
        "record",
        "--platform-repo",
        repo,
        "--environment",
        "dev",
        "--commit",
        m,
        "--url",
        "http://127.0.0.1:9",
    )
    assert no_token.exit_code == 2 and "PROMOTER_HUB_TOKEN is not set" in no_token.output
    no_key = run("report", "--url", "http://127.0.0.1:9", "--reconciler", "x", "--state", "success")
    assert no_key.exit_code == 2 and "PROMOTER_HUB_KEY is not set" in no_key.output


def test_a_new_key_is_masked_in_github_actions(hub_url: str) -> None:
    added = run(
        "keys",
        "add",
        "edge-1",
        "--environment",
        "dev",
        "--cluster-type",
        "small",
        "--database",
        hub_url,
        env={"GITHUB_ACTIONS": "true"},
    )
    key = added.stdout.strip().splitlines()[-1]
    assert f"::add-mask::{key}" in added.stderr


def test_report_reads_its_key_from_a_file(hub_db, tmp_path: Path) -> None:
    key = run(
        "keys", "add", "edge-1", "--environment", "dev", "--cluster-type", "small", "--database", hub_db.url
    ).stdout.split()[-1]
    secret = tmp_path / "key"
    secret.write_text(key + "\n")
    with LiveHub(hub_db) as live:
        sent = run(
            "report",
            "--url",
            live.url,
            "--reconciler",
            "custom/platform",
            "--state",
            "progressing",
            env={"PROMOTER_HUB_KEY_FILE": str(secret)},
        )
    assert sent.exit_code == 0, sent.output
    assert "stored for cluster edge-1" in sent.output


def test_one_name_for_the_environment_option(hub_db, tmp_path: Path) -> None:
    url = hub_db.url
    repo, (_, m) = platform_repo(tmp_path)
    assert run("sync", "--platform-repo", repo, "--env", "dev", "--database", url).exit_code == 0
    assert (
        run("keys", "add", "edge-1", "--env", "dev", "--cluster-type", "small", "--database", url).exit_code
        == 0
    )
    for flag in ("--env", "--environment"):
        answer = run("rollout", flag, "dev", "--commit", m, "--database", url, "-o", "json")
        assert answer.exit_code == 0 and json.loads(answer.stdout)["commit"] == m, answer.output
        assert run("clusters", flag, "dev", "--database", url, "-o", "json").exit_code == 0
    helps = [
        run(*cmd, "--help").output
        for cmd in (("rollout",), ("keys", "add"), ("sync",), ("record",), ("drift",))
    ]
    assert all("--env, --environment" in h for h in helps)


def test_read_commands_refuse_a_database_that_does_not_exist(tmp_path: Path) -> None:
    typo = tmp_path / "nowhere" / "hub.sqlite3"
    for command in (("status",), ("clusters",), ("cluster", "edge-1"), ("history",), ("keys", "list")):
        answer = run(*command, "--database", str(typo))
        assert answer.exit_code == 2, (command, answer.output)
        assert answer.output.count("\n") == 1 and "no hub database there" in answer.output
    assert not typo.exists() and not typo.parent.exists()


def test_cluster_in_text_lists_its_reconcilers(hub_db) -> None:
    key = run("keys", "add", "edge-1", "--env", "dev", "--cluster-type", "small", "--database", hub_db.url)
    assert key.exit_code == 0
    from promoter.hub import keys as hub_keys
    from promoter.hub.payloads import Report
    from promoter.hub.store import store_report

    with hub_db.transaction() as tx:
        cluster = hub_keys.cluster(tx, "edge-1")
    assert cluster is not None
    for name, state, message in (
        ("apps", "success", ""),
        ("infra", "failure", "kustomize build failed: no such file"),
    ):
        report = Report(
            "flux", f"Kustomization/flux-system/{name}", "apply", state, "a" * 40, "dev", state, message, None
        )  # type: ignore[arg-type]
        store_report(hub_db, cluster, report, name, 1.0e9)
    text = run("cluster", "edge-1", "--database", hub_db.url).output.splitlines()
    assert text[0].startswith("edge-1")
    assert any("Kustomization/flux-system/apps" in line and "success" in line for line in text)
    assert any(
        "Kustomization/flux-system/infra" in line and "kustomize build failed" in line for line in text
    )
    assert any(line.strip().startswith("failing since") for line in text)


def test_serve_on_a_busy_port_exits_1_with_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        answer = run("serve", "--database", str(tmp_path / "hub.sqlite3"), "--listen", f"127.0.0.1:{port}")
    assert answer.exit_code == 1, answer.output
    assert answer.output.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}" in answer.output


def test_serve_retain_is_checked(tmp_path: Path) -> None:
    answer = run("serve", "--database", str(tmp_path / "hub.sqlite3"), "--retain", "ninety days")
    assert answer.exit_code == 2 and "--retain 'ninety days'" in answer.output


def test_the_help_example_works_required_options_are_enforced_and_bad_values_are_400(tmp_path: Path) -> None:
    import requests

    from promoter.hub.commits import CommitRecord, record_commit
    from promoter.hub.db import Database
    from tests.support.hub_support import register

    db = Database(str(tmp_path / "hub.sqlite3"))
    db.migrate()
    sha = "4f0e7ab" + "0" * 33
    record_commit(db, CommitRecord("prod", sha, "prod", None, "9" * 40, None, (), ("prod",)), 1_790_000_000.0)
    register(db, "edge-1", "prod")
    example = next(line.strip() for line in run("--help").output.splitlines() if "hub rollout" in line)
    with LiveHub(db) as live:
        args = example.replace("http://hub:8080", live.url).split()[2:]  # after "promoter hub"
        answer = run(*args)
        assert answer.exit_code == 0, answer.output
        assert json.loads(answer.stdout)["commit"] == sha
        missing = run("rollout", "--url", live.url, "--commit", "4f0e7ab")
        assert missing.exit_code == 2 and "error: Missing option '--env' / '--environment'." in missing.output
        bad = requests.get(f"{live.url}/v1/history", params={"limit": "abc"}, timeout=10)
        assert bad.status_code == 400
        assert bad.json() == {"error": "limit: must be a whole number from 1 to 1000, got 'abc'"}
        assert requests.get(f"{live.url}/history?limit=0", timeout=10).status_code == 400
        window = requests.get(f"{live.url}/v1/delivery?window=soon", timeout=10)
        assert window.status_code == 400 and window.json()["error"].startswith("window: ")
        both = [
            requests.get(f"{live.url}/v1/clusters?{k}=prod", timeout=10).json()
            for k in ("env", "environment")
        ]
        assert both[0] == both[1] and [c["name"] for c in both[0]] == ["edge-1"]
        assert requests.get(f"{live.url}/v1/clusters?env=dev", timeout=10).json() == []
    text = run("rollout", "--env", "prod", "--commit", sha, "--database", db.url).output
    assert (
        text.splitlines()[0] == f"prod {sha[:12]} (main 999999999999) stale, recorded 2026-09-21 14:13:20 UTC"
    )
    db.close()
