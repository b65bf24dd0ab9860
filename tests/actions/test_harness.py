"""The composite actions, run step by step in bash the way the GitHub runner runs them.

The harness reads ``actions/<name>/action.yml`` and, for each step, does what the runner does:
evaluates the ``${{ }}`` expressions of ``env:`` (inputs, earlier steps' outputs, github and
runner contexts), gives the step fresh ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``,
``GITHUB_ENV`` and ``GITHUB_PATH`` files and ``GITHUB_ACTION_PATH``, runs ``run:`` with
``bash --noprofile --norc -eo pipefail``, then reads the files back. ``uses:`` steps (setup-python)
are skipped: the runner's own python3 stands in, as with ``python-version: ""``. As on GitHub,
composite actions get no ``INPUT_*`` variables: inputs reach a step only through ``env:``.

The promoter is installed for real by actions/install.sh from a copy of this checkout (the
runner downloads the action's repository the same way), its locked dependencies from the
wheelhouse with no index, so the tests need no network: once per session
(``tests/support/action_install.py``), and once more by the test that checks what the install says.
The other tests' jobs find an install whose ``promoter`` command forks each run from the pytest
worker's fork server (``forked_toolchain``): the same code, without its imports in every step.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from promoter.errors import one_line
from tests.support.helpers import ENV, PIPELINE, WORKLOAD, ControlPlaneFactory

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
COMPARISON = re.compile(r"^([\w.-]+)\s*(==|!=)\s*'([^']*)'$")


# ------------------------------------------------------------ the harness


def parse_file_commands(text: str) -> dict[str, str]:
    """``name=value`` lines and ``name<<DELIMITER`` blocks, as the runner reads GITHUB_OUTPUT/ENV."""
    values: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            while lines[i] != delimiter:  # an IndexError here is a missing delimiter
                body.append(lines[i])
                i += 1
            i += 1
            values[name] = "\n".join(body)
        else:
            name, value = line.split("=", 1)
            values[name] = value
    return values


@dataclass
class StepRun:
    id: str
    skipped: bool
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, str]
    summary: str

    @property
    def returncode(self) -> int:
        return next((s.returncode for s in self.steps if s.returncode), 0)

    @property
    def stdout(self) -> str:
        return "".join(s.stdout for s in self.steps)

    @property
    def stderr(self) -> str:
        return "".join(s.stderr for s in self.steps)


class Runner:
    """Runs one composite action of ``action_root`` in ``workspace``, as GitHub's runner would."""

    def __init__(self, action_root: Path, runner_temp: Path, workspace: Path, bin_dir: Path) -> None:
        self.action_root = action_root
        self.temp = runner_temp
        self.workspace = workspace
        self.bin_dir = bin_dir
        self.count = 0

    def run(
        self, name: str, inputs: Mapping[str, str] | None = None, github: Mapping[str, str] | None = None
    ) -> ActionRun:
        action_dir = self.action_root / "actions" / name
        action = yaml.safe_load((action_dir / "action.yml").read_text())
        assert action["runs"]["using"] == "composite"
        given = dict(inputs or {})
        unknown = set(given) - set(action["inputs"])
        assert not unknown, f"{name} has no inputs {unknown}"
        context: dict[str, Any] = {
            "inputs": {k: given.get(k, str(v.get("default", ""))) for k, v in action["inputs"].items()},
            "steps": {},
            "github": {"workspace": str(self.workspace), "action_path": str(action_dir), **(github or {})},
            "runner": {"temp": str(self.temp), "os": "Linux"},
        }
        job_env: dict[str, str] = {}
        paths: list[str] = []
        summary: list[str] = []
        runs: list[StepRun] = []
        for step in action["runs"]["steps"]:
            step_id = step.get("id", f"step{len(runs)}")
            failed = any(r.returncode for r in runs)
            if failed or "uses" in step or not self._condition(step.get("if"), context):
                runs.append(StepRun(step_id, skipped=True))
                context["steps"][step_id] = {"outputs": {}}
                continue
            result = self._run_step(step, step_id, context, action_dir, job_env, paths, summary)
            runs.append(result)
            context["steps"][step_id] = {"outputs": result.outputs}
        outputs = {k: self._evaluate(v["value"], context) for k, v in action.get("outputs", {}).items()}
        return ActionRun(runs, outputs, "".join(summary))

    def _run_step(
        self,
        step: dict[str, Any],
        step_id: str,
        context: dict[str, Any],
        action_dir: Path,
        job_env: dict[str, str],
        paths: list[str],
        summary: list[str],
    ) -> StepRun:
        assert step.get("shell") == "bash", "a composite run step must name its shell"
        self.count += 1
        files = {n: self.temp / f"_runner_file_commands/{n.lower()}_{self.count}" for n in _FILES}
        for path in files.values():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")
        script = self.temp / f"_step_{self.count}.sh"
        script.write_text(step["run"])
        env = {
            **os.environ,
            **job_env,
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "RUNNER_TEMP": str(self.temp),
            "RUNNER_OS": "Linux",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_ACTION_PATH": str(action_dir),
            **{k: v for k, v in context["github"].items() if k.startswith("GITHUB_")},
            **{name: str(path) for name, path in files.items()},
        }
        env["PATH"] = os.pathsep.join([*reversed(paths), str(self.bin_dir), env.get("PATH", "")])
        env.update({k: self._evaluate(str(v), context) for k, v in step.get("env", {}).items()})
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        outputs = parse_file_commands(files["GITHUB_OUTPUT"].read_text())
        job_env.update(parse_file_commands(files["GITHUB_ENV"].read_text()))
        paths.extend(p for p in files["GITHUB_PATH"].read_text().splitlines() if p)
        summary.append(files["GITHUB_STEP_SUMMARY"].read_text())
        return StepRun(step_id, False, proc.returncode, proc.stdout, proc.stderr, outputs)

    def _evaluate(self, text: str, context: dict[str, Any]) -> str:
        return EXPRESSION.sub(lambda m: self._lookup(m.group(1), context), text)

    def _lookup(self, path: str, context: dict[str, Any]) -> str:
        value: Any = context
        for part in path.split("."):
            assert isinstance(value, dict), f"the harness cannot evaluate ${{{{ {path} }}}}"
            value = value.get(part, "")
        return str(value)

    def _condition(self, condition: str | None, context: dict[str, Any]) -> bool:
        if condition is None:
            return True
        match = COMPARISON.match(EXPRESSION.sub(r"\1", condition).strip())
        assert match, f"the harness cannot evaluate if: {condition}"
        left, op, right = match.groups()
        return (self._lookup(left, context) == right) == (op == "==")


_FILES = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH")


# ------------------------------------------------------------ fixtures


@pytest.fixture
def runner(
    action_root: Path,
    forked_toolchain: tuple[Path, Path, dict[str, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Runner:
    temp, bin_dir, pip_env = forked_toolchain
    for key, value in pip_env.items():
        monkeypatch.setenv(key, value)
    for key in ("GITHUB_REF_NAME", "GITHUB_BASE_REF", "GITHUB_WORKSPACE", "PROMOTER_CONTROL_PLANE"):
        monkeypatch.delenv(key, raising=False)
    return Runner(action_root, temp, tmp_path, bin_dir)


def gated(qa_gate: str) -> str:
    return PIPELINE.replace("    - name: qa\n", f"    - name: qa\n      gates: [{qa_gate}]\n")


# no setup-python and no actions/cache (uses: steps do not run here): the runner's python3, pip
FAST = {"control-plane": "control-plane", "poll-interval": "0.1s", "python-version": "", "cache": "false"}


# ------------------------------------------------------------ the harness itself


def test_file_commands_read_as_the_runner_reads_them() -> None:
    text = "a=1\nmulti<<ghadelimiter_x\nline one\nb=not a key\nghadelimiter_x\nempty=\n"
    assert parse_file_commands(text) == {"a": "1", "multi": "line one\nb=not a key", "empty": ""}


def test_harness_passes_env_path_and_outputs_between_steps(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "actions" / "probe").mkdir(parents=True)
    (root / "actions" / "probe" / "action.yml").write_text(
        yaml.safe_dump(
            {
                "name": "probe",
                "description": "harness probe",
                "inputs": {"word": {"description": "w", "default": "dflt"}},
                "outputs": {"seen": {"description": "s", "value": "${{ steps.two.outputs.seen }}"}},
                "runs": {
                    "using": "composite",
                    "steps": [
                        {
                            "id": "one",
                            "shell": "bash",
                            "run": 'echo "FROM_ONE=$WORD" >> "$GITHUB_ENV"\n'
                            'mkdir -p "$RUNNER_TEMP/tools" && printf \'#!/bin/sh\\necho tool\\n\' > "$RUNNER_TEMP/tools/probe-tool"\n'
                            'chmod +x "$RUNNER_TEMP/tools/probe-tool" && echo "$RUNNER_TEMP/tools" >> "$GITHUB_PATH"\n'
                            'echo "hello from one" >> "$GITHUB_STEP_SUMMARY"',
                            "env": {"WORD": "${{ inputs.word }}"},
                        },
                        {
                            "id": "two",
                            "shell": "bash",
                            "run": '{ echo "seen<<EOF"; echo "$FROM_ONE $(probe-tool) ${INPUT_WORD:-no-input-var}"; echo "$GITHUB_ACTION_PATH"; echo EOF; } >> "$GITHUB_OUTPUT"',
                        },
                    ],
                },
            }
        )
    )
    (tmp_path / "bin").mkdir()
    run = Runner(root, tmp_path / "temp", tmp_path, tmp_path / "bin").run("probe", {"word": "given"})
    assert run.returncode == 0, run.stderr
    assert run.outputs == {"seen": f"given tool no-input-var\n{root / 'actions' / 'probe'}"}
    assert run.summary == "hello from one\n"


# ------------------------------------------------------------ actions/promote


def test_install_step_installs_this_checkout(runner: Runner, factory: ControlPlaneFactory) -> None:
    factory.create(platform_branches=("dev", "qa", "prod"))
    for shared in runner.temp.glob("promoter-*"):  # the forked command: this job installs its own
        shutil.rmtree(shared)
    run = runner.run("promote", {**FAST, "to": "dev"})
    install = next(s for s in run.steps if s.id == "install")
    assert install.returncode == 0, install.stderr
    assert install.stdout.strip().endswith("version 0.0")  # setuptools-scm's, for an archive with no tag
    assert (
        "installed promoter 0.0 from the action's checkout (not a release: no release tag before this commit); "
        "its locked dependencies with uv, in "
    ) in install.stdout
    promoter = Path(install.outputs["promoter"])
    assert promoter.is_file() and promoter.parent.parent.parent == runner.temp
    imported = subprocess.run(
        [str(promoter.parent / "python"), "-c", "import promoter; print(promoter.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=runner.workspace,
    ).stdout
    assert imported.startswith(str(promoter.parent.parent))  # the venv's copy, not the checkout
    assert [s.id for s in run.steps if s.skipped] == ["python", "cache-key", "step2"]  # step2: actions/cache


def test_promote_action_promotes_every_environment(runner: Runner, factory: ControlPlaneFactory) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    head = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "main"], capture_output=True, text=True, check=True
    ).stdout.strip()
    run = runner.run("promote", FAST)
    assert run.returncode == 0, run.stderr
    assert run.outputs["commit"] == head
    assert (run.outputs["flow"], run.outputs["ok"], run.outputs["failed-environment"]) == (
        "promotion",
        "true",
        "",
    )
    results = json.loads(run.outputs["results"])
    assert {env: r["state"] for env, r in results.items()} == {
        "dev": "success",
        "qa": "success",
        "prod": "success",
    }
    platform = str(factory.platform)
    assert json.loads(run.outputs["pr-urls"]) == {
        e: f"{platform}#promoter/{e}" for e in ("dev", "qa", "prod")
    }
    assert json.loads(run.outputs["report"])["mainCommit"] == head
    assert results["prod"]["mergeSha"] == factory.refs()["platform.git:refs/heads/prod"]
    summary = run.summary.splitlines()
    assert summary[0] == f"## Promotion of `{head[:12]}`: done"
    assert "| environment | result | PR | merge commit | gates | duration |" in summary
    assert any(line.startswith("| qa | ✅ success | `") for line in summary)
    assert "```mermaid" in summary and '  env2["prod<br>success"]' in summary
    out = run.stdout.splitlines()
    assert out.index("::group::dev") < out.index("::group::qa") < out.index("::group::prod")
    assert out.count("::endgroup::") == 3


def test_promote_action_scheduling_flow(runner: Runner, factory: ControlPlaneFactory) -> None:
    factory.create(platform_branches=("dev", "qa", "prod"))
    assert runner.run("promote", FAST).returncode == 0
    factory.commit("dev", {"env.yaml": ENV.replace("REGION: here", "REGION: there")}, "dev: move")
    run = runner.run("promote", {**FAST, "schedule": "dev"})
    assert run.returncode == 0, run.stderr
    assert run.outputs["flow"] == "scheduling"
    assert list(json.loads(run.outputs["results"])) == ["dev"]
    assert "REGION: there" in (factory.platform_file("dev", "small/app-t/platform-config.yaml") or "")
    assert "env1" not in run.summary  # the scheduling flow's diagram shows its one environment


def test_promote_action_dry_run_pushes_nothing(runner: Runner, factory: ControlPlaneFactory) -> None:
    factory.create(platform_branches=("dev", "qa", "prod"))
    before = factory.refs()
    run = runner.run("promote", {**FAST, "dry-run": "true"})
    assert run.returncode == 0, run.stderr
    assert json.loads(run.outputs["results"])["dev"]["state"] == "dry-run"
    assert factory.refs() == before


def test_promote_action_failure_reports_and_fails(runner: Runner, factory: ControlPlaneFactory) -> None:
    factory.create(
        {"promoter.yaml": gated('{command: ["false"]}'), "workloads/app.yaml": WORKLOAD},
        platform_branches=("dev", "qa", "prod"),
    )
    run = runner.run("promote", FAST)
    assert run.returncode == 1
    assert (run.outputs["ok"], run.outputs["failed-environment"]) == ("false", "qa")
    assert json.loads(run.outputs["results"])["qa"]["state"] == "failure"
    assert "prod" not in json.loads(run.outputs["results"])
    assert "| qa | ❌ failure |" in run.summary
    assert '  env2["prod<br>not run"]' in run.summary.splitlines()
    assert "::error title=promoter%3A qa failure::qa: gate command false failed" in run.stderr


def test_bad_input_is_annotated_on_its_file_and_line(runner: Runner, factory: ControlPlaneFactory) -> None:
    bad = WORKLOAD.replace("  workspace: team\n", "  workspace: team\n  colour: blue\n")
    factory.create({"promoter.yaml": PIPELINE, "workloads/app.yaml": bad})
    run = runner.run("promote", FAST)
    assert run.returncode == 2
    annotation = next(line for line in run.stderr.splitlines() if line.startswith("::error "))
    assert annotation.startswith(
        "::error file=control-plane/workloads/app.yaml,line=6,title=promoter%3A bad input::"
    )
    assert run.outputs["ok"] == ""  # nothing ran, nothing to report


def test_environment_branch_error_is_annotated_on_that_branch_only(
    runner: Runner, factory: ControlPlaneFactory
) -> None:
    bad_env = ENV.replace("spec: {reconciler: flux}", "spec: {reconciler: flux, colour: blue}")
    factory.create(envs={"dev": {"env.yaml": bad_env}, "qa": {"env.yaml": ENV}, "prod": {"env.yaml": ENV}})
    on_dev = runner.run("promote", FAST, github={"GITHUB_REF_NAME": "dev"})
    assert "::error file=control-plane/env.yaml,line=4," in on_dev.stderr
    on_main = runner.run("promote", FAST, github={"GITHUB_REF_NAME": "main"})
    annotation = next(line for line in on_main.stderr.splitlines() if line.startswith("::error "))
    assert annotation.startswith("::error title=dev%3Aenv.yaml%3A4::")


# ------------------------------------------------------------ actions/render


def test_render_action_diffs_every_environment(runner: Runner, factory: ControlPlaneFactory) -> None:
    factory.create(platform_branches=("dev", "qa", "prod"))
    before = factory.refs()
    run = runner.run("render", {"control-plane": "control-plane", "python-version": ""})
    assert run.returncode == 0, run.stderr
    assert json.loads(run.outputs["environments"]) == ["dev", "qa", "prod"]
    assert (run.outputs["changed"], json.loads(run.outputs["changed-environments"])) == (
        "true",
        ["dev", "qa", "prod"],
    )
    assert "+++ b/small/app-t3/reconciler.yaml" in run.outputs["diff"]
    comment = Path(run.outputs["comment-file"]).read_text()
    assert comment.startswith("<!-- promoter-diff -->\n### promoter: rendered changes (main `")
    assert "| prod | `prod` | 3 | 0 | 0 |" in comment
    assert "| qa | `qa` | 3 | 0 | 0 |" in run.summary and "promoter-diff" not in run.summary
    assert "::group::dev diff" in run.stdout
    assert factory.refs() == before


def test_render_action_for_a_pull_request_into_an_environment_branch(
    runner: Runner, factory: ControlPlaneFactory
) -> None:
    factory.create(platform_branches=("dev", "qa", "prod"))
    assert runner.run("promote", FAST).returncode == 0
    # the pull request's head: dev's values changed, not yet on the dev branch
    factory.commit("pr-head", {"env.yaml": ENV.replace("REGION: here", "REGION: there")}, "dev: move")
    run = runner.run(
        "render",
        {
            "control-plane": "control-plane",
            "python-version": "",
            "environment-branch": "dev",
            "environment-commit": "pr-head",
            "deployed-main": "true",
        },
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.outputs["changed-environments"]) == ["dev"]
    assert "-  REGION: here\n+  REGION: there\n" in run.outputs["diff"]
    assert run.outputs["diff"].startswith("# dev: +0 ~1 -0 against dev@")


# ------------------------------------------------------------ inputs are data


def payload(marker: Path) -> str:
    return f"x$(touch {marker}-dollar)`touch {marker}-tick`'\"; touch {marker}-semi\n::warning::line two"


@pytest.mark.parametrize("name", ["commit", "to", "env", "main-branch", "poll-interval", "progress-interval"])
def test_promote_inputs_reach_the_cli_as_data(
    runner: Runner, factory: ControlPlaneFactory, tmp_path: Path, name: str
) -> None:
    factory.create(platform_branches=("dev", "qa", "prod"))
    marker = tmp_path / "marker"
    value = payload(marker)
    run = runner.run("promote", {**FAST, name: value})
    assert run.returncode == 2, run.stderr
    assert not list(tmp_path.glob("marker*")), "an input was executed"
    assert one_line(value) in run.stderr or repr(value) in run.stderr  # the very characters, on one line


def test_injected_commit_is_named_whole_on_one_line(
    runner: Runner, factory: ControlPlaneFactory, tmp_path: Path
) -> None:
    factory.create()
    value = payload(tmp_path / "marker")
    run = runner.run("promote", {**FAST, "commit": value})
    assert run.returncode == 2
    # printed with workflow commands stopped, on one line: the input cannot forge a second one
    lines = run.stderr.splitlines()
    stop = next(i for i, line in enumerate(lines) if line.startswith("::stop-commands::"))
    token = lines[stop].removeprefix("::stop-commands::")
    assert (
        lines[stop + 1]
        == f"error: --commit {value!r}: not a commit sha or a valid branch or tag name (git check-ref-format)"
    )
    assert lines[stop + 2] == f"::{token}::"
    assert not any(line.startswith("::warning::") for line in lines)
    annotation = lines[stop + 3]
    assert annotation.startswith("::error title=promoter::--commit 'x$(touch ")
    assert "\\n::warning::line two'" in annotation


@pytest.mark.parametrize(
    "value",
    ["--upload-pack=touch {marker};false", "-u touch {marker}", "--output={marker}", "--exec=touch {marker}"],
)
def test_dispatched_commit_that_is_an_option_runs_nothing(
    runner: Runner, factory: ControlPlaneFactory, tmp_path: Path, value: str
) -> None:
    """A workflow_dispatch ``commit`` reaches git only after it passed git's own ref rules."""
    path = factory.create()
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", str(path)], check=True)
    marker = tmp_path / "pwned"
    run = runner.run("promote", {**FAST, "commit": value.format(marker=marker)})
    assert run.returncode == 2, run.stderr
    assert not marker.exists(), "git ran the input as an option"
    assert "not a commit sha or a valid branch or tag name" in run.stderr


@pytest.mark.parametrize("name", ["force", "dry-run"])
def test_boolean_inputs_are_checked_not_run(
    runner: Runner, factory: ControlPlaneFactory, tmp_path: Path, name: str
) -> None:
    factory.create()
    run = runner.run("promote", {**FAST, name: payload(tmp_path / "marker")})
    assert run.returncode == 2
    assert not list(tmp_path.glob("marker*"))
    assert f"::error title=promoter::the {name} input must be true or false" in run.stderr


@pytest.mark.parametrize("name", ["commit", "environment", "environment-branch", "to", "main-branch"])
def test_render_inputs_reach_the_cli_as_data(
    runner: Runner, factory: ControlPlaneFactory, tmp_path: Path, name: str
) -> None:
    factory.create(platform_branches=("dev", "qa", "prod"))
    value = payload(tmp_path / "marker")
    run = runner.run("render", {"control-plane": "control-plane", "python-version": "", name: value})
    assert run.returncode == 2, run.stderr
    assert not list(tmp_path.glob("marker*"))
    assert one_line(value) in run.stderr or repr(value) in run.stderr  # the very characters, on one line


def test_the_old_env_input_warns_and_must_agree_with_schedule(
    runner: Runner, factory: ControlPlaneFactory
) -> None:
    factory.create(platform_branches=("dev", "qa", "prod"))
    before = factory.refs()
    run = runner.run("promote", {**FAST, "env": "dev", "schedule": "qa"})
    assert run.returncode == 2
    assert run.stdout.splitlines()[-1] == (
        "::warning title=promoter::the env input is deprecated and goes away in the next release; use schedule"
    )
    assert (
        run.stderr.strip()
        == "::error title=promoter::the schedule and env inputs disagree; give schedule alone"
    )
    assert factory.refs() == before


def test_promote_action_verify_main_refuses_an_unsigned_commit(
    runner: Runner, factory: ControlPlaneFactory
) -> None:
    """``verify-main: git`` reaches the CLI (``PROMOTER_VERIFY_MAIN``): the Pipeline asks for no
    check, the action's input does, and the unsigned head of main is refused, nothing pushed."""
    factory.create(platform_branches=("dev", "qa", "prod"))
    before = factory.refs()
    run = runner.run("promote", {**FAST, "verify-main": "git"})
    assert run.returncode == 2, run.stderr
    assert "--verify-main: git: main commit" in run.stderr and "is not promoted: unsigned" in run.stderr
    assert factory.refs() == before
