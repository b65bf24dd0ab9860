"""The examples' workflows, run through the reusable workflow the way GitHub runs them.

A caller workflow of ``examples/`` is read for an event (a push to main, a dispatch, a push to
an environment branch): its job's ``with:`` and ``secrets:`` are evaluated in the caller's
contexts and become the reusable workflow's ``inputs`` and ``secrets``; the reusable workflow's
``env:``, job ``if:``, matrix, step ``if:``, ``with:`` and ``env:`` are evaluated with GitHub's
expression language (operators, literals, ``format``, ``fromJSON``, ...: the subset the
workflows use, with GitHub's truthiness and loose equality); ``run:`` steps run in bash and
``./.promoter/actions/*`` steps run in the composite-action harness of
``tests/actions/test_harness.py`` against the local forge. Checkouts are the workspace itself
(the control plane, with the promoter checked out beside it by the action harness). Secrets are
empty, so the job's token stands in, as on a repo without an App.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from promoter.cli.main import cli
from tests.actions.test_harness import ActionRun, Runner
from tests.support.helpers import ENV, ControlPlaneFactory
from tests.support.paths import ROOT

# ------------------------------------------------------------ GitHub's expression language

TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>&&|\|\||==|!=|<=|>=|[!<>()\[\],.*])"
    r"|(?P<name>[A-Za-z_][\w-]*))"
)


def tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = TOKEN.match(text, pos)
        assert match and match.end() > pos, f"cannot read expression at {text[pos:]!r}"
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and not (isinstance(value, float) and value != value)


def number(value: Any) -> float:
    if value is None or value == "":
        return 0.0
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return float("nan")


def equal(a: Any, b: Any) -> bool:
    """GitHub's loose equality: strings case-insensitively, other kinds as numbers."""
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    if type(a) is type(b):
        return bool(a == b)
    return number(a) == number(b)


def text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "format": lambda fmt, *args: re.sub(r"\{(\d+)\}", lambda m: text(args[int(m.group(1))]), fmt),
    "fromJSON": lambda value: json.loads(value),
    "toJSON": lambda value: json.dumps(value),
    "contains": lambda hay, needle: (
        any(equal(x, needle) for x in hay)
        if isinstance(hay, list)
        else text(needle).lower() in text(hay).lower()
    ),
    "startsWith": lambda a, b: text(a).lower().startswith(text(b).lower()),
    "endsWith": lambda a, b: text(a).lower().endswith(text(b).lower()),
    "success": lambda: True,
    "always": lambda: True,
    "failure": lambda: False,
    "cancelled": lambda: False,
}


class Expression:
    """One ``${{ }}`` expression, evaluated in ``context`` (recursive descent)."""

    def __init__(self, source: str, context: dict[str, Any]) -> None:
        self.items, self.i, self.context = tokens(source), 0, context

    def value(self) -> Any:
        result = self._or()
        assert self.i == len(self.items), f"unexpected {self.items[self.i :]}"
        return result

    def _peek(self) -> str:
        return self.items[self.i][1] if self.i < len(self.items) else ""

    def _take(self, expected: str | None = None) -> tuple[str, str]:
        item = self.items[self.i]
        assert expected is None or item[1] == expected, (expected, item)
        self.i += 1
        return item

    def _or(self) -> Any:
        left = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            left = left if truthy(left) else right
        return left

    def _and(self) -> Any:
        left = self._compare()
        while self._peek() == "&&":
            self._take()
            right = self._compare()
            left = right if truthy(left) else left
        return left

    def _compare(self) -> Any:
        left = self._unary()
        if self._peek() in ("==", "!=", "<", ">", "<=", ">="):
            op = self._take()[1]
            right = self._unary()
            if op in ("==", "!="):
                return equal(left, right) == (op == "==")
            a, b = number(left), number(right)
            return {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
        return left

    def _unary(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not truthy(self._unary())
        return self._primary()

    def _primary(self) -> Any:
        kind, token = self._take()
        if token == "(":
            inner = self._or()
            self._take(")")
            return inner
        if kind == "str":
            return token[1:-1].replace("''", "'")
        if kind == "num":
            return float(token)
        if token in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[token]
        if self._peek() == "(":
            self._take()
            args = []
            while self._peek() != ")":
                args.append(self._or())
                if self._peek() == ",":
                    self._take()
            self._take(")")
            value = FUNCTIONS[token](*args)  # then any property or index, as on a context
        else:
            value = self.context.get(token)
        while self._peek() in (".", "["):
            if self._take()[1] == ".":
                key: Any = self._take()[1]
            else:
                key = self._or()
                self._take("]")
            value = value.get(key) if isinstance(value, dict) else None
        return value


EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def evaluate(raw: Any, context: dict[str, Any]) -> Any:
    """A workflow value: a whole ``${{ }}`` keeps its type; text with expressions is text."""
    if not isinstance(raw, str):
        return raw
    whole = EXPRESSION.fullmatch(raw.strip())
    if whole:
        return Expression(whole.group(1), context).value()
    return EXPRESSION.sub(lambda m: text(Expression(m.group(1), context).value()), raw)


def condition(raw: Any, context: dict[str, Any]) -> bool:
    if raw is None:
        return True
    if isinstance(raw, bool):
        return raw
    body = EXPRESSION.fullmatch(str(raw).strip())
    return truthy(Expression(body.group(1) if body else str(raw), context).value())


def test_the_expression_language() -> None:
    ctx = {"inputs": {"env": "", "to": "qa", "force": True}, "env": {"HAS": "false"}, "n": "3"}
    assert evaluate("${{ inputs.env == '' && inputs.to || '' }}", ctx) == "qa"
    assert evaluate("${{ inputs.env != '' && inputs.to || 'none' }}", ctx) == "none"
    assert evaluate("${{ !inputs.force }}", ctx) is False
    assert evaluate("${{ env.HAS != 'true' && (inputs.x || 'tok') || '' }}", ctx) == "tok"
    assert evaluate('${{ fromJSON(\'["dev","qa"]\') }}', ctx) == ["dev", "qa"]
    assert evaluate("a-${{ format('{0},{1}', 'x', inputs.to) }}-b", ctx) == "a-x,qa-b"
    assert evaluate("${{ inputs.to == 'QA' }}", ctx) is True  # strings compare case-insensitively
    assert evaluate("${{ n == 3 }}", ctx) is True  # other kinds as numbers
    assert evaluate("${{ inputs.force && 'it''s' }}", ctx) == "it's"
    assert evaluate("${{ fromJSON('{\"a/b\":\"x\"}')[inputs.to == 'qa' && 'a/b' || 'c'] }}", ctx) == "x"


# ------------------------------------------------------------ the workflow runner


@dataclass
class JobRun:
    job: str
    matrix: dict[str, Any]
    skipped: bool = False
    steps: list[tuple[str, ActionRun | subprocess.CompletedProcess[str] | None]] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(run is not None and run.returncode for _, run in self.steps)


class Workflows:
    """Runs a caller workflow of the examples and the reusable workflow it calls."""

    def __init__(
        self,
        runner: Runner,
        github: dict[str, Any],
        promoter: str = "your-org/promoter",
        variables: dict[str, str] | None = None,
    ) -> None:
        self.runner, self.github = runner, github
        self.promoter = promoter  # the caller's copy of the promoter (`uses:`), as `promoter init` names it
        self.variables = {} if variables is None else variables  # the repository's, as `vars` reads them
        self.jobs: list[JobRun] = []
        self.skipped = False  # the caller's job was skipped by its `if:` (no runner, not billed)

    def call(self, caller: Path, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        doc = yaml.safe_load(caller.read_text())
        context = {
            "github": self.github,
            "inputs": inputs or {},
            "secrets": {},
            "env": {},
            "vars": self.variables,
        }
        (job,) = doc["jobs"].values()
        assert str(job["uses"]).startswith(f"{self.promoter}/.github/workflows/promote.yml@")
        if not condition(job.get("if"), context):
            self.skipped = True
            return {}
        given = {k: evaluate(v, context) for k, v in job.get("with", {}).items()}
        secrets = {k: text(evaluate(v, context)) for k, v in job.get("secrets", {}).items()}
        return self.reusable(given, secrets)

    def reusable(self, given: dict[str, Any], secrets: dict[str, str]) -> dict[str, Any]:
        doc = yaml.safe_load((ROOT / ".github/workflows/promote.yml").read_text())
        declared = doc[True]["workflow_call"]["inputs"]
        unknown = set(given) - set(declared)
        assert not unknown, f"the reusable workflow has no inputs {unknown}"
        inputs = {}
        for name, spec in declared.items():
            value = given.get(name, spec.get("default"))
            inputs[name] = (
                truthy(value) and text(value) != "false" if spec["type"] == "boolean" else text(value)
            )
        context: dict[str, Any] = {"github": self.github, "inputs": inputs, "secrets": secrets, "needs": {}}
        context["jobs"] = context["needs"]  # the workflow's outputs read jobs.<id>.outputs
        context["env"] = {k: text(evaluate(v, context)) for k, v in doc.get("env", {}).items()}
        for job_id, job in doc["jobs"].items():
            self._job(job_id, job, context)
        return {k: evaluate(v["value"], context) for k, v in doc[True]["workflow_call"]["outputs"].items()}

    def _job(self, job_id: str, job: dict[str, Any], context: dict[str, Any]) -> None:
        needs = job.get("needs", [])
        for need in [needs] if isinstance(needs, str) else needs:
            if context["needs"][need]["result"] != "success":
                self.jobs.append(JobRun(job_id, {}, skipped=True))
                context["needs"][job_id] = {"result": "skipped", "outputs": {}}
                return
        if not condition(job.get("if"), context):
            self.jobs.append(JobRun(job_id, {}, skipped=True))
            context["needs"][job_id] = {"result": "skipped", "outputs": {}}
            return
        axes = {k: evaluate(v, context) for k, v in job.get("strategy", {}).get("matrix", {}).items()}
        combos = (
            [{}]
            if not axes
            else [dict(zip(axes, values, strict=True)) for values in zip(*axes.values(), strict=True)]
        )
        result = "success"
        for matrix in combos:
            run = self._steps(job_id, job, {**context, "matrix": matrix, "steps": {}})
            if run.failed:
                result = "failure"
                break  # fail-fast, one at a time
        context["needs"][job_id] = {"result": result, "outputs": run.outputs}

    def _steps(self, job_id: str, job: dict[str, Any], context: dict[str, Any]) -> JobRun:
        run = JobRun(job_id, context["matrix"])
        self.jobs.append(run)
        for step in job["steps"]:
            uses = str(step.get("uses", ""))
            if run.failed or not condition(step.get("if"), context):
                run.steps.append((step.get("name", uses), None))
                continue
            action = re.match(rf"(?:\./\.promoter|{re.escape(self.promoter)})/actions/(\w+)(?:@|$)", uses)
            if action:  # the reusable workflow's checkout, or a caller's pinned copy
                given = {k: text(evaluate(v, context)) for k, v in step.get("with", {}).items()}
                if action.group(1) == "promote":
                    given.setdefault("poll-interval", "0.1s")  # the local forge merges at once
                done: Any = self.runner.run(action.group(1), given, self.github_env())
            elif "run" in step:
                done = self._bash(step, context)
            elif uses.startswith("actions/create-github-app-token@"):
                # the App's installation token, as the action outputs it (GitHub's stand-in takes any)
                done = ActionRun([], {"token": "ghs_harness-installation-token"}, "")
            else:
                assert uses.startswith("actions/checkout@"), uses
                done = None  # the workspace is the checkout
            run.steps.append((step.get("name", uses), done))
            if step.get("id"):
                outputs = done.outputs if isinstance(done, ActionRun) else {}
                context["steps"][step["id"]] = {"outputs": outputs}
        run.outputs = {k: evaluate(v, context) for k, v in job.get("outputs", {}).items()}
        return run

    def run(
        self, path: Path, secrets: dict[str, str] | None = None, variables: dict[str, str] | None = None
    ) -> None:
        """A workflow of its own (no reusable workflow), with the caller's contexts."""
        doc = yaml.safe_load(path.read_text())
        context: dict[str, Any] = {"github": self.github, "inputs": {}, "secrets": secrets or {}, "needs": {}}
        context["vars"] = variables or {}
        context["env"] = {k: text(evaluate(v, context)) for k, v in doc.get("env", {}).items()}
        for job_id, job in doc["jobs"].items():
            self._job(job_id, job, context)

    def _bash(self, step: dict[str, Any], context: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **self.github_env(), **context["env"]}
        env.update({k: text(evaluate(v, context)) for k, v in step.get("env", {}).items()})
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.runner.workspace,
            check=False,
        )

    def github_env(self) -> dict[str, str]:
        return {f"GITHUB_{k.upper()}": text(v) for k, v in self.github.items() if isinstance(v, str)}


@pytest.fixture
def workflows(
    action_root: Path,
    forked_toolchain: tuple[Path, Path, dict[str, str]],
    factory: ControlPlaneFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[[dict[str, Any]], Workflows]:
    temp, bin_dir, pip_env = forked_toolchain
    for key, value in {**pip_env, "HOME": str(tmp_path / "home")}.items():
        monkeypatch.setenv(key, value)
    for key in ("GITHUB_REF_NAME", "GITHUB_BASE_REF", "GITHUB_WORKSPACE", "PROMOTER_CONTROL_PLANE"):
        monkeypatch.delenv(key, raising=False)
    factory.create(platform_branches=("dev", "qa", "prod"))

    def make(github: dict[str, Any]) -> Workflows:
        base = {
            "repository": "org/control-plane",
            "token": "",
            "event": {"repository": {"name": "control-plane"}},
        }
        return Workflows(Runner(action_root, temp, factory.path, bin_dir), {**base, **github})

    return make


def head(factory: ControlPlaneFactory, ref: str = "main") -> str:
    return subprocess.run(
        ["git", "-C", str(factory.path), "rev-parse", ref], capture_output=True, text=True, check=True
    ).stdout.strip()


def promote_runs(flows: Workflows) -> list[ActionRun]:
    """The promote action's runs, in the jobs' order (the advance job's, the approved job's)."""
    runs = []
    for job in flows.jobs:
        for name, run in job.steps:
            if isinstance(run, ActionRun) and name.startswith("Promote"):
                runs.append(run)
    return runs


def promotions(flows: Workflows) -> list[tuple[str, dict[str, Any]]]:
    """Each environment a promote step took a step further (not skipped as done, not stopped
    where it waits), with that step's results output."""
    out = []
    for action in promote_runs(flows):
        assert action.returncode == 0, action.stderr
        results = json.loads(action.outputs["results"])
        out += [(env, results) for env, r in results.items() if r["state"] not in ("skipped", "waiting")]
    return out


EXAMPLES = ROOT / "examples"


def test_a_push_to_main_promotes_through_every_environment(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory
) -> None:
    sha = head(factory)
    flows = workflows({"event_name": "push", "ref_name": "main", "sha": sha})

    outputs = flows.call(EXAMPLES / "control-plane/.github/workflows/promote.yml")

    assert outputs["commit"] == sha and outputs["environments"] == '["dev", "qa", "prod"]'
    assert outputs["state"] == "done"
    done = promotions(flows)
    assert [env for env, _ in done] == ["dev", "qa", "prod"]
    assert [results[env]["state"] for env, results in done] == ["success"] * 3
    # dev and qa in the first job; prod, held for its approval, in the job after the approval's
    assert [j.job for j in flows.jobs if not j.skipped] == ["advance", "approval", "approved"]
    assert {
        factory.platform_file(e, ".promoter/promotion.yaml") is not None for e in ("dev", "qa", "prod")
    } == {True}


def test_a_dispatch_with_force_promotes_a_chosen_commit_to_one_environment(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory
) -> None:
    chosen = head(factory)
    factory.commit(
        "main", {"workloads/app.yaml": (factory.path / "workloads/app.yaml").read_text()}, "later", keep=True
    )
    flows = workflows({"event_name": "workflow_dispatch", "ref_name": "main", "sha": head(factory)})

    outputs = flows.call(
        EXAMPLES / "control-plane/.github/workflows/promote-by-hand.yml",
        {"to": "qa", "commit": chosen, "force": True},
    )

    assert (outputs["commit"], outputs["environments"], outputs["state"]) == (chosen, '["qa"]', "done")
    [(env, results)] = promotions(flows)
    assert (env, list(results), results["qa"]["state"]) == ("qa", ["qa"], "success")
    assert chosen in (factory.platform_file("qa", ".promoter/promotion.yaml") or "")
    assert factory.platform_file("dev", ".promoter/promotion.yaml") is None  # force: qa alone


def test_a_push_to_an_environment_branch_runs_the_scheduling_flow(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory
) -> None:
    done = CliRunner().invoke(cli, ["promote", "--control-plane", str(factory.path), "--to", "dev"])
    assert done.exit_code == 0, done.output
    factory.commit("dev", {"env.yaml": ENV.replace("REGION: here", "REGION: there")}, "dev: move")
    on_dev = workflows({"event_name": "push", "ref_name": "dev", "sha": head(factory, "dev")})

    outputs = on_dev.call(EXAMPLES / "environments/dev/.github/workflows/schedule.yml")

    assert json.loads(outputs["environments"]) == ["dev"]
    [(env, results)] = promotions(on_dev)
    assert (env, list(results), results["dev"]["state"]) == ("dev", ["dev"], "success")
    assert "REGION: there" in (factory.platform_file("dev", "small/app-t/platform-config.yaml") or "")

    # the old spelling of the input, from a caller not yet updated: the same flow, and a warning
    factory.commit("dev", {"env.yaml": ENV.replace("REGION: here", "REGION: elsewhere")}, "dev: again")
    old = workflows({"event_name": "push", "ref_name": "dev", "sha": head(factory, "dev")})
    pin = {"promoter-repository": "your-org/promoter", "promoter-ref": "0" * 40}
    assert json.loads(old.reusable({"env": "dev", **pin}, {})["environments"]) == ["dev"]
    warned = next(run for name, run in old.jobs[0].steps if name == "Warn about deprecated inputs")
    assert isinstance(warned, subprocess.CompletedProcess)
    assert "::warning title=promoter::the env input is deprecated" in warned.stdout
    assert [env for env, _ in promotions(old)] == ["dev"]
    assert "REGION: elsewhere" in (factory.platform_file("dev", "small/app-t/platform-config.yaml") or "")


@pytest.fixture
def gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``gh`` on PATH that records its arguments and the comment it was given."""
    bin_dir, log = tmp_path / "gh-bin", tmp_path / "gh.log"
    bin_dir.mkdir()
    script = bin_dir / "gh"
    script.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\n' \"${{GH_ENTERPRISE_TOKEN:+token}} $GH_HOST $GH_REPO $*\" >> {log}\n"
        'while [ $# -gt 0 ]; do [ "$1" = --body-file ] && cat "$2" >> ' + f"{log}; shift; done\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def test_pull_requests_into_main_and_into_an_environment_branch_get_the_diff(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory, gh: Path
) -> None:
    done = CliRunner().invoke(cli, ["promote", "--control-plane", str(factory.path), "--to", "dev"])
    assert done.exit_code == 0, done.output
    main = head(factory)
    moved = ENV.replace("REGION: here", "REGION: there")
    change = factory.commit("dev-change", {"env.yaml": moved}, "dev: move")  # a branch off nothing
    pull = {"event_name": "pull_request", "event": {"pull_request": {"number": 7}}}

    into_main = workflows({**pull, "base_ref": "main", "sha": main, "server_url": "https://github.com"})
    into_main.run(EXAMPLES / "control-plane/.github/workflows/render.yml")
    on_ghes = {
        "server_url": "https://ghes.example.com",
        "token": "ghs_job",
    }  # gh's host and its token there
    into_dev = workflows({**pull, "base_ref": "dev", "sha": change, **on_ghes})
    into_dev.run(EXAMPLES / "environments/dev/.github/workflows/render.yml")

    for flows in (into_main, into_dev):
        (job,) = flows.jobs
        assert not job.failed, [getattr(r, "stderr", "") for _, r in job.steps]
    renders = [next(r for _, r in f.jobs[0].steps if isinstance(r, ActionRun)) for f in (into_main, into_dev)]
    assert json.loads(renders[0].outputs["environments"]) == ["dev", "qa", "prod"]
    assert (renders[0].outputs["changed-environments"], renders[1].outputs["environments"]) == (
        '["qa", "prod"]',
        '["dev"]',
    )
    assert renders[1].outputs["changed"] == "true" and "REGION: there" in renders[1].outputs["diff"]
    comments = gh.read_text()
    assert comments.count(" github.com org/control-plane pr comment 7 --edit-last --body-file ") == 1
    assert (
        comments.count("token ghes.example.com org/control-plane pr comment 7 --edit-last --body-file ") == 1
    )
    assert comments.count("<!-- promoter-diff -->") == 2
