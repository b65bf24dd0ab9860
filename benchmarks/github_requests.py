"""GitHub API requests per environment promotion, counted on the fake GitHub of the tests
(``tests/support/fake_github.py``: GitHub's REST shapes, real git behind it): the whole promotion
dev -> qa -> prod through the CLI, every merge automatic, as the report counts them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

GITHUB_VARIABLES = ("GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_TOKEN")


def measure(root: Path) -> dict[str, Any]:
    import pytest
    from click.testing import CliRunner

    from promoter.cli.main import cli
    from tests.support.fake_github import make_world
    from tests.support.helpers import ControlPlaneFactory

    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROMOTER_CACHE_DIR", str(root / "cache"))
        for name in GITHUB_VARIABLES:
            patch.delenv(name, raising=False)
        world = make_world(ControlPlaneFactory(root), patch)
        try:
            command = ["promote", "--control-plane", str(world.control_plane), "--output", "json"]
            command += ["--control-plane-repo", "org/control-plane", "--poll-interval", "5s"]
            result = CliRunner().invoke(cli, command)
            if result.exit_code != 0:
                raise RuntimeError(f"promotion on the fake GitHub failed:\n{result.output}")
            report = json.loads(result.output[result.output.index("{\n") :])
            per_env = {e["environment"]: e["requests"] for e in report["environments"]}
            states = {e["environment"]: e["state"] for e in report["environments"]}
            return {"requests": per_env, "states": states, "total_seen": len(world.fake.requests)}
        finally:
            world.close()
