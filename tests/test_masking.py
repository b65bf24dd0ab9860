"""Tokens never leak: not to stdout, stderr, logs, files, git objects or config; a value of one
environment never reaches another's tree; secrets are referenced by name, never read."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from promoter.gitcmd import Git
from tests.support import forkserver
from tests.support.helpers import ENV, PIPELINE, WORKLOAD, ControlPlaneFactory
from tests.support.paths import ROOT

TOKENS = {
    "PROMOTER_GITHUB_TOKEN": "ghp_promoterTOKENpromoterTOKEN0001",
    "GITHUB_TOKEN": "ghs_workflowTOKENworkflowTOKEN0002",
    "PROMOTER_GITHUB_APP_PRIVATE_KEY": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretkeymaterial0003\n-----END RSA PRIVATE KEY-----",
}


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **TOKENS}
    return forkserver.run("promoter", args, env=env, cwd=cwd)


def leaks(text: str) -> list[str]:
    found = []
    for name, value in TOKENS.items():
        for piece in [value, *(ln for ln in value.splitlines() if len(ln) >= 8)]:
            if piece in text:
                found.append(name)
    return found


def all_objects(repo: Path) -> str:
    """Every object of a repo, decompressed (packed or loose), plus its config."""
    out = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
    return (
        out.decode("utf-8", "replace")
        + (repo / "config" if (repo / "config").exists() else repo / ".git" / "config").read_text()
    )


def scan_tree(root: Path) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            found += [f"{path}: {n}" for n in leaks(path.read_bytes().decode("utf-8", "replace"))]
    return found


def test_no_token_anywhere_after_success_failure_bad_input_and_crash(
    factory: ControlPlaneFactory, tmp_path: Path
) -> None:
    failing = PIPELINE.replace(
        "    - name: qa\n",
        "    - name: qa\n      gates: [{command: {run: 'echo $GITHUB_TOKEN $PROMOTER_GITHUB_TOKEN >&2; exit 1', shell: true}}]\n",
    )
    path = factory.create(
        {"promoter.yaml": failing, "workloads/app.yaml": WORKLOAD}, platform_branches=("dev", "qa", "prod")
    )
    outputs = []
    for args in (
        ["promote", "--control-plane", str(path), "--poll-interval", "0.1s"],  # dev succeeds, qa's gate fails
        ["status", "--control-plane", str(path), "--output", "json"],
        ["promote", "--control-plane", str(path), "--commit", "nope"],  # bad input
        ["validate", "--control-plane", str(path)],
        ["render", "--control-plane", str(path), "--env", "dev", "--out", str(tmp_path / "out")],
    ):
        result = run(*args)
        outputs += [result.stdout, result.stderr]
    assert "qa: FAILED" in outputs[0] + outputs[1]  # the gate echoed the tokens: it had none
    logs = [Path(m) for m in re.findall(r"traceback is in (\S+)", "".join(outputs))]
    assert not leaks("".join(outputs)), "".join(outputs)
    assert not scan_tree(tmp_path), scan_tree(tmp_path)
    cache = Path(os.environ["PROMOTER_CACHE_DIR"])  # the platform cache, HOME's sibling files
    assert not scan_tree(cache.parent), scan_tree(cache.parent)
    for repo in (cache / "platform").glob("*.git"):
        assert not leaks(all_objects(repo))
    for repo in (path / ".git", factory.platform):
        assert not leaks(all_objects(repo))
    for log in logs:
        assert not leaks(log.read_text())


def test_a_crash_log_masks_tokens(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    env = {**os.environ, **TOKENS}
    code = (
        "import sys, promoter.promotion.environment as o\n"
        "def boom(*a, **k): raise RuntimeError('failed with ' + __import__('os').environ['GITHUB_TOKEN'])\n"
        "o.render_environment = boom\n"
        "sys.argv = ['promoter', 'promote', '--control-plane', sys.argv[1]]\n"
        "from promoter.cli.main import main; main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 3
    log = Path(re.findall(r"traceback is in (\S+)", result.stderr)[0]).read_text()
    assert "RuntimeError: failed with ***" in log
    assert not leaks(log + result.stdout + result.stderr)


def test_a_value_of_prod_never_reaches_the_dev_tree(factory: ControlPlaneFactory) -> None:
    prod_only = ENV.replace("data: {REGION: here}", "data: {REGION: here, PROD_ONLY: prod-value-7f3a9}")
    path = factory.create(
        envs={"dev": {"env.yaml": ENV}, "qa": {"env.yaml": ENV}, "prod": {"env.yaml": prod_only}}
    )
    result = run("promote", "--control-plane", str(path), "--poll-interval", "0.1s")
    assert result.returncode == 0, result.stderr
    for env in ("dev", "qa", "prod"):
        tree = subprocess.run(
            ["git", "-C", str(factory.platform), "grep", "-c", "prod-value-7f3a9", env],
            capture_output=True,
            text=True,
            check=False,
        )
        assert (tree.returncode == 0) == (env == "prod"), (env, tree.stdout)


def test_secrets_are_referenced_by_name_never_read(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DB_PASSWORD", "hunter2-never-read")
    config = ENV.replace(
        "data: {REGION: here}", "data: {REGION: here, DB_PASSWORD: {secretRef: {name: db, key: password}}}"
    )
    path = factory.create(envs={e: {"env.yaml": config} for e in ("dev", "qa", "prod")})
    result = run("promote", "--control-plane", str(path), "--to", "dev")
    assert result.returncode == 0, result.stderr
    rendered = Git(factory.platform).out("show", "dev:small/app-t/platform-config.yaml")
    assert 'DB_PASSWORD: \'{"secretRef": {"key": "password", "name": "db"}}\'' in rendered
    assert "hunter2" not in all_objects(factory.platform)


def test_the_gates_env_block_sets_variables_masked_and_the_environment_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from promoter.masking import GATES_ENV, load_gates_env, mask

    env = {
        GATES_ENV: "# the gates' tokens\n\nARGOCD_AUTH_TOKEN=argo-token-0123456789\n"
        " PROMOTER_HUB_URL = https://hub.example.com \nPROMOTER_PROMETHEUS_TOKEN=from-the-block-000",
        "PROMOTER_PROMETHEUS_TOKEN": "from-the-job-0000",
    }
    monkeypatch.setenv(GATES_ENV, env[GATES_ENV])  # what secrets() reads
    assert load_gates_env(env) == ["ARGOCD_AUTH_TOKEN", "PROMOTER_HUB_URL"]
    assert env["ARGOCD_AUTH_TOKEN"] == "argo-token-0123456789"
    assert env["PROMOTER_HUB_URL"] == "https://hub.example.com"
    assert env["PROMOTER_PROMETHEUS_TOKEN"] == "from-the-job-0000"  # the job's own variable wins
    assert mask("token argo-token-0123456789 and from-the-block-000") == "token *** and ***"
    with pytest.raises(ValueError, match=r"^\$PROMOTER_GATES_ENV line 2: expected NAME=value$"):
        load_gates_env({GATES_ENV: "A=1\nthe-secret-itself"})


def test_a_bad_gates_env_line_is_a_usage_error_that_never_shows_the_line() -> None:
    env = {**os.environ, "PROMOTER_GATES_ENV": "ARGOCD_AUTH_TOKEN=fine\nsk-not-a-pair-0123456789"}
    done = forkserver.run("promoter", ("--version",), env=env, cwd=ROOT)
    assert done.returncode == 0  # --version runs no command
    done = forkserver.run("promoter", ("validate", "--control-plane", str(ROOT)), env=env, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: $PROMOTER_GATES_ENV line 2: expected NAME=value"
    assert "sk-not-a-pair" not in done.stdout + done.stderr
