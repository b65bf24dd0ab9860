"""``promoter convert --from kalypso`` (docs/kalypso.md#convert): the converted control plane
renders, with promoter's own rules, the tree Kalypso's rules render, but for the differences of
layout the docs name: Kalypso's ``README.md`` per cluster type and
``.github/tracking/Promoted_Commit_Id``, promoter's ``.promoter/promotion.yaml``, and the config
file's name (``config.yaml`` / ``platform-config.yaml``, same content)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.gitcmd import Git
from tests.kalypso.test_promote import ENVIRONMENTS
from tests.support.kalypso_repos import build_sample, tree_of
from tests.support.kalypso_world import NAMESPACE, OLD_RECONCILER, convert, world

KALYPSO_ONLY = (".github/tracking/Promoted_Commit_Id",)
PROMOTER_ONLY = (".promoter/promotion.yaml",)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def render(cp: Path, env: str, out: Path, *args: str) -> dict[str, bytes]:
    code, output = run("render", "--control-plane", str(cp), "--env", env, "--out", str(out), *args)
    assert code == 0, output
    return tree_of(out)


def assert_same_tree(
    kalypso: dict[str, bytes], promoter: dict[str, bytes], config: str = "config.yaml"
) -> None:
    """Every file equal, byte for byte, but the documented differences."""
    readmes = {p for p in kalypso if p.endswith("/README.md") and p.count("/") == 1}
    assert readmes, "every cluster type has its README in Kalypso's layout"
    only_kalypso = sorted(set(kalypso) - set(promoter))
    only_promoter = sorted(set(promoter) - set(kalypso))
    configs = sorted(p for p in kalypso if p.endswith("/" + config))
    renamed = [p.removesuffix(config) + "platform-config.yaml" for p in configs]
    if config == "platform-config.yaml":
        configs, renamed = [], []
    assert only_kalypso == sorted([*KALYPSO_ONLY, *readmes, *configs])
    assert only_promoter == sorted([*PROMOTER_ONLY, *renamed])
    for old, new in zip(configs, renamed, strict=True):
        assert yaml.safe_load(kalypso[old]) == yaml.safe_load(promoter[new]), old  # quotes may differ
    for path in sorted(set(kalypso) & set(promoter)):
        assert kalypso[path] == promoter[path], path


def sample_with_flux_v1(tmp_path: Path) -> tuple[Path, str]:
    """Kalypso's sample with its Flux objects in v1 (v1beta2, which it renders, is refused by
    promoter's checks: Flux 2.8 serves it no more), as a later main commit."""
    cp, _ = build_sample(tmp_path / "repos")
    template = cp / "templates" / "scheduler_v1alpha1_template_arc-flux.yaml"
    template.write_text(template.read_text().replace("/v1beta2", "/v1"))
    git = Git(cp)
    git.run("commit", "--quiet", "-am", "Flux v1")
    sha = git.commit_of("HEAD")
    assert sha is not None
    return cp, sha


def test_the_converted_sample_renders_the_same_tree(tmp_path: Path) -> None:
    cp, sha = sample_with_flux_v1(tmp_path)
    out = tmp_path / "converted"
    code, output = run(
        "convert", "--from", "kalypso", "--control-plane", str(cp), "--commit", sha,
        "--environments", "dev,stage", "--out", str(out),
    )  # fmt: skip
    assert code == 0, output
    assert output.startswith(
        f"converted to {out}: main (7 files), dev (5 files), stage (3 files); workloads "
    )
    assert sorted(Git(out).out("branch", "--format=%(refname:short)").split()) == ["dev", "main", "stage"]
    code, output = run("validate", "--control-plane", str(out))
    assert code == 0, output
    for env in ("dev", "stage"):
        kalypso = render(cp, env, tmp_path / f"k-{env}", "--commit", sha)
        promoter = render(out, env, tmp_path / f"p-{env}")
        assert_same_tree(kalypso, promoter)
    pipeline = yaml.safe_load((out / "promoter.yaml").read_text())
    assert pipeline["spec"]["platformRepo"] == {"url": "https://github.com/microsoft/kalypso-gitops"}
    assert [e["name"] for e in pipeline["spec"]["environments"]] == ["dev", "stage"]
    assert pipeline["spec"]["environments"][0]["gitops"] == {"branch": "dev", "path": "."}


def test_the_sample_as_kalypso_left_it_converts_but_its_flux_v1beta2_is_refused(tmp_path: Path) -> None:
    cp, _ = build_sample(tmp_path / "repos")
    out = tmp_path / "converted"
    code, output = run(
        "convert", "--from", "kalypso", "--control-plane", str(cp), "--environments", "dev", "--out", str(out)
    )
    assert code == 0, output
    code, output = run("render", "--control-plane", str(out), "--env", "dev", "--out", str(tmp_path / "p"))
    assert code == 2
    assert "source.toolkit.fluxcd.io/v1beta2 is not served by the GitRepository CRD" in output


MARKER = OLD_RECONCILER.replace(
    "apiVersion: v1\n      kind: Marker", "apiVersion: example.com/v1\n      kind: Marker"
)
# text Kalypso wrote as it is, holding jinja2's delimiters: kept from jinja2
LITERALS = MARKER.replace(
    "list: ['{{ .Path }}']",
    "list: ['{{ .Path }}', '{% raw %}'], note: '{% if %} {# c #} at {{ .Workload }}/{{.ClusterType}}', "
    "plain: 'endraw {%'",
)


@pytest.mark.parametrize("naming", ["2023"])
def test_the_rules_the_sample_does_not_exercise_convert_too(tmp_path: Path, naming: str) -> None:
    """Workload labels winning, config merged in name order, an empty cluster type, a workspace
    filter, list items and jinja2 delimiters left as written; both namings."""
    cp = world(tmp_path, main={"templates/current.yaml": None, "templates/flux.yaml": LITERALS})
    env = {"PROMOTER_KALYPSO_NAMING": naming}
    out = tmp_path / "converted"
    result = convert(cp, out, env=env)
    assert result.exit_code == 0, result.output
    assert "warning: targets of environments not converted were left out: app-later (prod)" in result.output
    result = CliRunner(env=env).invoke(
        cli, ["render", "--control-plane", str(cp), "--env", "dev", "--out", str(tmp_path / "k")]
    )
    assert result.exit_code == 0, result.output
    kalypso = tree_of(tmp_path / "k")
    promoter = render(out, "dev", tmp_path / "p")
    assert_same_tree(kalypso, promoter, "config.yaml" if naming == "2023" else "platform-config.yaml")
    assert b"note: '{% if %} {# c #} at app/big'" in promoter["big/app-web/reconciler.yaml"]
    workload = yaml.safe_load((out / "workloads" / "app.yaml").read_text())
    assert workload["spec"]["deploymentTargets"][0]["labels"] == {"tier": "gold", "edge": "true"}


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (None, "templates/current.yaml:8: template current, manifest 1: a string manifest (Go text/template"),
        (
            NAMESPACE.replace("'{{ .Namespace }}'", "'{{ .Namespace | upper }}'"),
            "templates/ns.yaml:9: template ns, manifest 1, metadata.name: '{{ .Namespace | upper }}' uses more "
            "than a plain field",
        ),
        (
            NAMESPACE.replace("'{{ .Namespace }}'", "'{{ .Labels.tier }}'"),
            "template ns, manifest 1, metadata.name: '{{ .Labels.tier }}' uses more than a plain field",
        ),
    ],
)
def test_what_cannot_be_translated_is_named(tmp_path: Path, template: str | None, message: str) -> None:
    main = {} if template is None else {"templates/current.yaml": None, "templates/ns.yaml": template}
    cp = world(tmp_path, main=main)  # type: ignore[arg-type]
    out = tmp_path / "converted"
    code, output = run(
        "convert", "--from", "kalypso", "--control-plane", str(cp), "--environments", "dev", "--out", str(out)
    )
    assert code == 2, output
    assert output.startswith("error: ") and message in output
    assert not out.exists()  # nothing half-written


def test_convert_refuses_what_it_cannot_write_to_or_read(tmp_path: Path) -> None:
    cp = world(tmp_path, main={"templates/current.yaml": None})
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    code, output = run(
        "convert", "--from", "kalypso", "--control-plane", str(cp), "--environments", "dev",
        "--out", str(tmp_path / "full"),
    )  # fmt: skip
    assert code == 2 and "exists and is not an empty directory" in output
    code, output = run(
        "convert", "--from", "kalypso", "--control-plane", str(cp), "--out", str(tmp_path / "o")
    )
    assert code == 2 and "give --environments dev,stage or --environments-file FILE" in output
    promoter_cp = tmp_path / "converted"
    code, output = run(
        "convert",
        "--from",
        "kalypso",
        "--control-plane",
        str(cp),
        "--environments",
        "dev",
        "--out",
        str(promoter_cp),
    )
    assert code == 0, output
    code, output = run(
        "convert", "--from", "kalypso", "--control-plane", str(promoter_cp), "--environments", "dev",
        "--out", str(tmp_path / "again"),
    )  # fmt: skip
    assert code == 2 and "is not a Kalypso control plane" in output


def test_the_environments_file_carries_merge_timeout_and_gates_into_the_pipeline(tmp_path: Path) -> None:
    cp, sha = sample_with_flux_v1(tmp_path)
    order = tmp_path / "order.yaml"
    order.write_text(ENVIRONMENTS)
    out = tmp_path / "converted"
    code, output = run(
        "convert", "--from", "kalypso", "--control-plane", str(cp), "--commit", sha,
        "--environments-file", str(order), "--out", str(out),
    )  # fmt: skip
    assert code == 0, output
    environments = yaml.safe_load((out / "promoter.yaml").read_text())["spec"]["environments"]
    assert environments == [
        {"name": "dev", "gitops": {"branch": "dev", "path": "."}, "merge": "direct", "timeout": "30m",
         "gates": [{"command": ["true"]}]},
        {"name": "stage", "gitops": {"branch": "stage", "path": "."}, "merge": "auto", "timeout": "5m"},
    ]  # fmt: skip
    code, output = run("validate", "--control-plane", str(out))
    assert code == 0, output


def test_the_sample_as_kalypso_left_it_renders_when_its_cluster_types_run_flux_before_2_8(
    tmp_path: Path,
) -> None:
    """The unmodified arc-flux Template (Flux v1beta2), with dev's ClusterTypes declaring Flux
    2.3 (``spec.versions``): the converted control plane renders the same tree, and warns that
    Flux 2.8 drops v1beta2."""
    cp, _ = build_sample(tmp_path / "repos")
    git = Git(cp)
    git.run("checkout", "--quiet", "dev")
    for path in sorted(cp.glob("cluster-types/**/*-cluster-type.yaml")):
        path.write_text(path.read_text().rstrip("\n") + "\n  versions: {flux: '2.3'}\n")
    git.run("commit", "--quiet", "-am", "dev runs Flux 2.3")
    git.run("checkout", "--quiet", "main")
    out = tmp_path / "converted"
    code, output = run(
        "convert", "--from", "kalypso", "--control-plane", str(cp), "--environments", "dev", "--out", str(out)
    )
    assert code == 0, output
    drone = next(yaml.safe_load_all(Git(out).out("show", "dev:cluster-types/drone.yaml")))
    assert drone["spec"]["versions"] == {"flux": "2.3"}
    result = CliRunner().invoke(
        cli, ["render", "--control-plane", str(out), "--env", "dev", "--out", str(tmp_path / "p")]
    )
    assert result.exit_code == 0, result.output
    assert (
        "warning: dev/drone: source.toolkit.fluxcd.io/v1beta2 GitRepository is served by Flux 2.3, "
        "but Flux 2.8 no longer serves it" in result.output
    )
    kalypso = render(cp, "dev", tmp_path / "k")
    assert_same_tree(kalypso, tree_of(tmp_path / "p"))
