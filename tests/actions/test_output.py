"""GitHub Actions output: the pure builders, and the CLI writing them when GITHUB_ACTIONS=true."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter import masking
from promoter.cli.main import cli
from promoter.errors import ConfigError, PromotionFailed, UsageError
from promoter.forges.base import PRCheck
from promoter.gates.runner import GateOutcome
from promoter.ghactions import publish, runner, summary
from promoter.ghactions.diffs import diff_markdown, fence
from promoter.platform.objects import Change
from promoter.promotion.diffs import EnvDiff, file_patch
from promoter.promotion.report import EnvResult, Report
from promoter.promotion.waiting import Wait
from tests.actions.test_harness import parse_file_commands
from tests.support.helpers import ControlPlaneFactory

SHA = "0123456789abcdef0123456789abcdef01234567"


def report(*results: EnvResult, flow: str = "promotion") -> Report:
    return Report(flow, SHA, list(results))


# ------------------------------------------------------------ workflow commands


def test_command_escapes_like_the_toolkit() -> None:
    line = runner.command("error", "50% done\r\nnext", file="a,b:c.yaml", line=3, title=None)
    assert line == "::error file=a%2Cb%3Ac.yaml,line=3::50%25 done%0D%0Anext"
    assert runner.command("endgroup") == "::endgroup::"


def test_masks_cover_each_line_of_a_multiline_secret() -> None:
    key = "-----BEGIN KEY-----\nMIIEabcdefgh12345\nshort\n-----END KEY-----"
    assert runner.mask_commands(["ghp_token1234", key]) == [
        "::add-mask::ghp_token1234",
        "::add-mask::-----BEGIN KEY-----%0AMIIEabcdefgh12345%0Ashort%0A-----END KEY-----",
        "::add-mask::-----BEGIN KEY-----",
        "::add-mask::MIIEabcdefgh12345",
        "::add-mask::-----END KEY-----",
    ]


@pytest.mark.parametrize(
    ("file", "control_plane", "branches", "expected"),
    [
        ("promoter.yaml", "cp", [], "cp/promoter.yaml"),
        ("promoter.yaml", ".", [], "promoter.yaml"),
        ("workloads/a.yaml", "/elsewhere/cp", [], "workloads/a.yaml"),  # outside the workspace
        ("dev:env.yaml", "cp", ["dev"], "cp/env.yaml"),
        ("dev:env.yaml", "cp", ["main"], None),  # that branch is not checked out
    ],
)
def test_annotation_file(
    tmp_path: Path, file: str, control_plane: str, branches: list[str], expected: str | None
) -> None:
    assert runner.annotation_file(file, control_plane, str(tmp_path), branches) == expected


def test_error_annotations() -> None:
    environ = {"PROMOTER_CONTROL_PLANE": "cp", "GITHUB_WORKSPACE": "/w", "GITHUB_REF_NAME": "main"}
    bad = ConfigError("spec.x: unknown field", file="workloads/a.yaml", line=7)
    assert runner.error_annotation(bad, environ) == (
        "::error file=cp/workloads/a.yaml,line=7,title=promoter%3A bad input::spec.x: unknown field"
    )
    on_branch = ConfigError("bad", file="qa:env.yaml", line=2)
    assert runner.error_annotation(on_branch, environ) == "::error title=qa%3Aenv.yaml%3A2::bad"
    assert runner.error_annotation(UsageError("--to x: no"), environ) == "::error title=promoter::--to x: no"
    assert runner.error_annotation(PromotionFailed("held"), environ) == "::error title=promoter::held"


# ------------------------------------------------------------ outputs


def test_outputs_use_a_heredoc_per_value() -> None:
    names = iter(["D1", "D2"])
    text = runner.outputs_text({"one": "a", "two": "line\nline=2"}, lambda: next(names))
    assert text == "one<<D1\na\nD1\ntwo<<D2\nline\nline=2\nD2\n"
    assert parse_file_commands(text) == {"one": "a", "two": "line\nline=2"}
    with pytest.raises(ValueError, match="contains its delimiter"):
        runner.output_entry("x", "sneaky\nD3\nevil=1", "D3")
    assert (
        runner.new_delimiter().startswith("ghadelimiter_")
        and runner.new_delimiter() != runner.new_delimiter()
    )


def test_report_outputs() -> None:
    dev = EnvResult("dev", "success", "ok", 3, pr_url="https://github.com/o/p/pull/4", merge_sha="m" * 40)
    qa = EnvResult("qa", "failure", "gate failed", 3, duration=1.23456)
    out = publish.report_outputs(report(dev, qa))
    assert (out["commit"], out["flow"], out["ok"], out["failed-environment"]) == (
        SHA,
        "promotion",
        "false",
        "qa",
    )
    assert json.loads(out["pr-urls"]) == {"dev": "https://github.com/o/p/pull/4"}
    results = json.loads(out["results"])
    assert results["qa"] == {
        "state": "failure",
        "ok": False,
        "message": "gate failed",
        "prUrl": None,
        "mergeSha": None,
        "promotionSha": None,
        "files": 3,
        "duration": 1.235,
        "waves": {},  # no waves in qa
    }
    assert json.loads(out["report"])["environments"][0]["environment"] == "dev"


# ------------------------------------------------------------ step summary


def test_summary_table_and_diagram(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMOTER_GITHUB_TOKEN", "ghp_secretvalue")
    dev = EnvResult(
        "dev",
        "success",
        pr_url="https://github.com/o/platform/pull/12",
        merge_sha="abcdef1234567890" * 2 + "abcdefgh",
        gates=[GateOutcome("soak 30s", "success", ""), GateOutcome("command a|b", "success", "")],
        duration=75.2,
    )
    qa = EnvResult("qa", "failure", "gate said | no\nwith ghp_secretvalue", duration=2.0)
    text = summary.summary_markdown(report(dev, qa), ["dev", "qa", "prod"])
    lines = text.splitlines()
    assert lines[:5] == [
        f"## Promotion of `{SHA[:12]}`: did not go through",
        "",
        "| environment | result | PR | merge commit | gates | duration |",
        "| --- | --- | --- | --- | --- | ---: |",
        "| dev | ✅ success | [#12](https://github.com/o/platform/pull/12) | `abcdef123456` "
        "| soak 30s: success<br>command a\\|b: success | 1m15s |",
    ]
    assert lines[5] == "| qa | ❌ failure | - | - | - | 2.0s |"
    assert "- **qa**: gate said \\| no<br>with ***" in lines
    prefixed = summary.summary_markdown(report(dev, replace(qa, message="qa: gate said no")), ["dev", "qa"])
    assert "- **qa**: gate said no" in prefixed.splitlines()  # the environment is named once
    start = lines.index("```mermaid")
    assert lines[start : start + 12] == [
        "```mermaid",
        "flowchart LR",
        '  commit["main 0123456"]',
        '  env0["dev<br>success"]',
        "  commit --> env0",
        "  class env0 ok",
        '  env1["qa<br>failure"]',
        "  env0 --> env1",
        "  class env1 bad",
        '  env2["prod<br>not run"]',
        "  env1 --> env2",
        "  class env2 idle",
    ]
    assert "ghp_secretvalue" not in text


def test_the_summary_lists_each_environments_pr_checks_with_their_links() -> None:
    checks = [
        PRCheck("kubeconform", "check-run", "failure", "timed_out", "https://github.com/o/p/runs/7"),
        PRCheck("policy|opa", "status", "success", "success"),
    ]
    message = "qa: PR check kubeconform failed (timed_out): https://github.com/o/p/runs/7"
    text = summary.summary_markdown(report(EnvResult("qa", "failure", message, checks=checks)), ["qa"])
    lines = text.splitlines()
    assert (
        "- **qa** PR checks: ❌ [kubeconform](https://github.com/o/p/runs/7) timed_out, ✅ policy\\|opa success"
        in lines
    )
    assert "- **qa**: PR check kubeconform failed (timed_out): https://github.com/o/p/runs/7" in lines
    assert "PR checks" not in summary.summary_markdown(report(EnvResult("qa", "success")), ["qa"])


def test_mermaid_labels_cannot_break_out() -> None:
    text = summary.mermaid(report(EnvResult('we"ird', "noop")), ['we"ird'])
    assert '  env0["we#quot;ird<br>noop"]' in text.splitlines()


# ------------------------------------------------------------ diff text


def test_file_patch_shapes() -> None:
    assert file_patch("a.yaml", None, b"x: 1\n") == "--- /dev/null\n+++ b/a.yaml\n@@ -0,0 +1 @@\n+x: 1\n"
    assert file_patch("a.yaml", b"x: 1\n", None) == "--- a/a.yaml\n+++ /dev/null\n@@ -1 +0,0 @@\n-x: 1\n"
    assert file_patch("a.yaml", b"x: 1", b"x: 2") == (
        "--- a/a.yaml\n+++ b/a.yaml\n@@ -1 +1 @@\n-x: 1\n\\ No newline at end of file\n"
        "+x: 2\n\\ No newline at end of file\n"
    )
    assert file_patch("b.bin", b"\xff\xfe", b"x") == "Binary file b.bin differs\n"


def test_comment_is_cut_to_the_limit_and_fenced_safely() -> None:
    def env_diff(name: str, body: str) -> EnvDiff:
        return EnvDiff(name, name, "c" * 40, SHA, "e" * 40, {"small": Change(1, 0, 0)}, [body])

    tricky = "+value: ```not a fence```\n"
    assert fence(tricky) == "````"
    small = diff_markdown([env_diff("dev", tricky)], 10_000)
    assert "\n````diff\n+value: ```not a fence```\n````\n" in small
    big = diff_markdown([env_diff("dev", "+x\n" * 50), env_diff("qa", "+y\n" * 5000)], 2_000)
    assert len(big) <= 2_000
    assert "<summary>dev: +1 ~0 -0" in big and "<summary>qa" not in big
    assert big.endswith("_The diff is too long to show here: run `promoter diff` to see all of it._\n")


# ------------------------------------------------------------ the CLI in Actions


@pytest.fixture
def actions_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    files = {"output": tmp_path / "output", "summary": tmp_path / "summary"}
    for path in files.values():
        path.write_text("")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_OUTPUT", str(files["output"]))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(files["summary"]))
    runner._masked.clear()
    monkeypatch.setattr(masking, "_extra", set())  # tokens registered by earlier tests are not this run's
    return files


def test_json_output_stays_json_in_actions(
    factory: ControlPlaneFactory, actions_env: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    monkeypatch.setenv("PROMOTER_GITHUB_TOKEN", "ghp_maskmeplease")
    result = CliRunner().invoke(
        cli, ["promote", "--control-plane", str(path), "--to", "dev", "--output", "json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["environments"][0]["state"] == "success"
    assert result.stderr.splitlines()[0] == "::add-mask::ghp_maskmeplease"
    assert "::group::dev" in result.stderr.splitlines()
    outputs = parse_file_commands(actions_env["output"].read_text())
    assert (outputs["ok"], outputs["flow"]) == ("true", "promotion")
    assert actions_env["summary"].read_text().startswith("## Promotion of `")


def test_nothing_is_written_outside_actions(factory: ControlPlaneFactory, tmp_path: Path) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    output = tmp_path / "output"
    output.write_text("")
    result = CliRunner(env={"GITHUB_OUTPUT": str(output), "PROMOTER_GITHUB_TOKEN": "ghp_x12345"}).invoke(
        cli, ["promote", "--control-plane", str(path), "--to", "dev"]
    )
    assert result.exit_code == 0, result.output
    assert output.read_text() == ""
    assert "::" not in result.output


def test_diff_usage_errors(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    runner = CliRunner()
    result = runner.invoke(cli, ["diff", "--control-plane", str(path), "--env-commit", "dev"])
    assert (result.exit_code, result.output) == (
        2,
        "error: --env-commit needs --env or --env-branch: it is one environment branch's commit\n",
    )
    result = runner.invoke(cli, ["diff", "--control-plane", str(path), "--commit", "main", "--deployed-main"])
    assert (result.exit_code, result.output) == (
        2,
        "error: --commit and --deployed-main exclude each other\n",
    )
    result = runner.invoke(cli, ["diff", "--control-plane", str(path), "--env-branch", "nope"])
    assert (result.exit_code, result.output) == (
        2,
        "error: --env-branch nope: no environment of the Pipeline is kept on it\n",
    )


def test_diff_of_an_unchanged_environment_is_empty(factory: ControlPlaneFactory) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    promoted = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--to", "dev"])
    assert promoted.exit_code == 0, promoted.output
    result = CliRunner().invoke(cli, ["diff", "--control-plane", str(path), "--env", "dev", "--env", "qa"])
    assert result.exit_code == 1, result.output  # qa would change
    lines = result.stderr.splitlines()
    assert lines[0].startswith("dev: +0 ~0 -0 against dev@") and lines[1].startswith("qa: +3 ~0 -0")
    assert result.stdout.startswith("# qa: +3 ~0 -0") and "# dev" not in result.stdout


def test_a_run_that_stopped_where_the_promotion_waits_says_so() -> None:
    wait = Wait("bake", "qa", "canary", 1_767_225_600.0, 1_767_227_400.0, "qa: wave canary (1/2): baking")
    report = Report(
        "promotion",
        "a" * 40,
        [EnvResult("dev", "success"), EnvResult("qa", "waiting", "baking", wait=wait)],
    )

    out = publish.report_outputs(report)
    text = summary.summary_markdown(report, ["dev", "qa", "prod"])

    assert (out["state"], out["waiting-for"], out["waiting-environment"], out["waiting-wave"]) == (
        "waiting",
        "bake",
        "qa",
        "canary",
    )
    assert (out["waiting-since"], out["next-check"]) == ("2026-01-01T00:00:00Z", "2026-01-01T00:30:00Z")
    assert out["failed-environment"] == "" and out["environments"] == '["dev", "qa"]'
    assert text.startswith(
        f"## Promotion of `{'a' * 12}`: waiting\n\n⏳ Waiting for **bake** in qa, wave canary"
    )
    assert "a new check is useful from 2026-01-01T00:30:00Z" in text
    assert json.loads(out["report"])["waiting"]["for"] == "bake"
    assert "  class env1 wait" in text  # amber, not the failure's red
    assert "  class env0 ok" in text


def test_only_a_failure_is_an_error_a_wait_and_a_hold_are_notices(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    wait = Wait("approval", "prod", "", 1_767_225_600.0, None, "prod: waiting for approval")
    held = "qa: abc failed here before (gates failed); held, use --force to retry; held since 2026-01-01T00:00:00Z: ..."
    for results, state in (
        (
            [
                EnvResult("dev", "success"),
                EnvResult("prod", "waiting", "prod: waiting for approval", wait=wait),
            ],
            "waiting",
        ),
        ([EnvResult("dev", "skipped"), EnvResult("qa", "held", held)], "held"),
        ([EnvResult("dev", "skipped"), EnvResult("qa", "failure", "qa: gates failed")], "failed"),
    ):
        report = Report("promotion", "a" * 40, results)
        assert report.state == state
        publish.publish_report(report, ["dev", "qa", "prod"])
    err = capsys.readouterr().err
    assert "::notice title=promoter%3A prod waiting::prod: waiting for approval" in err
    assert "::notice title=promoter%3A qa held::qa: abc failed here before" in err
    assert [line for line in err.splitlines() if line.startswith("::error")] == [
        "::error title=promoter%3A qa failure::qa: gates failed"
    ]


def test_the_summary_draws_a_graph_of_environments() -> None:
    """A Pipeline that fans out: each environment after those it follows, one not started grey."""
    results = [
        EnvResult("staging", "success"),
        EnvResult("prod-eu", "failure"),
        EnvResult("prod-us", "success"),
    ]
    follows = {
        "staging": (),
        "prod-eu": ("staging",),
        "prod-us": ("staging",),
        "edge": ("prod-eu", "prod-us"),
    }

    text = summary.mermaid(Report("promotion", "a" * 40, results), list(follows), follows)

    assert [line for line in text.splitlines() if "-->" in line] == [
        "  commit --> env0",
        "  env0 --> env1",
        "  env0 --> env2",
        "  env1 --> env3",
        "  env2 --> env3",
    ]
    assert '  env3["edge<br>not run"]' in text and "  class env3 idle" in text
    assert "  class env1 bad" in text
