"""The benchmark at size S, run as part of the suite so that it cannot rot: what it produces is
checked (file counts, what changed, that a no-op commits nothing), never how long it took. And
the equivalences the promoter's speed rests on: the ConfigMap index against the plain
definition, the fast YAML check against the full one, the forked render against one loop, tree
ids against git's, the render memo against a fresh render."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from benchmarks import wave_gap
from benchmarks.floor import measure_control_plane
from benchmarks.generate import SIZES, Generated, change_one_cluster_type, fill_platform, generate
from benchmarks.scenarios import count_files, refs, run_flow
from promoter.cli.main import cli
from promoter.controlplane.repo import ControlPlane
from promoter.controlplane.yamlfile import surely_one_mapping
from promoter.errors import InputError, SchemaError, TemplateError
from promoter.model import ConfigSchema, EnvironmentObjects, MainObjects, Manifest, Source, Template
from promoter.platform import writer as platform
from promoter.platform.objects import files_tree_id
from promoter.platform.provenance import PROVENANCE, Provenance
from promoter.platform.repo import PlatformRepo
from promoter.rendering import parallel, sandbox
from promoter.rendering.builtins import all_templates
from promoter.rendering.render import Renderer
from promoter.rendering.tree import render_environment
from promoter.scheduling.config import merged_config
from promoter.scheduling.environment import EnvironmentSchedule, assign
from promoter.scheduling.schemas import SchemaChecker
from promoter.scheduling.targets import Assignment, config_maps_for

S = SIZES["S"]
ASSIGNMENTS_PER_CLUSTER_TYPE = S.workloads // 2  # each stack goes to half the cluster types


@pytest.fixture
def small(tmp_path: Path) -> Generated:
    return generate(tmp_path / "S", S)


def loaded(generated: Generated, env: str = "dev") -> tuple[MainObjects, EnvironmentObjects]:
    cp = ControlPlane(generated.control_plane)
    main = cp.main(cp.resolve(None))
    environment = main.pipeline.environment(env)
    assert environment is not None
    return main, cp.environment(environment)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def present_blobs(repo: Path) -> set[str]:
    """Blobs in a repo's object store, listed without fetching anything."""
    out = git(repo, "cat-file", "--batch-all-objects", "--batch-check")
    return {line.split()[0] for line in out.splitlines() if line.split()[1] == "blob"}


def count_renders(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    original = Renderer.render_read  # what render() and the checked render both call

    def counted(self: Renderer, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Renderer, "render_read", counted)
    return calls


def test_size_s_full_incremental_noop_and_cold(
    small: Generated, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert fill_platform(small, "qa") == S.files
    monkeypatch.setenv("PROMOTER_CACHE_DIR", str(tmp_path / "warm"))
    monkeypatch.setattr(platform, "PARALLEL_BLOBS", 100)  # blobs first, in two processes

    full = run_flow(small.control_plane, env="dev", scheduling=False)
    assert (full["report"]["state"], full["report"]["files"]) == ("success", S.files)
    assert count_files(small.platform, "dev") == S.files
    assert set(full["phases"]) == {"load", "schedule", "render", "commit", "push"}
    main, objects = loaded(small)
    rendered = render_environment(main, objects, "dev")
    for folder in ("ct-0000", "ct-0031"):  # tree ids computed in Python are git's own
        ours = files_tree_id(
            {
                p[len(folder) + 1 :]: _blob(rendered.files[p])
                for p in rendered.files
                if p.startswith(f"{folder}/")
            }
        )
        assert ours == git(small.platform, "rev-parse", f"dev:{folder}").strip()

    before = git(small.platform, "rev-parse", "dev").strip()
    change_one_cluster_type(small, "dev")
    renders = count_renders(monkeypatch)
    # promoter diff, from remembered folders: only what changed, file by file
    shown = CliRunner().invoke(cli, ["diff", "--control-plane", str(small.control_plane), "--env", "dev"])
    assert shown.exit_code == 1, shown.output  # a difference: exit 1, as flux diff
    patched = {line[len("+++ b/") :] for line in shown.output.splitlines() if line.startswith("+++ b/")}
    assert len(patched) == ASSIGNMENTS_PER_CLUSTER_TYPE
    assert all(p.startswith("ct-0000/") and p.endswith("/platform-config.yaml") for p in patched)
    assert renders[0] == 3 * ASSIGNMENTS_PER_CLUSTER_TYPE
    renders[0] = 0
    incremental = run_flow(small.control_plane, env="dev", scheduling=True)
    assert incremental["report"]["state"] == "success"
    assert incremental["report"]["changed"] == ASSIGNMENTS_PER_CLUSTER_TYPE
    assert renders[0] == 3 * ASSIGNMENTS_PER_CLUSTER_TYPE  # the changed cluster type only
    changed = git(small.platform, "diff", "--name-only", before, "dev").split()
    assert len(changed) == ASSIGNMENTS_PER_CLUSTER_TYPE + 1
    assert PROVENANCE in changed
    assert all(
        p.startswith("ct-0000/") and p.endswith("/platform-config.yaml") for p in changed if p != PROVENANCE
    )
    assert "MAX_SURGE: '2'" in git(
        small.platform, "show", f"dev:{next(p for p in changed if p != PROVENANCE)}"
    )

    settled = refs(small.platform)
    renders[0] = 0
    noop = run_flow(small.control_plane, env="dev", scheduling=True)
    assert noop["report"]["state"] == "noop"
    assert refs(small.platform) == settled  # no commit, no push
    assert renders[0] == 0

    monkeypatch.setenv("PROMOTER_CACHE_DIR", str(tmp_path / "cold"))
    cold = run_flow(small.control_plane, env="dev", scheduling=True)
    assert cold["report"]["state"] == "noop"
    assert refs(small.platform) == settled
    # An empty cache, but the platform branch's provenance records what each folder was
    # rendered from: nothing is rendered again, and nothing changes.
    assert renders[0] == 0
    cache = Path(cold["cache"])
    blobs = present_blobs(cache)
    assert len(blobs) < 5  # a partial clone: trees, and only the blobs that were read
    qa_provenance = git(small.platform, "rev-parse", f"qa:{PROVENANCE}").strip()
    assert qa_provenance not in blobs
    assert "qa" not in git(cache, "for-each-ref")


def _blob(data: bytes) -> str:
    from promoter.platform.objects import blob_id

    return blob_id(data)


def test_floor_renders_the_same_files(small: Generated, tmp_path: Path) -> None:
    floor = measure_control_plane(small.control_plane, "dev", tmp_path / "floor.git")
    assert floor["files"] == S.files
    assert count_files(tmp_path / "floor.git", "floor") == S.files


def test_config_index_agrees_with_the_plain_definition(small: Generated) -> None:
    main, objects = loaded(small)
    assignments = assign(main, objects, "dev")
    assert len(assignments) == S.assignments
    specificities = set()
    for a in assignments:
        plain = Assignment(a.environment, a.cluster_type, a.workload, a.target)
        config, sources = merged_config(plain, objects.configmaps)
        assert (
            a.config_sources == sources == tuple(cm.name for cm in config_maps_for(plain, objects.configmaps))
        )
        assert a.config == config
        specificities.update(len(objects.configmaps[n].labels) - 1 for n in sources)
    assert specificities == {0, 1, 2, 3}


def test_schema_verdicts_are_shared_only_where_they_must_agree() -> None:
    source = Source("schemas.yaml", 1)
    local = ConfigSchema(
        "local", {}, {"type": "object", "required": ["A"], "properties": {"A": {"type": "integer"}}}, source
    )
    closed = ConfigSchema("closed", {"x": "y"}, {"type": "object", "additionalProperties": False}, source)
    checker = SchemaChecker({"local": local, "closed": closed})

    def assignment(config: dict[str, Any], labels: dict[str, str] | None = None) -> Assignment:
        from promoter.model import ClusterType, DeploymentTarget, Workload

        ct = ClusterType("c", labels or {}, "flux", "default", "configmap", source)
        t = DeploymentTarget("t", "dev", {}, {"repo": "r"}, source)
        return Assignment("dev", ct, Workload("w", {}, "team", (t,), source), t, config, ("cm",))

    checker.check(assignment({"A": 1, "B": "x"}))
    checker.check(assignment({"A": 1, "B": "other"}))  # same named keys: the same verdict
    with pytest.raises(SchemaError, match="True is not of type 'integer'"):
        checker.check(assignment({"A": True}))  # equal to 1, but a boolean
    checker.check(assignment({"A": 2, "B": 1}, {"x": "z"}))  # "closed" does not apply here
    with pytest.raises(SchemaError, match="Additional properties"):
        checker.check(assignment({"A": 2, "B": 1}, {"x": "y"}))


ACCEPTED = [
    "a: 1\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, labels: {a: b}}\ndata:\n  K: '{\"x\": 1}'\n",
    "a:\n  - b\n  - {c: [d, e]}\nf: |\n  text: with # and : inside\n",
    "# a comment first\nkey: value\n",
    "url: https://example.com/x?y=1\n",
    "a: 2024-02-30\n",  # an invalid date: the full check crashes on it (ValueError), libyaml does not
]
REFUSED_BY_BOTH = [
    "a: [1, 2\n",
    "a: b: c\n",
    "a: 1\n- b\n",
    "a: 'unterminated\n",
    "a:\n\tb: 1\n",
    "a: \x07\n",
]
LEFT_TO_THE_FULL_CHECK = [
    "a: &x 1\nb: *x\n",
    "a: *undefined\n",
    "a: !!python/object {}\n",
    "<<: 1\n",
    "[a, b]: c\n",
    "{a: 1}: c\n",
    "? [a]\n: b\n",
    "a: =\n",
    "%YAML 1.1\n---\na: 1\n",
    "a: 1\n---\nb: 2\n",
    "---\na: 1\n",
    "a: 1\n...\n",
    "a: 1\rb: 2\n",
    "just text\n",
    "- a\n",
    "",
    "'quoted': key\n",
    "a: |\n  is this ? a question\n",  # "? " anywhere: maybe a complex key, so not sure
]


def full_check(text: str) -> bool:
    try:
        docs = [d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d is not None]
    except (yaml.YAMLError, ValueError):
        return False
    return len(docs) == 1 and isinstance(docs[0], dict)


@pytest.mark.parametrize("text", ACCEPTED + REFUSED_BY_BOTH + LEFT_TO_THE_FULL_CHECK)
def test_fast_yaml_check_never_accepts_what_the_full_check_refuses(text: str) -> None:
    fast = surely_one_mapping(text)
    if text in ACCEPTED:
        assert fast
        assert full_check(text) or "2024-02-30" in text
    else:
        assert not fast
    if fast and "2024-02-30" not in text:
        assert full_check(text)


def test_fast_yaml_check_takes_every_file_of_size_s(small: Generated) -> None:
    main, objects = loaded(small)
    rendered = render_environment(main, objects, "dev")
    docs = [doc for data in rendered.files.values() for doc in data.decode().split("---\n")]
    assert docs
    assert all(surely_one_mapping(doc) and full_check(doc) for doc in docs)


def failing_flux(fail_on: set[str]) -> Template:
    """A reconciler template that divides by zero on the named cluster types."""
    division = "{{ 1 // (0 if cluster_type in " + repr(sorted(fail_on)) + " else 1) }}"
    body = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: x}}\ndata: {{n: '{division}'}}\n"
    return Template("flux", "reconciler", (Manifest(body, 8),), Source("templates/flux.yaml", 1))


def test_forked_render_gives_what_one_loop_gives(small: Generated) -> None:
    main, objects = loaded(small)
    templates = all_templates(main)
    assignments = assign(main, objects, "dev")
    serial = parallel.render_all(Renderer(templates), templates, assignments)

    def forked(
        main: MainObjects, templates: dict[str, Template], assigned: dict[str, Any]
    ) -> dict[str, bytes]:
        schedule = EnvironmentSchedule(main, objects, "dev")
        return parallel.render_in_two(
            Renderer(templates), templates, schedule, list(schedule.pairs), assigned
        )

    assigned: dict[str, Any] = {}
    files = forked(main, templates, assigned)
    assert list(files) == list(serial)
    assert files == serial
    first_half = [ct for ct in EnvironmentSchedule(main, objects, "dev").pairs][: S.cluster_types // 2]
    assert list(assigned) == first_half  # the child's half is merged again only when asked for

    def first_error(fail_on: set[str], fork: bool, schemas: dict[str, ConfigSchema] | None = None) -> str:
        bad = {**templates, "flux": failing_flux(fail_on)}
        with_schemas = dataclasses.replace(main, schemas=schemas or {})
        with pytest.raises(InputError) as err:
            if fork:
                forked(with_schemas, bad, {})
            else:
                parallel.render_all(Renderer(bad), bad, assign(with_schemas, objects, "dev"))
        return str(err.value)

    last = [a.cluster_type.name for a in assignments if a.cluster_type.reconciler == "flux"][
        -1
    ]  # the child's
    assert "ZeroDivisionError" in first_error({last}, fork=True)
    assert first_error({last}, fork=True) == first_error({last}, fork=False)
    both = {"ct-0000", last}
    assert "ct-0000" in first_error(both, fork=True)
    assert first_error(both, fork=True) == first_error(both, fork=False)
    # config is checked before anything renders: the child's schema error beats our template error
    strict = {
        "last": ConfigSchema("last", {"cluster-type": last}, {"required": ["NOPE"]}, Source("s.yaml", 1))
    }
    assert "ConfigSchema 'last'" in first_error({"ct-0000"}, fork=True, schemas=strict)
    assert first_error({"ct-0000"}, fork=True, schemas=strict) == first_error(
        {"ct-0000"}, fork=False, schemas=strict
    )


def test_render_memo_skips_known_folders_and_renders_them_on_demand(
    small: Generated, monkeypatch: pytest.MonkeyPatch
) -> None:
    main, objects = loaded(small)
    first = render_environment(main, objects, "dev")
    fresh = dict(first.files)
    platform = PlatformRepo(str(small.platform))
    base = platform.fetch(["dev"])["dev"]
    provenance = Provenance(
        pipeline="p", environment="dev", main_commit=main.commit, env_branch="dev",
        env_commit=objects.commit, cluster_types=first.cluster_types, files=len(fresh),
    )  # fmt: skip
    plan = platform.plan(base, "", first.files, first.cluster_types, provenance)
    assert plan.changes["ct-0000"].added == 3 * ASSIGNMENTS_PER_CLUSTER_TYPE
    platform.commit(plan, "", [base] if base else [], "render")  # the trees are in the cache now

    renders = count_renders(monkeypatch)
    again = render_environment(main, objects, "dev")
    assert renders[0] == 0
    assert len(again.files) == len(fresh) and list(again.files) == list(fresh)
    assert len(again.assignments) == S.assignments
    assert [a.config for a in again.assignments] == [a.config for a in first.assignments]
    assert again.files["ct-0005/app-0003-dev/namespace.yaml"] == fresh["ct-0005/app-0003-dev/namespace.yaml"]
    assert renders[0] == 3 * ASSIGNMENTS_PER_CLUSTER_TYPE  # that folder, and only it
    assert dict(again.files) == fresh


def test_watchdog_stops_a_long_render_in_a_batch(factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.helpers import ENV, PIPELINE, WORKLOAD

    loop = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    flux = (
        "apiVersion: promoter.dev/v1alpha1\nkind: Template\nmetadata: {name: flux}\nspec:\n"
        f"  type: reconciler\n  manifests:\n    - |\n      a: '{loop}'\n"
    )
    path = factory.create(
        {"promoter.yaml": PIPELINE, "workloads/app.yaml": WORKLOAD, "flux.yaml": flux},
        {"dev": {"env.yaml": ENV}},
    )
    cp = ControlPlane(path)
    main = cp.main(cp.resolve(None))
    env = main.pipeline.environment("dev")
    assert env is not None
    monkeypatch.setattr(sandbox, "RENDER_SECONDS", 0.3)
    with pytest.raises(TemplateError, match=r"rendering took longer than 0\.3s"):
        render_environment(main, cp.environment(env), "dev")


def test_generated_sizes_are_what_they_say() -> None:
    assert [SIZES[n].files for n in "SML"] == [960, 20_400, 101_376]
    assert dataclasses.replace(S, workloads=4, cluster_types=8).assignments == 16


def nested(shape: str, levels: int) -> str:
    """YAML nested about ``levels`` deep in one of the ways block and flow YAML nest."""
    if shape == "indented":
        return "".join(f"{' ' * i}k{i}:\n" for i in range(levels)) + " " * levels + "v\n"
    if shape == "same-column":  # a sequence at its key's column, a mapping in it, and so on
        return (
            "".join(f"{' ' * (2 * i)}k{i}:\n{' ' * (2 * i)}- " + "\n" for i in range(levels))
            + " " * (2 * levels)
            + "v\n"
        )
    if shape == "compact":
        return "- " * levels + "v\n"
    if shape == "mixed":
        return "".join(f"{'  ' * i}- k{i}:\n" for i in range(levels)) + "  " * levels + "  [[v]]\n"
    return "a: " + "[" * levels + "]" * levels + "\n"


def depth_of(text: str) -> int:
    deepest = depth = 0
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return deepest


@pytest.mark.parametrize("shape", ["indented", "same-column", "compact", "mixed", "flow"])
def test_shallow_never_says_so_of_a_deep_file(shape: str) -> None:
    from promoter.controlplane.yamlfile import _shallow

    for levels in range(1, 60):
        text = nested(shape, levels)
        depth = depth_of(text)
        assert depth >= levels
        assert not _shallow(text, depth - 1), (shape, levels, text)  # the bound only grows with the limit
    assert _shallow(nested(shape, 3), 100)


def test_the_gap_between_waves_is_measured(tmp_path: Path) -> None:
    """The benchmark of the gap between waves runs; its limit is checked by the benchmark."""
    gap = wave_gap.measure(tmp_path / "gap")
    assert gap["local_s"] > 0 and gap["github_s"] > 0
    assert (gap["local_limit_s"], gap["github_limit_s"]) == (3.0, 7.0)
    assert wave_gap.line(gap).startswith("gap between waves (gates passed -> next PR opened): local ")
