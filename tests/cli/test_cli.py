"""The CLI's contract: exact output and exit codes (DESIGN section 9)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import promoter.promotion.environment
from promoter.cli.main import cli
from tests.support.helpers import ControlPlaneFactory


def invoke(*args: str) -> object:
    return CliRunner().invoke(cli, list(args))


def test_promote_minimal(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--poll-interval", "0.1s"])
    assert result.exit_code == 0, result.output
    assert factory.platform_files("prod") == [
        ".promoter/promotion.yaml",
        "small/app-t3/namespace.yaml",
        "small/app-t3/platform-config.yaml",
        "small/app-t3/reconciler.yaml",
    ]


def test_validate_reports_each_environment(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:3] == [
        "dev: ok, 1 assignments, 3 files",
        "qa: ok, 1 assignments, 3 files",
        "prod: ok, 1 assignments, 3 files",
    ]
    assert lines[3].startswith("valid: main ") and lines[3].endswith(", 1 workloads, 0 templates")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--to", "staging"], "error: --to staging: no such environment (the Pipeline has dev, qa, prod)\n"),
        (
            ["--schedule", "staging"],
            "error: --schedule staging: the Pipeline on main has no such environment\n",
        ),
        (
            ["--to", "qa", "--schedule", "qa"],
            "error: --to and --schedule exclude each other: --schedule runs the scheduling flow for one environment\n",
        ),
        (["--commit", "nope"], "error: --commit nope: no such commit or branch in CP\n"),
        (["--poll-interval", "often"], "error: expected a duration like 30s, 5m or 1h, got 'often'\n"),
    ],
)
def test_usage_errors_exit_2(factory: ControlPlaneFactory, args: list[str], message: str) -> None:
    path = factory.create()
    refs = factory.refs()
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), *args])
    assert (result.exit_code, result.output) == (2, message.replace("CP", str(path)))
    assert factory.refs() == refs


def test_not_a_repo_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(tmp_path)])
    assert (result.exit_code, result.output) == (
        2,
        f"error: --control-plane {tmp_path}: not a git repository\n",
    )


def test_unexpected_error_is_exit_3_with_a_log(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = factory.create()
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secretsecretsecret")

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("bug near ghp_secretsecretsecret")

    monkeypatch.setattr(promoter.promotion.environment, "render_environment", boom)
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path)])
    assert result.exit_code == 3
    line = result.output.splitlines()[-1]
    assert line.startswith("error: unexpected failure (a bug); the traceback is in ")
    log = Path(line.rsplit(" ", 1)[1]).read_text()
    assert "RuntimeError: bug near ***" in log and "ghp_secret" not in log


def test_status_text(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    assert CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--to", "dev"]).exit_code == 0
    result = CliRunner().invoke(cli, ["status", "--control-plane", str(path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].endswith(" initial main")
    assert lines[1].startswith("  dev        success   healthy at ") and lines[1].endswith(
        "(no gates)  [dev has this commit]"
    )
    assert lines[2] == "  qa         none        [qa has nothing]"


def test_a_local_promotion_loads_no_network_or_validation_library_it_does_not_use() -> None:
    """Every step of the actions and every heartbeat starts a promoter process, and most of its
    time is spent importing: HTTP clients, the Python JSON Schema validator and the retry
    library load only when a run asks a server, explains a schema failure or talks to GitHub."""
    code = (
        "import importlib, sys\n"
        "for name in ('promoter.cli.main', 'promoter.cli.commands.promote', 'promoter.ghactions.runner', 'promoter.ghactions.publish',"
        " 'promoter.forges.local', 'promoter.cli.commands.validate'):\n"
        "    importlib.import_module(name)\n"
        "heavy = ('requests', 'urllib3', 'jsonschema', 'referencing', 'tenacity', 'github', 'urllib.request',"
        " 'http.client')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
