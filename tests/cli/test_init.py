"""``promoter init``: the workflows it writes are the examples' (for the examples' flags), pass
actionlint and zizmor, run in the workflow harness (a push to main, a push to an environment
branch), keep workflow inputs out of shells; bad flags are exit 2 with one line; nothing existing
is overwritten without --force; the skeleton validates."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from promoter.cli.main import cli
from promoter.clock import FakeClock
from promoter.gates.base import GateContext
from promoter.gates.command import CommandGate
from promoter.model import Source
from tests.actions.test_workflow_harness import (
    Workflows,
    evaluate,
    head,
    promotions,
    workflows,
)
from tests.support.helpers import ENV, ControlPlaneFactory
from tests.support.paths import ROOT

BIN = Path(sys.executable).parent
SHA = "5e1f4c2a9b7d3e8f6a0c1b2d4e6f8a0b1c3d5e7f"
BASE = ["init", "--promoter-repo", "acme/promoter", "--ref", SHA, "--tag", "v0.1.0"]
__all__ = ["workflows"]  # the harness's fixtures, shared


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside any git repo, unless a test goes into one: no Pipeline is read by chance."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))


def init(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def written(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}


def test_the_examples_are_what_init_writes(tmp_path: Path) -> None:
    result = init("init", "--promoter-repo", "your-org/promoter", "--ref", "0" * 40, "--tag", "v0.1.0",
                  "--out", str(tmp_path))  # fmt: skip
    assert result.exit_code == 0, result.output
    files = written(tmp_path)
    expected = {
        f"main/{p.relative_to(ROOT / 'examples/control-plane')}": p.read_text()
        for p in (ROOT / "examples/control-plane/.github/workflows").glob("*.yml")
    }
    for env in ("dev", "qa", "prod"):
        folder = ROOT / "examples/environments" / env
        expected |= {
            f"{env}/{p.relative_to(folder)}": p.read_text() for p in folder.glob(".github/workflows/*")
        }
    platform = ROOT / "examples/platform-repo"
    expected |= {
        f"platform-repo/{p.relative_to(platform)}": p.read_text()
        for p in platform.glob(".github/workflows/*")
    }
    assert files == expected


def test_the_output_says_what_was_written_and_what_to_do_next(tmp_path: Path) -> None:
    result = init(*BASE, "--out", str(tmp_path), "--auth", "token", "--private-promoter")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        f"wrote     main/.github/workflows/{n}" for n in ("promote.yml", "promote-by-hand.yml", "render.yml")
    ]
    assert "wrote     prod/.github/workflows/schedule.yml" in lines
    steps = result.stdout.partition("next steps:\n")[2]
    assert (
        f"commit {tmp_path}/main/ to main and {tmp_path}/<branch>/ to each environment branch (dev, qa, prod)"
        in steps
    )
    assert "PROMOTER_GITHUB_TOKEN" in steps and "PROMOTER_GITHUB_APP_ID" not in steps
    assert "Settings → Environments: create dev, qa, prod" in steps
    assert "in acme/promoter, Access: accessible from your organization; let the token read it" in steps
    text = (tmp_path / "main/.github/workflows/promote.yml").read_text()
    assert (
        "private-promoter: true" in text
        and "PROMOTER_GITHUB_TOKEN: ${{ secrets.PROMOTER_GITHUB_TOKEN }}" in text
    )
    assert (
        "token: ${{ secrets.PROMOTER_GITHUB_TOKEN }}"
        in (tmp_path / "dev/.github/workflows/render.yml").read_text()
    )


VARIANTS = {
    "app": [],
    "token-trunk-private": [
        "--auth",
        "token",
        "--main-branch",
        "trunk",
        "--private-promoter",
        "--environments",
        "dev,staging,prod-eu",
    ],
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_workflows_pass_actionlint_zizmor_and_the_schema(variant: str, tmp_path: Path) -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (make deps installs it)")
    assert init(*BASE, "--out", str(tmp_path), *VARIANTS[variant]).exit_code == 0
    files = sorted(str(p) for p in tmp_path.rglob("*.yml"))
    assert len(files) == 4 + 2 * 3 + 1  # main, each environment branch, the platform repo
    lint(files)


def lint(files: list[str]) -> None:
    """actionlint (with ShellCheck on every run:), zizmor and GitHub's workflow schema, as
    ``make extra-lint`` runs them over the repo's own workflows."""
    for argv in (
        [BIN / "actionlint", "-shellcheck=shellcheck", "-pyflakes=", *files],
        [BIN / "zizmor", "--offline", "--quiet", *files],
        [BIN / "check-jsonschema", "--builtin-schema", "vendor.github-workflows", *files],
    ):
        proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"{argv[0]}:\n{proc.stdout}{proc.stderr}"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_workflow_inputs_never_reach_a_shell(variant: str, tmp_path: Path) -> None:
    assert init(*BASE, "--out", str(tmp_path), *VARIANTS[variant]).exit_code == 0
    for path in tmp_path.rglob("*.yml"):
        for job in yaml.safe_load(path.read_text())["jobs"].values():
            for step in job.get("steps", []):
                assert "${{" not in step.get("run", ""), path
            # the dispatch's inputs go to the reusable workflow's typed inputs, nowhere else
            given = job.get("with", {})
            assert all(v.startswith("${{ inputs.") for k, v in given.items() if "inputs." in str(v)), path
        assert len(re.findall(r"\$\{\{ inputs\.", path.read_text())) == (
            {"promote-by-hand.yml": 4, "hold.yml": 5}.get(path.name, 0)
        )


# ------------------------------------------------------------ run in the harness


def test_init_workflows_run_a_push_to_main_and_to_an_environment_branch(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory, tmp_path: Path
) -> None:
    out = tmp_path / "init"
    assert init(*BASE, "--out", str(out), "--auth", "token").exit_code == 0
    sha = head(factory)
    on_main = workflows({"event_name": "push", "ref_name": "main", "sha": sha})
    on_main.promoter = "acme/promoter"

    outputs = on_main.call(out / "main/.github/workflows/promote.yml")

    assert (outputs["commit"], outputs["environments"]) == (sha, '["dev", "qa", "prod"]')
    assert [(env, results[env]["state"]) for env, results in promotions(on_main)] == [
        ("dev", "success"), ("qa", "success"), ("prod", "success")]  # fmt: skip

    factory.commit("qa", {"env.yaml": ENV.replace("REGION: here", "REGION: there")}, "qa: move")
    on_qa = workflows({"event_name": "push", "ref_name": "qa", "sha": head(factory, "qa")})
    on_qa.promoter = "acme/promoter"

    outputs = on_qa.call(out / "qa/.github/workflows/schedule.yml")

    assert json.loads(outputs["environments"]) == ["qa"]
    [(env, results)] = promotions(on_qa)
    assert (env, results["qa"]["state"]) == ("qa", "success")
    assert "REGION: there" in (factory.platform_file("qa", "small/app-t2/platform-config.yaml") or "")


# ------------------------------------------------------------ bad flags


BAD = [
    (["--ref", "main"], "error: --ref 'main': not a full commit SHA or a version tag (a branch moves)"),
    (["--ref", "5e1f4c2"], "error: --ref 5e1f4c2: a short SHA; give the commit's full 40-character SHA"),
    (["--promoter-repo", "acme"], "error: --promoter-repo 'acme': not a GitHub repository OWNER/NAME"),
    (["--promoter-repo", "a/b c"], "error: --promoter-repo 'a/b c': not a GitHub repository OWNER/NAME"),
    (["--tag", "latest"], "error: --tag 'latest': not a version tag (such as v0.1.0)"),
    (["--environments", "dev,Prod"], "error: --environments: 'Prod' is not an environment name"),
    (["--environments", "dev,on"], "error: --environments: 'on' is not an environment name"),
    (["--environments", "dev,dev"], "error: --environments 'dev,dev': an environment is named twice"),
    (["--main-branch", "dev"], "error: --main-branch 'dev': an environment's branch too"),
    (["--main-branch", "a'b"], "error: --main-branch \"a'b\": not a plain branch name"),
    (["--auth", "ssh"], "error: Invalid value for '--auth': 'ssh' is not one of 'app', 'token'."),
    (["--skeleton"], "error: --skeleton needs --platform-repo URL"),
    (["--platform-repo", "https://github.com/acme/platform"], "error: --platform-repo 'https://github.com/acme/platform': goes with --skeleton"),
    (["--skeleton", "--platform-repo", "../platform.git"], "error: --platform-repo '../platform.git': the github forge needs"),
    (["--branch", "feature"], "error: --branch 'feature': neither main nor an environment's (dev, qa, prod)"),
]  # fmt: skip


@pytest.mark.parametrize(("flags", "line"), BAD, ids=[" ".join(f) for f, _ in BAD])
def test_bad_flags_are_exit_2_with_one_clear_line(flags: list[str], line: str, tmp_path: Path) -> None:
    result = init(*BASE, *flags, "--out", str(tmp_path / "out"))  # the last of a flag wins
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert lines[-1].startswith(line), result.stderr
    if "Invalid value" not in line:  # click's own errors come after the usage, as for every command
        assert len(lines) == 1, result.stderr
    assert not (tmp_path / "out").exists()


def test_a_release_tag_is_pinned_as_its_commits_sha(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "server" / "acme" / "promoter.git"  # the promoter's copy, as GitHub serves it
    subprocess.run(["git", "init", "--quiet", "--bare", str(copy)], check=True)
    work = tmp_path / "work"
    subprocess.run(["git", "init", "--quiet", str(work)], check=True)
    _git(
        work,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "--quiet",
        "--allow-empty",
        "-m",
        "release",
    )
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "tag", "--annotate", "v1.2.3", "-m", "v1.2.3")
    _git(work, "push", "--quiet", str(copy), "HEAD:refs/heads/main", "refs/tags/v1.2.3")
    commit = _git(work, "rev-parse", "HEAD").strip()
    monkeypatch.setenv("GITHUB_SERVER_URL", f"file://{tmp_path / 'server'}")
    result = init(
        "init", "--promoter-repo", "acme/promoter", "--ref", "v1.2.3", "--out", str(tmp_path / "out")
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(
        f"--ref v1.2.3: pinned as its commit {commit}\n"
    )  # the annotated tag's commit
    render = (tmp_path / "out/main/.github/workflows/render.yml").read_text()
    assert f"uses: acme/promoter/actions/render@{commit} # v1.2.3\n" in render
    missing = init(
        "init", "--promoter-repo", "acme/promoter", "--ref", "v9.9.9", "--out", str(tmp_path / "o2")
    )
    assert missing.exit_code == 2
    assert missing.stderr.startswith(
        f"error: --ref v9.9.9: cannot find the tag's commit at file://{tmp_path / 'server'}/acme/promoter.git (no such tag)"
    )
    assert not (tmp_path / "o2").exists()


# ------------------------------------------------------------ where it writes


def _git(path: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True).stdout


def test_the_working_tree_gets_its_branchs_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "cp"
    _git(tmp_path, "init", "-q", "-b", "main", str(repo))
    (repo / "workloads").mkdir()
    monkeypatch.chdir(repo / "workloads")
    result = init(*BASE)
    assert result.exit_code == 0, result.output
    assert sorted(p for p in written(repo) if not p.startswith(".git/")) == [
        f".github/workflows/{n}" for n in ("hold.yml", "promote-by-hand.yml", "promote.yml", "render.yml")
    ]
    again = f"promoter init --promoter-repo acme/promoter --ref {SHA} --tag v0.1.0 --environments dev,qa,prod"
    assert f"check out each other branch (dev, qa, prod) in turn and run: {again}" in result.stdout

    _git(repo, "checkout", "-q", "-b", "qa")
    result = init(*BASE)
    assert result.exit_code == 0, result.output
    assert "wrote     .github/workflows/schedule.yml" in result.stdout
    assert "unchanged .github/workflows/render.yml" in result.stdout  # the same file as main's

    _git(repo, "checkout", "-q", "-b", "feature")
    result = init(*BASE)
    assert result.exit_code == 2
    assert result.stderr == (
        "error: the checked-out branch 'feature' is neither main nor an environment's (dev, qa, prod): "
        "check one out, or give --branch or --out\n"
    )


def test_nothing_is_overwritten_without_force(tmp_path: Path) -> None:
    mine = tmp_path / "dev/.github/workflows/schedule.yml"
    mine.parent.mkdir(parents=True)
    mine.write_text("# my own\n")
    result = init(*BASE, "--out", str(tmp_path))
    assert result.exit_code == 2
    assert (
        result.stderr
        == f"error: {mine} exists with other content (1 file); nothing written: --force replaces them\n"
    )
    assert sorted(written(tmp_path)) == ["dev/.github/workflows/schedule.yml"]  # nothing else either
    forced = init(*BASE, "--out", str(tmp_path), "--force")
    assert forced.exit_code == 0 and "replaced  dev/.github/workflows/schedule.yml" in forced.stdout
    assert "name: schedule" in mine.read_text()
    rerun = init(*BASE, "--out", str(tmp_path))
    assert rerun.exit_code == 0 and set(
        ln.split()[0] for ln in rerun.stdout.split("\n\n")[0].splitlines()
    ) == {"unchanged"}


def test_a_folder_that_cannot_be_written_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "qa").write_text("a file where qa's folder goes\n")
    result = init(*BASE, "--out", str(out))
    assert result.exit_code == 2
    assert (
        result.stderr
        == f"error: {out}/qa/.github/workflows: cannot write (Not a directory); nothing written\n"
    )
    assert list(written(out)) == ["qa"]  # main's and dev's files, written first, are gone too


def committed(out: Path, repo: Path, environments: tuple[str, ...]) -> Path:
    """A control-plane repo holding what ``init --out`` wrote: main's files, then each environment
    branch's, each branch a commit of its own."""
    _git(repo.parent, "init", "-q", "-b", "main", str(repo))
    for branch in ("main", *environments):
        if branch != "main":
            _git(repo, "checkout", "-q", "--orphan", branch)
            _git(repo, "rm", "-rqf", "--ignore-unmatch", ".")
        shutil.copytree(out / branch, repo, dirs_exist_ok=True)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", branch)
    return repo


def test_the_skeleton_validates_and_renders(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [
        "--skeleton",
        "--platform-repo",
        "https://github.com/acme/platform",
        "--environments",
        "dev,staging,prod",
    ]
    result = init(*BASE, "--out", str(out), *args)
    assert result.exit_code == 0, result.output
    repo = committed(out, tmp_path / "cp", ("dev", "staging", "prod"))
    pipeline = yaml.safe_load((out / "main/promoter.yaml").read_text())
    assert [(e["name"], e["merge"]) for e in pipeline["spec"]["environments"]] == [
        ("dev", "auto"), ("staging", "auto"), ("prod", "manual")]  # fmt: skip
    valid = init("validate", "--control-plane", str(repo), "--committed", "-o", "json")
    assert valid.exit_code == 0, valid.output
    report = json.loads(valid.stdout)
    assert [(e["environment"], e["assignments"]) for e in report["environments"]] == [
        ("dev", 1), ("staging", 1), ("prod", 1)]  # fmt: skip


PIPELINE = """\
apiVersion: promoter.dev/v1alpha1
kind: Pipeline
metadata: {name: platform}
spec:
  platformRepo: {url: https://github.com/acme/platform}
  environments:
    - {name: dev, branch: env/dev}
    - {name: staging}
    - {name: prod, branch: env/prod}
"""


def test_the_environments_and_their_branches_come_from_the_pipeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "cp"
    _git(tmp_path, "init", "-q", "-b", "main", str(repo))
    (repo / "promoter.yaml").write_text(PIPELINE)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "pipeline")
    monkeypatch.chdir(repo)
    out = tmp_path / "out"
    result = init(*BASE, "--out", str(out))
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("environments from main:promoter.yaml at ")
    assert result.stderr.endswith(": dev, staging, prod\n")
    assert sorted({p.split("/.github/")[0] for p in written(out)}) == [
        "env/dev",
        "env/prod",
        "main",
        "platform-repo",
        "staging",
    ]
    by_hand = yaml.safe_load((out / "main/.github/workflows/promote-by-hand.yml").read_text())
    assert by_hand[True]["workflow_dispatch"]["inputs"]["to"]["options"] == ["dev", "staging", "prod"]
    schedule = yaml.safe_load((out / "env/prod/.github/workflows/schedule.yml").read_text())
    assert schedule[True]["push"]["branches"] == ["env/dev", "staging", "env/prod"]
    given = schedule["jobs"]["schedule"]["with"]["schedule"]
    for branch, env in (("env/dev", "dev"), ("staging", "staging"), ("env/prod", "prod")):
        assert evaluate(given, {"github": {"ref_name": branch}}) == env
    render = yaml.safe_load((out / "staging/.github/workflows/render.yml").read_text())
    assert render[True]["pull_request"]["branches"] == ["main", "env/dev", "staging", "env/prod"]
    if shutil.which("shellcheck") is not None:
        lint([str(p) for p in out.rglob("*.yml")])
    # on an environment branch, the Pipeline is still main's; the re-run needs no --environments
    _git(repo, "checkout", "-q", "-b", "env/dev")
    here = init(*BASE)
    assert here.exit_code == 0, here.output
    assert (repo / ".github/workflows/schedule.yml").exists()
    assert f"and run: promoter init --promoter-repo acme/promoter --ref {SHA} --tag v0.1.0\n" in here.stdout


def test_the_skeleton_names_the_forge_for_github_enterprise_server(tmp_path: Path) -> None:
    url = "https://ghe.example.com/acme/platform"
    result = init(*BASE, "--out", str(tmp_path), "--branch", "main", "--skeleton", "--platform-repo", url)
    assert result.exit_code == 0, result.output
    pipeline = yaml.safe_load((tmp_path / "promoter.yaml").read_text())
    assert pipeline["spec"]["platformRepo"] == {"url": url, "forge": "github"}
    assert sorted(written(tmp_path)) == [
        ".github/workflows/hold.yml",
        ".github/workflows/promote-by-hand.yml",
        ".github/workflows/promote.yml",
        ".github/workflows/render.yml",
        "config-schema.yaml",
        "promoter.yaml",
        "workloads/hello-world.yaml",
    ]


def test_the_skeletons_check_platform_gate_passes_when_the_platform_repo_is_a_url(
    factory: ControlPlaneFactory,
) -> None:
    """On the github forge the gate gets the platform repo's URL; check-platform reads the
    promoter's local clone (PROMOTER_PLATFORM_CACHE), which holds the merged commit."""
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    done = init("promote", "--control-plane", str(path), "--to", "dev")
    assert done.exit_code == 0, done.output
    merged = subprocess.run(
        ["git", "-C", str(factory.platform), "rev-parse", "dev"], capture_output=True, text=True, check=True
    ).stdout.strip()
    gate = CommandGate(["promoter", "check-platform"], shell=False, retry=False, interval=1.0,
                       attempt_timeout=60.0, source=Source("promoter.yaml"))  # fmt: skip
    clone = type("Clone", (), {"path": Path(factory.platform)})()
    ctx = GateContext(
        "dev", head(factory), merged, "https://github.com/acme/platform", "dev", FakeClock(), platform=clone
    )
    env = gate.environment(ctx)
    result = CliRunner().invoke(cli, ["check-platform"], env=env)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("ok: ") and result.output.rstrip().endswith(f"at {merged[:12]}")
    env.pop("PROMOTER_PLATFORM_CACHE")  # before: the URL alone
    assert CliRunner().invoke(cli, ["check-platform"], env=env).exit_code == 2


FAN_OUT = "staging,prod-eu:staging,prod-us:staging,global-edge:prod-eu+prod-us"


def test_init_writes_a_fan_out_whose_skeleton_validates_as_a_graph(tmp_path: Path) -> None:
    """staging, then prod-eu and prod-us side by side, then global-edge after both: the Pipeline
    says what each follows, the workflows hold the environment nothing follows for approval, and
    they pass the linters."""
    out = tmp_path / "out"
    args = ["--skeleton", "--platform-repo", "https://github.com/acme/platform", "--environments", FAN_OUT]
    result = init(*BASE, "--out", str(out), *args)
    assert result.exit_code == 0, result.output
    pipeline = yaml.safe_load((out / "main/promoter.yaml").read_text())["spec"]["environments"]
    assert [(e["name"], e.get("follows"), e["merge"]) for e in pipeline] == [
        ("staging", None, "auto"),
        ("prod-eu", ["staging"], "auto"),
        ("prod-us", ["staging"], "auto"),
        ("global-edge", ["prod-eu", "prod-us"], "manual"),
    ]
    promote = (out / "main/.github/workflows/promote.yml").read_text()
    assert "hold-for-approval: global-edge\n" in promote
    assert (
        "prod-eu (after staging), prod-us (after staging), global-edge (after prod-eu and prod-us)" in promote
    )
    schedule = (out / "prod-us/.github/workflows/schedule.yml").read_text()
    assert "hold-for-approval: global-edge\n" in schedule
    repo = committed(out, tmp_path / "cp", ("staging", "prod-eu", "prod-us", "global-edge"))
    _git(repo, "checkout", "-q", "main")
    graph = init("graph", "--control-plane", str(repo))
    assert graph.exit_code == 0, graph.output
    assert "e0 --> e1" in graph.stdout and "e2 --> e3" in graph.stdout and "e0 --> e3" not in graph.stdout
    valid = init("validate", "--control-plane", str(repo), "--committed")
    assert valid.exit_code == 0, valid.output
    if shutil.which("shellcheck") is not None:
        lint(sorted(str(p) for p in out.rglob("*.yml")))


def test_two_leaves_are_both_held_for_approval(tmp_path: Path) -> None:
    assert (
        init(
            *BASE, "--out", str(tmp_path), "--environments", "staging,prod-eu:staging,prod-us:staging"
        ).exit_code
        == 0
    )
    promote = (tmp_path / "main/.github/workflows/promote.yml").read_text()
    assert "hold-for-approval: prod-eu,prod-us\n" in promote
    assert "# prod-eu and prod-us each start only after the reviewers" in promote


@pytest.mark.parametrize(
    ("flag", "says"),
    [
        ("staging,prod:stagin", "prod follows 'stagin', not one of staging, prod"),
        ("staging,prod:prod", "prod follows 'prod', itself"),
        ("a:b,b:a", "a cycle: no commit could ever reach a, b"),
    ],
)
def test_a_bad_graph_is_exit_2(flag: str, says: str, tmp_path: Path) -> None:
    result = init(*BASE, "--out", str(tmp_path), "--environments", flag)
    assert result.exit_code == 2 and says in result.output, result.output
