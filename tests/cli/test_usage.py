"""The command line as people use it: one error style, output formats, exit codes, the control
plane found from the working directory, the working tree, completion, colour."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.forges.notes import NoteStatuses
from promoter.gitcmd import Git
from promoter.model import Status
from tests.support import forkserver
from tests.support.helpers import ControlPlaneFactory
from tests.support.paths import ROOT


def test_click_usage_errors_use_the_promoters_error_style() -> None:
    result = CliRunner().invoke(cli, ["render", "--control-plane", "."])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "Usage: promoter render [OPTIONS]"
    assert lines[-1] == "error: Missing option '--env'."
    assert "Error:" not in result.stderr


def test_an_unknown_command_is_one_error_line_after_the_usage() -> None:
    result = CliRunner().invoke(cli, ["bogus"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "error: No such command 'bogus'."


def test_the_control_plane_defaults_to_the_repo_of_the_working_directory(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = factory.create()
    monkeypatch.delenv("PROMOTER_CONTROL_PLANE", raising=False)
    monkeypatch.chdir(path / "workloads")
    result = CliRunner().invoke(cli, ["validate"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1].startswith("valid: main ")


def test_a_subfolder_as_control_plane_reads_the_platform_repo_relative_to_its_top(
    factory: ControlPlaneFactory,
) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path / "workloads"), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "no git repository" not in result.output


def test_outside_any_repo_the_error_says_to_pass_the_control_plane(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROMOTER_CONTROL_PLANE", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    result = CliRunner().invoke(cli, ["validate"])
    assert result.exit_code == 2
    assert result.stderr == "error: the working directory (no --control-plane given): not a git repository\n"


# ------------------------------------------------------------ the working tree


def _git(path: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True).stdout


def _typo(path: Path) -> None:
    target = path / "workloads" / "app.yaml"
    target.write_text(target.read_text().replace("{name: t2, environment: qa,", "{name: t2, enviroment: qa,"))


TYPO = (
    "workloads/app.yaml:8: unknown field 'spec.deploymentTargets[1].enviroment', did you mean 'environment'?"
)


def test_validate_reads_uncommitted_edits_and_says_so_first(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    _typo(path)
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "reading the working tree of main: 1 uncommitted file (workloads/app.yaml); --committed reads commits only",
        f"error: {TYPO}",
    ]
    committed = CliRunner().invoke(cli, ["validate", "--control-plane", str(path), "--committed"])
    assert committed.exit_code == 0 and committed.stderr == ""
    assert _git(path, "status", "--porcelain") == " M workloads/app.yaml\n"  # index and tree untouched


def test_a_clean_working_tree_reads_the_commit_silently(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    (path / "notes.txt").write_text("not a control-plane file\n")
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 0 and result.stderr == ""


def test_staged_reads_the_index_not_the_working_tree(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    _typo(path)
    _git(path, "add", "workloads/app.yaml")
    _git(path, "checkout", "--", "workloads/app.yaml")  # no-op: the tree equals the index
    (path / "workloads" / "app.yaml").write_text(_git(path, "show", "HEAD:workloads/app.yaml"))
    staged = CliRunner().invoke(cli, ["validate", "--control-plane", str(path), "--staged"])
    assert staged.exit_code == 2
    assert staged.stderr.splitlines() == [
        "reading the staged files of main: 1 uncommitted file (workloads/app.yaml)",
        f"error: {TYPO}",
    ]
    tree = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert tree.exit_code == 0, tree.output  # the working tree is back to the commit


def test_an_untracked_file_on_an_environment_branch_is_read(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    _git(path, "checkout", "-q", "dev")
    (path / "more.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: defaults}\ndata: {}\n")
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert (
        lines[0]
        == "reading the working tree of dev: 1 uncommitted file (more.yaml); --committed reads commits only"
    )
    assert lines[1] == "error: dev:more.yaml:1: duplicate ConfigMap 'defaults' (also at dev:env.yaml:11)"


def test_edits_on_another_branch_are_named_as_not_read(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    _git(path, "checkout", "-q", "-b", "feature")
    _typo(path)
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 0
    assert result.stderr == (
        "warning: uncommitted files on branch feature are not read (workloads/app.yaml): "
        "it is neither main nor an environment branch\n"
    )


def test_render_writes_the_working_tree(factory: ControlPlaneFactory, tmp_path: Path) -> None:
    path = factory.create()
    _git(path, "checkout", "-q", "dev")
    env = path / "env.yaml"
    env.write_text(env.read_text().replace("REGION: here", "REGION: there"))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["render", "--control-plane", str(path), "--env", "dev", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("reading the working tree of dev: 1 uncommitted file (env.yaml)")
    assert any(b"there" in p.read_bytes() for p in out.rglob("*.yaml"))


def test_staged_and_committed_exclude_each_other(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path), "--staged", "--committed"])
    assert result.exit_code == 2
    assert result.stderr == "error: --committed and --staged exclude each other\n"


def test_the_pre_commit_hook_validates_what_is_staged(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "promoter-validate")
    assert hook["pass_filenames"] is False and hook["language"] == "python"
    program, *args = shlex.split(hook["entry"])
    assert program == "promoter"
    path = factory.create()
    _typo(path)
    _git(path, "add", "-A")
    monkeypatch.delenv("PROMOTER_CONTROL_PLANE", raising=False)
    monkeypatch.chdir(path)  # pre-commit runs hooks at the top of the repo
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"error: {TYPO}"


# ------------------------------------------------------------ output formats and exit codes


def test_validate_as_json_and_yaml_has_one_documented_shape(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    sha = _git(path, "rev-parse", "main").strip()
    as_json = CliRunner().invoke(cli, ["validate", "--control-plane", str(path), "-o", "json"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.stdout)
    assert data == {
        "valid": True,
        "mainCommit": sha,
        "workloads": 1,
        "templates": 0,
        "environments": [
            {"environment": env, "assignments": 1, "files": data["environments"][i]["files"]}
            for i, env in enumerate(("dev", "qa", "prod"))
        ],
        "uncommitted": None,
    }
    as_yaml = CliRunner().invoke(cli, ["validate", "--control-plane", str(path), "--output", "yaml"])
    assert yaml.safe_load(as_yaml.stdout) == data


def test_render_to_stdout_is_one_multi_document_yaml(factory: ControlPlaneFactory, tmp_path: Path) -> None:
    path = factory.create()
    result = CliRunner().invoke(cli, ["render", "--control-plane", str(path), "--env", "dev", "--out", "-"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "tree"
    CliRunner().invoke(cli, ["render", "--control-plane", str(path), "--env", "dev", "--out", str(out)])
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*.yaml") if ".promoter" not in p.parts)
    sources = [
        ln.removeprefix("# Source: ") for ln in result.stdout.splitlines() if ln.startswith("# Source: ")
    ]
    assert sorted(set(sources)) == written
    docs = [d for d in yaml.safe_load_all(result.stdout) if d is not None]
    on_disk = [
        d
        for p in sorted(out.rglob("*.yaml"))
        if ".promoter" not in p.parts
        for d in yaml.safe_load_all(p.read_text())
    ]
    assert sorted(json.dumps(d, sort_keys=True) for d in docs) == sorted(
        json.dumps(d, sort_keys=True) for d in on_disk
    )


def test_render_as_json_lists_the_files_it_wrote(factory: ControlPlaneFactory, tmp_path: Path) -> None:
    path = factory.create()
    out = tmp_path / "tree"
    args = ["render", "--control-plane", str(path), "--env", "qa", "--out", str(out), "-o", "json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["environment"] == "qa" and data["out"] == str(out) and data["assignments"] == 1
    assert data["files"] == sorted(
        str(p.relative_to(out)) for p in out.rglob("*.yaml") if ".promoter" not in p.parts
    )


def test_diff_exits_1_on_a_difference_and_0_without(factory: ControlPlaneFactory) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    args = ["diff", "--control-plane", str(path), "--env", "dev"]
    changed = CliRunner().invoke(cli, args)
    assert changed.exit_code == 1, changed.output
    assert CliRunner().invoke(cli, [*args, "--no-exit-code"]).exit_code == 0
    data = json.loads(CliRunner().invoke(cli, [*args, "-o", "json"]).stdout)
    assert data["changed"] is True and [e["environment"] for e in data["environments"]] == ["dev"]
    env = data["environments"][0]
    assert env["added"] == 3 and env["modified"] == 0 and env["removed"] == 0
    assert env["patch"].count("+++ b/") == 3
    assert CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--to", "dev"]).exit_code == 0
    same = CliRunner().invoke(cli, args)
    assert same.exit_code == 0, same.output
    assert yaml.safe_load(CliRunner().invoke(cli, [*args, "-o", "yaml"]).stdout)["changed"] is False


def test_a_long_status_is_cut_at_a_word_in_text_and_whole_in_json(factory: ControlPlaneFactory) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    git = Git(path)
    said = "healthy at 0123456789ab (" + "; ".join(f"gate soak {i}.0s: success" for i in range(1, 9)) + ")"
    NoteStatuses(git).post(git.out("rev-parse", "main"), Status("promoter/dev", "success", said))
    data = json.loads(CliRunner().invoke(cli, ["status", "--control-plane", str(path), "-o", "json"]).stdout)
    assert data["environments"][0]["description"] == said  # whole: git notes keep it
    text = CliRunner().invoke(cli, ["status", "--control-plane", str(path)]).stdout.splitlines()[1]
    shown = text.split("success   ", 1)[1].split("  [dev has", 1)[0]
    assert len(shown) <= 140 and shown.endswith("4.0s: success; gate soak...")  # not mid-word


def test_status_and_check_platform_speak_yaml(factory: ControlPlaneFactory) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    assert CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--to", "dev"]).exit_code == 0
    status = yaml.safe_load(
        CliRunner().invoke(cli, ["status", "--control-plane", str(path), "-o", "yaml"]).stdout
    )
    assert [(e["environment"], e["state"]) for e in status["environments"]] == [
        ("dev", "success"),
        ("qa", "none"),
        ("prod", "none"),
    ]
    check = CliRunner().invoke(
        cli, ["check-platform", "--repo", str(factory.platform), "--ref", "dev", "-o", "json"]
    )
    assert check.exit_code == 0, check.output
    data = json.loads(check.stdout)
    assert data["ok"] is True and data["problems"] == [] and data["manifests"] > 0


# ------------------------------------------------------------ shell completion


def _complete(words: str, cwd: Path | None = None) -> list[str]:
    env = {
        **os.environ,
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    env["_PROMOTER_COMPLETE"] = "bash_complete"
    env.pop("PROMOTER_CONTROL_PLANE", None)
    proc = forkserver.run("promoter", [], env=env, cwd=cwd)  # prog_name is "promoter" either way
    return [line for line in proc.stdout.splitlines() if line]  # bash_complete prints one newline for none


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_script_for_each_shell(shell: str) -> None:
    result = CliRunner().invoke(cli, ["completion", shell])
    assert result.exit_code == 0
    assert "_PROMOTER_COMPLETE" in result.stdout and f"{shell}_complete" in result.stdout


def test_environment_names_complete_from_the_pipeline(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    assert _complete("promoter render --env ", cwd=path) == ["plain,dev", "plain,qa", "plain,prod"]
    assert _complete(f"promoter diff --control-plane {path} --to q") == ["plain,qa"]
    assert _complete("promoter rollback --env p", cwd=path / "workloads") == ["plain,prod"]
    assert _complete("promoter promote --to ", cwd=path) == ["plain,dev", "plain,qa", "plain,prod"]
    assert _complete(f"promoter promote --control-plane {path} --schedule p") == ["plain,prod"]
    assert _complete("promoter hub rollout --env d", cwd=path) == ["plain,dev"]
    assert _complete("promoter init --environments dev,", cwd=path) == ["plain,dev,qa", "plain,dev,prod"]


def test_no_environment_names_where_there_is_no_control_plane(tmp_path: Path) -> None:
    assert _complete(f"promoter render --control-plane {tmp_path} --env ") == []


# ------------------------------------------------------------ help


def test_every_command_help_has_examples_and_docs_list_every_command() -> None:
    doc = (ROOT / "docs" / "cli.md").read_text()
    top = CliRunner().invoke(cli, ["--help"])
    assert "Examples:" in top.stdout
    for name in cli.list_commands(click.Context(cli)):
        result = CliRunner().invoke(cli, [name, "--help"])
        assert result.exit_code == 0, name
        examples = result.stdout.partition("\n  Examples:\n")[2]
        assert f"promoter {name}" in examples, f"{name} --help has no example"
        assert f"  {name} " in doc.split("```")[1], f"docs/cli.md's help listing lacks {name}"
        assert f"## `{name}`" in doc, f"docs/cli.md has no section for {name}"


def test_only_yaml_files_of_the_working_tree_are_hashed(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    _typo(path)
    (path / "node_modules").mkdir()
    (path / "node_modules" / "big.js").write_text("module.exports = 'not a control-plane file'\n")
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 2 and result.stderr.startswith("reading the working tree of main")
    blob = _git(path, "hash-object", "node_modules/big.js").strip()
    missing = subprocess.run(["git", "-C", str(path), "cat-file", "-e", blob], capture_output=True)
    assert missing.returncode != 0  # never written into the object store


def test_diff_shows_what_an_uncommitted_environment_edit_would_change(factory: ControlPlaneFactory) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    assert CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--to", "dev"]).exit_code == 0
    _git(path, "checkout", "-q", "dev")
    env = path / "env.yaml"
    env.write_text(env.read_text().replace("REGION: here", "REGION: there"))
    result = CliRunner().invoke(cli, ["diff", "--control-plane", str(path), "--env", "dev", "-o", "json"])
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[0].startswith(
        "reading the working tree of dev: 1 uncommitted file (env.yaml)"
    )
    (dev,) = json.loads(result.stdout)["environments"]
    assert (dev["added"], dev["modified"], dev["removed"]) == (0, 1, 0)
    assert "-  REGION: here\n+  REGION: there\n" in dev["patch"]
    committed = CliRunner().invoke(cli, ["diff", "--control-plane", str(path), "--env", "dev", "--committed"])
    assert committed.exit_code == 0, committed.output


def test_a_file_name_with_a_newline_cannot_forge_a_line(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    (path / "bad\nerror: forged.yaml").write_text("# nothing\n")
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "reading the working tree of main: 1 uncommitted file (bad\\nerror: forged.yaml); --committed reads commits only"
    ]


def test_rollback_output_formats_go_with_dry_run_only() -> None:
    result = CliRunner().invoke(cli, ["rollback", "--env", "prod", "-o", "json"])
    assert result.exit_code == 2
    assert (
        result.stderr
        == "error: -o/--output json|yaml goes with --dry-run: a rollback itself reports as text\n"
    )


def test_render_to_stdout_takes_no_output_format(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    result = CliRunner().invoke(
        cli, ["render", "--control-plane", str(path), "--env", "dev", "--out", "-", "-o", "json"]
    )
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("error: --out - writes the manifests to stdout")
