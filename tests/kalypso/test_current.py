"""Kalypso's current scheduler (the default naming): a control plane of its time
(tests/kalypso/current) renders byte for byte to the tree worked out from the scheduler's code,
and each of its rules has a golden case (docs/kalypso.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from promoter.cli.main import cli
from tests.support.kalypso_repos import CURRENT, build_current, build_sample, expected_current, tree_of
from tests.support.kalypso_world import convert


def render(cp: Path, env: str, out: Path, *args: str) -> dict[str, bytes]:
    result = CliRunner().invoke(
        cli, ["render", "--control-plane", str(cp), "--env", env, "--out", str(out), *args]
    )
    assert result.exit_code == 0, result.output
    return tree_of(out)


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_a_current_control_plane_renders_byte_for_byte_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str
) -> None:
    monkeypatch.delenv("PROMOTER_KALYPSO_NAMING")
    cp, main_sha = build_current(tmp_path / "repos")
    got = render(cp, env, tmp_path / "out")
    want = expected_current(env, main_sha)
    assert sorted(got) == sorted(want)
    for path in want:
        assert got[path] == want[path], path


def test_the_option_chooses_the_naming_over_the_variable(tmp_path: Path) -> None:
    cp, main_sha = build_current(tmp_path / "repos")  # the variable says 2023 here
    got = render(cp, "dev", tmp_path / "out", "--kalypso-naming", "current")
    assert got == expected_current("dev", main_sha)


def test_a_2023_template_under_the_current_naming_says_which_naming_renders_it(tmp_path: Path) -> None:
    """The current scheduler's data has no .Repo: the 2023 sample fails as it would there, and
    the error says how to render it as the 2023 scheduler did."""
    cp, _ = build_sample(tmp_path / "repos")
    result = CliRunner().invoke(
        cli,
        [
            "render",
            "--control-plane",
            str(cp),
            "--env",
            "dev",
            "--out",
            str(tmp_path / "o"),
            "--kalypso-naming",
            "current",
        ],
    )
    assert result.exit_code == 2
    assert "can't evaluate field Repo in type scheduler.dataType" in result.output
    assert "PROMOTER_KALYPSO_GENERATION=2023" in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("manifest", "says"),
    [
        ("'kind: [unclosed'", "the output is not YAML"),
        ("'- a list'", "renders to YAML that is not a mapping"),
    ],
)
def test_rendered_text_is_still_checked_before_it_is_written(
    tmp_path: Path, manifest: str, says: str
) -> None:
    cp = _current_with(tmp_path, "templates/namespace.yaml", NAMESPACE_HEAD + f"    - {manifest}\n")
    result = CliRunner().invoke(
        cli, ["render", "--control-plane", str(cp), "--env", "dev", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2, result.output
    assert says in result.output and "templates/namespace.yaml" in result.output
    assert not (tmp_path / "o").exists()


def test_an_env_config_is_not_checked_as_yaml(tmp_path: Path) -> None:
    """contentType sh: a shell file, written as the template wrote it (as YAML it would be one
    string, not a mapping, and refused)."""
    cp, _ = build_current(tmp_path / "repos")
    got = render(cp, "dev", tmp_path / "out", "--kalypso-naming", "current")
    sh = got["west-edge/hello-world-app-functional-test/platform-config.sh"]
    assert sh.startswith(b'export DB_URL="postgres://db:5432/app"\n')
    assert "west-edge/hello-world-app-functional-test/platform-config.yaml" not in got


NAMESPACE_HEAD = (
    "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Template\nmetadata:\n  name: namespace\n"
    "spec:\n  type: namespace\n  manifests:\n"
)


def _current_with(tmp_path: Path, path: str, text: str) -> Path:
    """tests/kalypso/current with one file of main replaced."""
    copy = tmp_path / "current"
    shutil.copytree(CURRENT, copy)
    (copy / "control-plane" / "main" / path).write_text(text)
    return build_current(tmp_path / "repos", copy)[0]


def _convert(cp: Path, out: Path, *args: str) -> tuple[int, str]:
    result = convert(cp, out, *args, environments="dev,prod")
    return result.exit_code, result.output


def test_the_converted_current_control_plane_renders_the_same_tree(tmp_path: Path) -> None:
    """Kalypso's string Templates kept as they are (``language: gotemplate``), the config of
    each placement as Kalypso merges it: every file the same, byte for byte, but Kalypso's
    README.md and tracking file and promoter's .promoter/promotion.yaml (docs/kalypso.md#convert).
    The env config (platform-config.sh) is one promoter cannot write: here the edge cluster type
    takes the YAML config Template instead (and the env one, unused, is removed: every Template
    is converted)."""
    copy = tmp_path / "current"
    shutil.copytree(CURRENT, copy)
    (copy / "control-plane" / "main" / "templates" / "config-env.yaml").unlink()
    for env in ("dev", "prod"):
        edge = copy / "control-plane" / env / "cluster-types" / "west-edge.yaml"
        edge.write_text(edge.read_text().replace("configType: config-env", "configType: config-yaml"))
    cp, _ = build_current(tmp_path / "repos", copy)
    out = tmp_path / "converted"
    code, output = _convert(cp, out, "--kalypso-naming", "current")
    assert code == 0, output
    flux = yaml.safe_load((out / "templates" / "flux.yaml").read_text())
    assert flux["spec"]["language"] == "gotemplate"
    original = yaml.safe_load((CURRENT / "control-plane" / "main" / "templates" / "flux.yaml").read_text())
    assert flux["spec"]["manifests"] == original["spec"]["manifests"]  # as Kalypso's users wrote them
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(out)])
    assert result.exit_code == 0, result.output
    for env in ("dev", "prod"):
        kalypso = render(cp, env, tmp_path / f"k-{env}", "--kalypso-naming", "current")
        promoter = render(out, env, tmp_path / f"p-{env}")
        readmes = {p for p in kalypso if p.endswith("/README.md")}
        assert sorted(set(kalypso) - set(promoter)) == sorted(
            {*readmes, ".github/tracking/Promoted_Commit_Id"}
        )
        assert sorted(set(promoter) - set(kalypso)) == [".promoter/promotion.yaml"]
        for path in sorted(set(kalypso) & set(promoter)):
            assert promoter[path] == kalypso[path], path
    assert (
        "prod-west-edge-observability-prod"
        in promoter["west-edge/observability-prod/namespace.yaml"].decode()
    )
    assert "west-edge/observability-prod/platform-config.yaml" in promoter  # edge now renders YAML config


def test_what_a_promoter_control_plane_cannot_carry_is_exit_2_naming_the_field(tmp_path: Path) -> None:
    cp, _ = build_current(tmp_path / "repos")
    code, output = _convert(cp, tmp_path / "out", "--kalypso-naming", "current")
    assert code == 2
    assert output.startswith("error: templates/config-env.yaml:")
    assert "spec.contentType: template config-env writes its config to platform-config.sh" in output
    assert not (tmp_path / "out").exists()


def _fnv1(data: bytes) -> int:
    """Go's fnv.New64 (FNV-1), written out."""
    h = 14695981039346656037
    for b in data:
        h = ((h * 1099511628211) % 2**64) ^ b
    return h


def _le(*numbers: int) -> bytes:
    return b"".join(n.to_bytes(8, "little") for n in numbers)


def test_hash_gives_kalypsos_numbers_in_a_rendered_name(tmp_path: Path) -> None:
    """``hash`` is hashstructure v1.1.0's: here the INGRESS config of east-small's observability-dev
    (a YAML map, go-yaml's ``map[interface{}]interface{}``: ``hosts`` a list of one string,
    ``tls`` a bool) and its REGION (a string), worked out by hand from ``hashstructure.go``."""
    template = NAMESPACE_HEAD + (
        "    - |-\n"
        "      kind: Namespace\n"
        "      apiVersion: v1\n"
        "      metadata:\n"
        "        name: {{ .Workload }}-{{ hash .ConfigData.INGRESS }}\n"
        '        labels: {region: "{{ hash .ConfigData.REGION }}"}\n'
    )
    cp = _current_with(tmp_path, "templates/namespace.yaml", template)
    got = render(cp, "dev", tmp_path / "out", "--kalypso-naming", "current")
    hosts = _fnv1(_le(0, _fnv1(b"dev.example.com")))  # a slice: ordered from 0
    entries = _fnv1(_le(_fnv1(b"hosts"), hosts)) ^ _fnv1(_le(_fnv1(b"tls"), _fnv1(b"\x00")))
    ingress = entries  # a map: XOR of its entries, nothing after (v2's FormatV2 would hash it)
    region = _fnv1(b"east-us")
    assert (
        got["east-small/observability-dev/namespace.yaml"]
        == (
            "kind: Namespace\napiVersion: v1\nmetadata:\n"
            f'  name: observability-{ingress}\n  labels: {{region: "{region}"}}'
        ).encode()
    )
