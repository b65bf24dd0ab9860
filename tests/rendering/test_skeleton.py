"""Documents read once per skeleton are the objects reading each document gives: over every
file of the benchmark's size S, and over documents built to trip the sharing up (values as
keys, in comments, after backslashes, beside digits, in anchors; values YAML would read as
something else than text; a document that holds a placeholder of its own)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
import yaml

from promoter.rendering import skeleton
from promoter.rendering.parse import load_rendered
from promoter.rendering.skeleton import SkeletonReader, _typed, name_values

VALUES = [
    "app-0003",
    "app-0004",
    "gpu-pool-17",
    "main",
    "Hello.World-9",
    "1.2.3-dev",
    "1.2.4-dev",
    "team-42",
    "100m",
    "250m",
    "v1.2",
    "yes",  # no marker letter: never replaced
    "0x1F",
    "1e3",
    "mk",  # too short
    "ggg-0000",  # the placeholder shape of app-0003 with the first marker
    "hhhh",
    "web",
    "wep",
]

SHAPES = [
    "name: {0}\nnamespace: {1}\n",
    "a: x-{0}-y\nb: '{1}'\nc: \"{0}\"\n",
    'a: "\\t{0}\\n"\nb: "\\\\{1}"\n',
    'a: "\\{0}"\n',
    "{0}: 1\n{1}: 2\n",
    "a: 1 # {0}\nb: {1}\n",
    "a: &{0} [1, 2]\nb: *{0}\nc: {1}\n",
    "a: |\n  {0}\n  line {1}\nb: >\n  {1}\n  {0}\n",
    "a: [{0}, 1, {1}]\nb: {{k: {0}, {1}: v}}\n",
    "url: https://example.com/{0}/{1}.git\n",
    "a: 1{0}\nb: {0}1\nc: {0}:{1}\nd: 0.{0}\n",
    "a: {0}{1}\nb: {1}-{0}\n",
    "labels:\n  promoter.dev/workload: {0}\n  tier: {1}\nspec:\n  - {{name: {0}}}\n  - {1}\n",
    "a: ggg-0000\nb: {0}\n",
    "a: !!str {0}\nb: {1}\n",
    "a: {0}\n{0}: b\n",
]


def read_all(reader: SkeletonReader, shape: str, values: list[tuple[str, str]]) -> None:
    for first, second in values:
        text = shape.format(first, second)
        pairs = name_values([first, second])
        try:
            expected: Any = _typed(load_rendered(text.encode()))
        except yaml.YAMLError:
            expected = "error"

        def full(text: str = text) -> dict[str, Any]:
            [doc] = load_rendered(text.encode())
            return doc  # type: ignore[no-any-return]

        try:
            got: Any = _typed([reader.read(text, pairs, full)])
        except yaml.YAMLError:
            got = "error"
        assert got == expected, text


@pytest.mark.parametrize("shape", SHAPES)
def test_shared_reading_is_reading(shape: str) -> None:
    reader = SkeletonReader()
    pairs = list(itertools.permutations(VALUES, 2))
    random.Random(shape).shuffle(pairs)
    read_all(reader, shape, pairs * 2)  # every skeleton seen often enough to be shared


def test_names_are_shared_and_the_rest_is_not() -> None:
    reader = SkeletonReader()
    read_all(reader, SHAPES[0], [(f"app-{i:04d}", f"team-{i % 7}") for i in range(40)])
    assert reader.shared >= 30  # of 40 documents, two read in full per skeleton (7 skeletons)


def test_values_yaml_reads_as_other_than_text_are_never_replaced() -> None:
    assert [
        v for v, _ in name_values(["yes", "on", "null", "1e3", "0x1F", "12:30", "2024-01-02", "true"])
    ] == []
    assert {v for v, _ in name_values(["app-1", "gpu", "1.2.3-dev", "100m"])} == {
        "app-1",
        "gpu",
        "1.2.3-dev",
        "100m",
    }


def test_placeholders_keep_the_kind_of_every_character() -> None:
    [(value, ph)] = name_values(["Gb-12.c9"])
    assert len(ph) == len(value)
    assert [c.isalpha() for c in ph] == [c.isalpha() for c in value]
    assert [c.isdigit() for c in ph] == [c.isdigit() for c in value]
    assert ph[2] == "-" and ph[5] == "."
    assert set(ph) <= set(skeleton._MARKERS) | set("0.-")


def test_a_backslash_is_never_shared() -> None:
    reader = SkeletonReader()
    read_all(reader, 'a: "x\\\\{0}"\nb: {1}\n', [(f"app-{i:04d}", "web") for i in range(10)])
    assert reader.shared == 0


def test_the_benchmark_tree_reads_the_same_shared_or_not(tmp_path: Any) -> None:
    """Every document of size S (960 files: Flux and Argo CD, namespaces with quotas, configs),
    read through the renderer's skeletons, is what reading its file back gives."""
    from benchmarks.generate import SIZES, generate
    from promoter.controlplane.repo import ControlPlane
    from promoter.rendering.builtins import all_templates
    from promoter.rendering.render import ROLE_FILES, Renderer, variables
    from promoter.rendering.skeleton import assignment_values
    from promoter.scheduling.environment import EnvironmentSchedule

    generated = generate(tmp_path / "S", SIZES["S"])
    cp = ControlPlane(generated.control_plane)
    main = cp.main(cp.resolve(None))
    env = main.pipeline.environment("dev")
    assert env is not None
    schedule = EnvironmentSchedule(main, cp.environment(env), "dev")
    templates = all_templates(main)
    renderer = Renderer(templates)
    files = 0
    for ct in schedule.pairs:
        for a in schedule.assign(ct):
            context = variables(a)
            names = assignment_values(context)
            roles = (a.cluster_type.reconciler, a.cluster_type.namespace_service, a.cluster_type.config_type)
            for (_, _), name in zip(ROLE_FILES, roles, strict=True):
                data, objects = renderer.render_read(templates[name], a, context, names)
                assert _typed(objects) == _typed(load_rendered(data)), data.decode()
                files += 1
    assert files == SIZES["S"].files
    assert renderer.reader.shared > files  # most documents (a file may hold two) read once per skeleton


PIECES = [
    "{v}",
    "'{v}'",
    '"{v}"',
    '"\\t{v}"',
    "x-{v}",
    "{v}.{w}",
    "1{v}",
    "{v}:8080",
    "[{v}, {w}]",
    "{{a: {v}, {w}: 1}}",
    "&{v} [1]",
    "!!str {v}",
    "{v} # {w}",
    "https://h/{v}/{w}",
    "0x{v}",
    "{v}e3",
    "yes",
    "1.0",
    "'it''s {v}'",
    '"{v}\\n{w}"',
]


def random_document(rng: random.Random) -> str:
    """A mapping of random entries, each value (and some keys) made of the pieces above."""
    lines = []
    for i in range(rng.randint(1, 6)):
        key = rng.choice([f"k{i}", "{v}", "{w}-key", f"k{i}"])
        piece = rng.choice(PIECES)
        if rng.random() < 0.15:
            lines.append(f"{key}: |\n  {{v}} text\n  {{w}}")
        elif rng.random() < 0.1:
            lines.append(f"{key}:\n  - {piece}\n  - {{w}}")
        else:
            lines.append(f"{key}: {piece}")
    if rng.random() < 0.2:
        lines.append("alias: *{v}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(4))
def test_random_documents_read_the_same_shared_or_not(seed: int) -> None:
    rng = random.Random(seed)
    shared = 0
    for _ in range(250):
        shape = random_document(rng)
        reader = SkeletonReader()
        for n in range(8):  # mostly names of one shape (shared), some of any shape
            v, w = rng.sample(VALUES, 2) if n % 4 == 3 else (f"app-{rng.randint(1000, 9999)}", f"gpu{n}")
            text = shape.replace("{v}", v).replace("{w}", w)
            pairs = name_values([v, w])
            try:
                expected: Any = _typed(load_rendered(text.encode()))
            except yaml.YAMLError:
                expected = "error"

            def full(text: str = text) -> dict[str, Any]:
                docs = load_rendered(text.encode())
                if len(docs) != 1 or not isinstance(docs[0], dict):
                    raise yaml.YAMLError("not one mapping")
                return docs[0]  # type: ignore[no-any-return]

            try:
                got: Any = _typed([reader.read(text, pairs, full)])
            except yaml.YAMLError:
                got = "error"
            if expected != "error" and not (len(expected[1]) == 1 and expected[1][0][0] == "d"):
                continue  # not one mapping: the renderer refuses it before any sharing
            assert got == expected, text
        shared += reader.shared
    assert shared > 100  # the fuzzing reached the shared path
