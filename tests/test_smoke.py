from __future__ import annotations

from click.testing import CliRunner

from promoter.cli import cli
from tests.helpers import ControlPlaneFactory


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
