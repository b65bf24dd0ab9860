"""Messages that lead somewhere (issue 48): an unknown flag is answered by meaning first (the
flag that does what it means here), then by spelling, a Kalypso-only guess said so; the platform
repo given as the control plane is named as such; a Pipeline on another branch is pointed to;
``graph`` reads the tree ``validate`` reads; ``-v`` traces what a run does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli import suggest
from promoter.cli.main import cli
from promoter.cli.suggest import by_meaning
from tests.support.helpers import PIPELINE, ControlPlaneFactory


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["promote", "--environment", "qa"],
            "did you mean --to ENV (promote up to and including ENV) or --schedule ENV",
        ),
        (["promote", "--target=qa"], "did you mean --to ENV"),
        (["render", "--environment", "qa"], "did you mean --env ENV?"),
        (["hold", "prod", "--for", "4h"], "did you mean --until TIME"),
        (["validate", "--json"], "did you mean -o json?"),
        (["promote", "--environmnts", "x"], "did you mean --environments (a Kalypso control plane's) or"),
        (["promote", "--zzz"], "error: no such option --zzz"),
    ],
)
def test_an_unknown_flag_is_answered_by_meaning_then_by_spelling(args: list[str], says: str) -> None:
    code, output = run(*args)
    assert code == 2
    assert says in output.splitlines()[-1]


def test_every_meaning_names_a_flag_its_command_has() -> None:
    """A suggestion that does not exist would lead nowhere again."""
    for flag, commands in suggest._MEANINGS.items():
        for name, meant in commands.items():
            command = cli.get_command(None, name)  # type: ignore[arg-type]
            assert command is not None, name
            flags = {o for p in command.params for o in p.opts}
            named = [w.rstrip("?,") for w in meant.split() if w.startswith("-")]
            assert (named or "argument" in meant) and all(n in flags for n in named), (flag, name, named)
            assert flag not in flags, (flag, name)  # never shadows a real flag
    assert by_meaning("promote", "--environment=qa") is not None


def test_the_platform_repo_given_as_the_control_plane_is_named(factory: ControlPlaneFactory) -> None:
    factory.create(platform_branches=("dev", "qa", "prod"))
    assert run("promote", "--control-plane", str(factory.path))[0] == 0
    code, output = run("status", "--control-plane", str(factory.platform))
    assert code == 2
    assert output.splitlines()[-1] == (
        f"error: the control plane has no branch 'main' (nor origin/main); {factory.platform} is a platform repo "
        "(promotion branches promoter/dev, promoter/prod, promoter/qa), where the promoter pushes: "
        "--control-plane names the repo with the Pipeline (promoter.yaml on main)"
    )


def test_a_pipeline_on_another_branch_is_pointed_to(tmp_path: Path) -> None:
    repo = tmp_path / "cp"
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(repo)], check=True)
    (repo / "promoter.yaml").write_text(PIPELINE)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x"],
        check=True,
    )
    code, output = run("validate", "--control-plane", str(repo))
    assert code == 2 and output.splitlines()[-1].endswith(
        "its Pipeline (promoter.yaml) is on trunk: --main-branch trunk"
    )


def test_graph_reads_the_tree_validate_reads(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    (path / "promoter.yaml").write_text(
        PIPELINE.replace("    - name: qa\n", "    - name: staging\n    - name: qa\n")
    )
    code, output = run("graph", "--control-plane", str(path), "-o", "json")
    assert code == 0, output
    assert "reading uncommitted" in output.splitlines()[0] or "uncommitted" in output.splitlines()[0]
    assert '"staging"' in output
    code, committed = run("graph", "--control-plane", str(path), "--committed", "-o", "json")
    assert code == 0 and '"staging"' not in committed


def test_verbose_traces_each_git_command(factory: ControlPlaneFactory) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    code, output = run("promote", "-v", "--control-plane", str(path), "--to", "dev")
    assert code == 0, output
    traced = [line for line in output.splitlines() if line.startswith("trace: git ")]
    assert any(" push " in line and "(exit 0, " in line for line in traced)
    code, quiet = run("status", "--control-plane", str(path))  # the next command traces nothing
    assert code == 0 and "trace: " not in quiet
