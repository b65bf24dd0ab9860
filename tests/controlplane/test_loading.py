"""Every problem at once (promoter/controlplane/loading.py, promoter/errors.Problems): the
independent problems of a control plane are said in one run, one ``error:`` line each with its
file and line, at most 20 and then how many more, exit 2; a problem that makes the rest
meaningless (a template's, the same in every environment) is said once."""

from __future__ import annotations

from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.errors import ConfigError, InputErrors
from tests.support.helpers import ENV, PIPELINE, WORKLOAD, ControlPlaneFactory

CONFIG = (
    "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: odd\n  labels: {platform-config: 'true'}\n"
    "data:\n  A: NO\n  B: 1.10\n  C: 0755\n"
)


def validate(factory: ControlPlaneFactory) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path)])
    return result.exit_code, result.stderr.splitlines()


def test_three_yaml_1_1_values_in_one_file_are_named_together(factory: ControlPlaneFactory) -> None:
    factory.create(
        envs={"dev": {"env.yaml": ENV + CONFIG}, "qa": {"env.yaml": ENV}, "prod": {"env.yaml": ENV}}
    )
    code, lines = validate(factory)
    assert code == 2
    assert [line.split(": data: ")[1].split(" is read")[0] for line in lines] == ["'NO'", "'1.10'", "'0755'"]
    assert all(line.startswith("error: dev:env.yaml:") for line in lines)
    assert len({line.split(":")[3] for line in lines}) == 3  # three lines of the file


def test_broken_objects_of_main_and_of_two_branches_are_reported_together(
    factory: ControlPlaneFactory,
) -> None:
    broken = WORKLOAD.replace("kind: Workload", "kind: Workoad")
    other = WORKLOAD.replace("name: app", "name: other", 1).replace(
        "environment: dev", "environment: staging"
    )
    factory.create({"promoter.yaml": PIPELINE, "workloads/app.yaml": broken, "workloads/other.yaml": other})
    code, lines = validate(factory)
    assert code == 2
    assert lines[0].startswith("error: workloads/app.yaml:") and "did you mean Workload?" in lines[0]
    assert (lines[1].startswith("error: workloads/other.yaml:") and "unknown field" in lines[1]) or len(
        lines
    ) == 2

    factory2_env = ENV.replace("kind: ClusterType", "kind: ClusterTyp")
    factory.commit("main", {"promoter.yaml": PIPELINE, "workloads/app.yaml": WORKLOAD}, "fixed main")
    factory.commit("qa", {"env.yaml": factory2_env}, "qa: broken")
    factory.commit("prod", {"env.yaml": factory2_env}, "prod: broken")
    code, lines = validate(factory)
    assert code == 2
    assert [line.split(":")[1].strip() for line in lines] == ["qa", "prod"], lines  # both branches, one run


def test_the_lines_are_bounded() -> None:
    many = InputErrors([ConfigError(f"problem {i}", file="f.yaml", line=i + 1) for i in range(25)])
    lines = many.lines()
    assert len(lines) == 21 and lines[0] == "f.yaml:1: problem 0" and lines[-1] == "... and 5 more problems"
    assert str(many) == "f.yaml:1: problem 0"  # one line where one is wanted
    nested = InputErrors([many, ConfigError("last", file="g.yaml", line=3)])
    assert len(nested.problems) == 26


UNUSED = (
    "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: warn\n"
    "  labels: {platform-config: 'true', sise: small}\ndata:\n  LOG_LEVEL: warn\n"
)


def test_a_config_map_that_matches_nothing_is_a_warning_and_strict_makes_it_an_error(
    factory: ControlPlaneFactory,
) -> None:
    factory.create(
        envs={"dev": {"env.yaml": ENV + UNUSED}, "qa": {"env.yaml": ENV}, "prod": {"env.yaml": ENV}}
    )
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path)])
    assert result.exit_code == 0, result.output
    [warning] = result.stderr.splitlines()
    assert warning.startswith("warning: dev:env.yaml:") and warning.endswith(
        "config ConfigMap 'warn' (labels sise: small) matches no assignment of dev: its values are applied nowhere"
    )
    as_json = CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path), "-o", "json"])
    assert '"warnings": [' in as_json.stdout
    strict = CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path), "--strict"])
    assert strict.exit_code == 2
    assert (
        strict.stderr.splitlines()[-1]
        == "error: --strict: 1 warning(s) above; each is an error in strict mode"
    )


def test_a_policy_whose_selector_selects_nothing_is_a_warning(factory: ControlPlaneFactory) -> None:
    idle = (
        "---\napiVersion: promoter.dev/v1alpha1\nkind: SchedulingPolicy\nmetadata: {name: nowhere}\n"
        "spec:\n  clusterTypeSelector: {labelSelector: {matchLabels: {size: smal}}}\n"
    )
    factory.create(envs={"dev": {"env.yaml": ENV + idle}, "qa": {"env.yaml": ENV}, "prod": {"env.yaml": ENV}})
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path)])
    assert result.exit_code == 0, result.output
    [warning] = result.stderr.splitlines()
    assert warning.startswith("warning: dev:env.yaml:") and warning.endswith(
        "SchedulingPolicy 'nowhere' assigns nothing: its clusterTypeSelector matches no cluster type of dev"
    )
