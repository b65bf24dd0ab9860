"""The package's shape, checked: layers import only downwards, no import circle, small modules
and functions, imports at the top of modules (docs/architecture.md)."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PACKAGE = ROOT / "promoter"

# Lowest first. A module may import its own package and anything of a lower rank. A dotted key
# ranks one module apart from its package (the gate registry sits below the control plane).
LAYERS: dict[str, int] = {
    "errors": 0,
    "urls": 0,
    "clock": 0,
    "masking": 1,
    "trace": 1,
    "console": 2,
    "gitbatch": 1,
    "gitlayout": 1,
    "gitcmd": 2,
    "gitremote": 3,
    "model": 3,
    "gates.registry": 4,
    "changecontrol": 4,
    "controlplane": 5,
    "gates": 6,
    "gotemplate": 5,
    "k8s": 3,
    "scheduling": 6,
    "rendering": 7,
    "kalypso": 8,
    "platform": 8,
    "forges": 9,
    "hub": 10,
    "promotion": 11,
    "runtime": 12,
    "ghactions": 13,
    "scaffold": 14,
    "demos": 14,
    "cli": 15,
    "__main__": 16,
    "__init__": 16,
}
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 50
# An import inside a function is allowed only to defer a heavy optional dependency, and says so.
DEFERRED_MARKERS = ("heavy", "only when", "loads only", "optional", "defer")


@functools.cache  # the package does not change while the suite runs
def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(path: Path, name: str) -> set[str]:
    """The promoter modules ``path`` imports at module level (TYPE_CHECKING blocks excluded)."""
    tree = ast.parse(path.read_text())
    known = modules()
    out: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in _top_level(tree.body):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("promoter")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            if not base.startswith("promoter"):
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                out.add(candidate if candidate in known else base)
    return out


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.If | ast.Try):
            out += _top_level(node.body)
            if isinstance(node, ast.Try):
                for handler in node.handlers:
                    out += _top_level(handler.body)
            out += _top_level(node.orelse)
        else:
            out.append(node)
    return out


def layer(module: str) -> tuple[str, int]:
    top = module.split(".")[1] if "." in module else "__init__"
    own = ".".join(module.split(".")[1:3])
    if own in LAYERS:
        return own, LAYERS[own]
    assert top in LAYERS, f"{module}: add its package to LAYERS in this test and to docs/architecture.md"
    return top, LAYERS[top]


@functools.cache
def graph() -> dict[str, set[str]]:
    return {name: imports(path, name) for name, path in modules().items()}


def climbing(edges: Mapping[str, set[str]]) -> list[str]:
    """Each import of ``edges`` that reaches a package of the same or a higher rank than its own."""
    wrong = []
    for module, targets in sorted(edges.items()):
        top, rank = layer(module)
        for target in sorted(targets):
            their_top, their_rank = layer(target)
            if their_top != top and their_rank >= rank:
                wrong.append(f"{module} ({top}, {rank}) imports {target} ({their_top}, {their_rank})")
    return wrong


def test_layers_import_only_downwards() -> None:
    wrong = climbing(graph())
    assert not wrong, "\n".join(wrong)


def _module(tmp_path: Path, name: str, source: str) -> dict[str, set[str]]:
    """The import graph of one module named ``name`` whose text is ``source``, as the checks read it."""
    path = tmp_path / "module.py"
    path.write_text(source)
    return {name: imports(path, name)}


def test_the_layer_check_reports_an_import_that_climbs(tmp_path: Path) -> None:
    """The check itself: a low module that imports the command line, absolutely or relatively,
    is reported; its imports downwards and its type-only imports are not."""
    source = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from promoter.errors import UsageError\n"
        "from promoter.cli.main import cli\n"
        "from ..ghactions import runner\n"
        "if TYPE_CHECKING:\n"
        "    from promoter.runtime import Runtime\n"
    )
    assert climbing(_module(tmp_path, "promoter.promotion.climber", source)) == [
        f"promoter.promotion.climber (promotion, {LAYERS['promotion']}) imports promoter.cli.main (cli, {LAYERS['cli']})",
        f"promoter.promotion.climber (promotion, {LAYERS['promotion']}) imports promoter.ghactions.runner "
        f"(ghactions, {LAYERS['ghactions']})",
    ]


@pytest.mark.parametrize(
    ("name", "target", "both_ways"),
    [
        ("promoter.ghactions.x", "promoter.scaffold.workflows", False),  # Actions' runtime below init's files
        ("promoter.scaffold.x", "promoter.demos.promotion", True),  # one rank: neither knows the other
        ("promoter.demos.x", "promoter.cli.output", False),  # nothing imports the command line
        ("promoter.runtime", "promoter.ghactions.publish", False),
    ],
)
def test_the_new_packages_are_ranked(tmp_path: Path, name: str, target: str, both_ways: bool) -> None:
    """The packages between the runtime and the command line: an import that climbs among them
    is reported; the one the other way only between packages of one rank."""
    assert len(climbing(_module(tmp_path, name, f"import {target}\n"))) == 1
    assert len(climbing(_module(tmp_path, target, f"import {name}\n"))) == int(both_ways)


def test_no_import_circle() -> None:
    edges = graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                raise AssertionError("import circle: " + " -> ".join(cycle))
            if nxt in edges and not state.get(nxt):
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if not state.get(node):
            visit(node)


def test_rendering_reaches_no_git_or_process_code() -> None:
    """The renderer is pure: its import closure holds no git wrapper and no subprocess use,
    except the parallel workers beside it."""
    edges = graph()
    seen: set[str] = set()
    todo = [m for m in edges if m.startswith("promoter.rendering") and not m.endswith(".parallel")]
    todo = [m for m in todo if m != "promoter.rendering"]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo += [t for t in edges.get(module, ()) if not t.endswith("rendering.parallel")]
    assert "promoter.gitcmd" not in seen
    assert not [m for m in seen if m.startswith(("promoter.platform.repo", "promoter.forges"))]
    for module in seen:
        text = modules()[module].read_text()
        assert "import subprocess" not in text and "os.fork" not in text, module


@pytest.mark.parametrize("name", sorted(modules()))
def test_module_is_small(name: str) -> None:
    lines = len(modules()[name].read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{name} has {lines} lines"


def test_functions_are_short_and_import_at_the_top() -> None:
    long, inner = [], []
    for name, path in modules().items():
        text = path.read_text()
        source = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            if size > MAX_FUNCTION_LINES:
                long.append(f"{name}.{node.name}: {size} lines")
            for sub in ast.walk(node):
                if isinstance(sub, ast.Import | ast.ImportFrom):
                    line = source[sub.lineno - 1].lower()
                    if not any(marker in line for marker in DEFERRED_MARKERS):
                        inner.append(f"{name}:{sub.lineno}: {line.strip()}")
    assert not long, "\n".join(long)
    assert not inner, "imports inside functions without a reason:\n" + "\n".join(inner)


# Modules that load others by name, which the layer check cannot follow: the gate registry (a gate
# on first use, so the control plane validates gate specs without importing any gate) and the
# click group (its own commands, on first use). A new one hides a dependency: import it instead.
LOADS_BY_NAME = {"promoter.gates.registry", "promoter.cli.main"}


def test_only_the_known_modules_load_modules_by_name() -> None:
    found = set()
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            called = node.func if isinstance(node, ast.Call) else None
            by_attribute = isinstance(called, ast.Attribute) and called.attr == "import_module"
            by_name = isinstance(called, ast.Name) and called.id in ("import_module", "__import__")
            if by_attribute or by_name:
                found.add(name)
    assert found == LOADS_BY_NAME, f"modules loading modules by name: {sorted(found)}"


def test_nothing_at_radon_rank_d_or_worse() -> None:
    radon = Path(sys.executable).with_name("radon")
    if not radon.exists():
        pytest.fail("radon is a test dependency (pip install -e '.[test]')")
    out = subprocess.run(
        [str(radon), "cc", "-n", "D", str(PACKAGE)], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "", out.stdout


# Folders of tests/ that mirror no package: shared code and data, and the parts of the project
# outside promoter/ (the composite actions, the benchmarks).
# Tests of the project as a whole, at tests/'s root: its shape, its locks, its docs, its releases.
PROJECT_TESTS = {"architecture", "locks", "docs_commands", "release"}
NOT_PACKAGES = {"support", "fixtures", "golden", "golden-sources", "actions", "benchmarks", "__pycache__"}


def test_the_tests_are_laid_out_like_the_package() -> None:
    """The tests of ``promoter/x/y.py`` live in ``tests/x/``; a module at the package's root has
    its tests at ``tests/``'s root. So a reader finds a module's tests next to its name."""
    tests = ROOT / "tests"
    for folder in tests.rglob("*"):
        if not folder.is_dir() or NOT_PACKAGES & set(folder.relative_to(tests).parts):
            continue
        if any(folder.glob("test_*.py")):
            package = PACKAGE / folder.relative_to(tests)
            assert (package / "__init__.py").is_file(), (
                f"tests/{folder.relative_to(tests)} mirrors no package"
            )
    for module in tests.glob("test_*.py"):
        name = module.stem.removeprefix("test_")
        assert (PACKAGE / f"{name}.py").is_file() or name in PROJECT_TESTS, module.name
