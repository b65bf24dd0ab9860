"""``promoter kalypso template``: the generations, the data file's shape, and what is printed
(docs/kalypso.md, "promoter kalypso template")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from tests.kalypso.test_vectors import template

DATA: dict[str, Any] = {
    "DeploymentTargetName": "app-web",
    "Namespace": "dev-big-app-web",
    "Environment": "dev",
    "Workspace": "team",
    "Workload": "app",
    "ClusterType": "big",
    "Labels": {"workload": "app"},
    "Manifests": {"repo": "https://example.com/web", "branch": "dev", "path": "./web"},
    "ConfigMaps": [
        {"LIST": "- name: a\n  v: 1\n", "M": "k: [x]\n"},
        {"LIST": "- name: a\n  w: 2\n"},
    ],
}


@pytest.fixture(autouse=True)
def _no_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROMOTER_KALYPSO_NAMING")


@pytest.mark.parametrize(
    ("args", "env", "want"),
    [
        # HEAD: lists merged by name, yaml.v3 (4 spaces, lists indented under their key)
        ((), {}, "LIST:\n    - name: a\n      v: 1\n      w: 2\nM:\n    k:\n        - x"),
        # 2024: lists appended, yaml.v2
        (
            ("--kalypso-generation", "2024"),
            {},
            "LIST:\n- name: a\n  v: 1\n- name: a\n  w: 2\nM:\n  k:\n  - x",
        ),
        (
            (),
            {"PROMOTER_KALYPSO_GENERATION": "2024"},
            "LIST:\n- name: a\n  v: 1\n- name: a\n  w: 2\nM:\n  k:\n  - x",
        ),
        # the option wins over the variable; the old option and variable still name one
        (("--kalypso-generation", "head"), {"PROMOTER_KALYPSO_GENERATION": "2024"}, "LIST:\n    - name: a"),
        (("--kalypso-naming", "current"), {"PROMOTER_KALYPSO_GENERATION": "2024"}, "LIST:\n    - name: a"),
        ((), {"PROMOTER_KALYPSO_NAMING": "current"}, "LIST:\n    - name: a"),
    ],
)
def test_the_generation_decides_merge_and_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], env: dict[str, str], want: str
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = template(tmp_path, "{{ toYaml .ConfigData }}", DATA, *args)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(want)


def test_2024_and_head_render_again_2023_does_not(tmp_path: Path) -> None:
    data = {**DATA, "ConfigData": {"T": "{{ .ClusterType }}"}}
    assert template(tmp_path, "{{ .ConfigData.T }}", data).stdout == "big"
    assert template(tmp_path, "{{ .ConfigData.T }}", data, "--kalypso-generation", "2024").stdout == "big"
    old = template(
        tmp_path,
        "{{ .Repo }} {{ .ConfigData.T }} {{ .Labels.workload }}",
        data,
        "--kalypso-generation",
        "2023",
    )
    assert old.stdout == "https://example.com/web {{ .ClusterType }} app"  # html/template, once


def test_an_empty_result_prints_nothing_and_spaces_are_kept(tmp_path: Path) -> None:
    empty = template(tmp_path, "{{ if false }}x{{ end }}", DATA)
    assert (empty.exit_code, empty.stdout, empty.stderr) == (0, "", "")
    spaces = template(tmp_path, "  \n{{/* c */}}", DATA)
    assert spaces.stdout == "  \n"


def test_an_output_that_keeps_holding_braces_is_stopped(tmp_path: Path) -> None:
    literal = template(tmp_path, '{{ "{{" }}', DATA)  # a literal {{ is parsed again: Kalypso fails too
    assert (literal.exit_code, literal.stderr.split(": ", 2)[2]) == (
        2,
        "template: template:1: unclosed action\n",
    )
    loop = {**DATA, "ConfigData": {"SELF": "{{ .ConfigData.SELF }}"}}
    result = template(tmp_path, "{{ .ConfigData.SELF }}", loop)
    assert result.exit_code == 2
    assert "still holds {{ after 100 renders" in result.stderr


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("not json", "--data {data}: not JSON"),
        ("[]", "--data {data}: must be a JSON object"),
        (json.dumps({"Repo": "x"}), "--data {data}: unknown field 'Repo'"),
        (json.dumps({"Namespace": 3}), "--data {data}: Namespace: must be a string"),
        (json.dumps({"ConfigData": {"A": 1}}), "--data {data}: ConfigData.A: must be a string"),
        (json.dumps({"ConfigMaps": {"A": "1"}}), "--data {data}: ConfigMaps: must be a list"),
    ],
)
def test_a_bad_data_file_is_exit_2_naming_the_field(tmp_path: Path, data: str, says: str) -> None:
    (tmp_path / "data.json").write_text(data)
    (tmp_path / "t").write_text("x")
    result = CliRunner().invoke(
        cli, ["kalypso", "template", str(tmp_path / "t"), "--data", str(tmp_path / "data.json")]
    )
    assert result.exit_code == 2
    assert says.format(data=tmp_path / "data.json") in result.stderr
    assert result.stdout == ""


def test_a_generation_that_does_not_exist_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMOTER_KALYPSO_GENERATION", "2025")
    result = template(tmp_path, "x", DATA)
    assert result.exit_code == 2
    assert "PROMOTER_KALYPSO_GENERATION=2025: must be one of 2023, 2024, head" in result.stderr
