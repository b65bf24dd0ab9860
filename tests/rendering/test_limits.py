"""Templates that try to exhaust memory, the stack or time: exit 2 naming the template file,
its line and the assignment, never a crash (exit 3) and never a multi-gigabyte allocation."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.rendering import sandbox
from tests.controlplane.test_bad_input import ANY_LINE, Case, _build, _check, template
from tests.support.helpers import ControlPlaneFactory

T = "templates/flux.yaml"
LIMIT = "over the limit of 1000000"


def render_case(id: str, expression: str, says: str = LIMIT) -> Case:
    """A reconciler template whose first manifest line (line 8) is ``a: <expression>``."""
    return Case(id, T, ANY_LINE, says, main={T: template(f"a: {expression}")})


def _doubling(operator: str) -> str:
    """Exponential growth: each ``set`` doubles the string before (12 doublings of 1,000)."""
    steps = "".join(f"{{% set s{i + 1} = s{i} {operator} s{i} %}}" for i in range(12))
    return "{% set s0 = 'x' * 1000 %}" + steps + "{{ s12|length }}"


CASES = [
    render_case("center-filter-huge", "{{ 'x'|center(10**12) }}"),
    render_case("center-filter-3gb", "{{ 'x'|center(3000000000) }}"),
    render_case("center-method", "{{ 'x'.center(3000000000) }}"),
    render_case("ljust-method", "{{ 'x'.ljust(2000000) }}"),
    render_case("zfill-method", "{{ '1'.zfill(5000000) }}"),
    render_case("join-huge-separator", "{{ ['a', 'b', 'c']|join('-' * 999999) }}"),
    render_case("join-method", "{{ ('-' * 999999).join(['a', 'b', 'c']) }}"),
    render_case("replace-explodes", "{{ ('x' * 1000).replace('x', 'y' * 5000) }}"),
    render_case("replace-filter-explodes", "{{ ('x' * 1000)|replace('x', 'y' * 5000) }}"),
    render_case("printf-width", "{{ '%3000000000s' % 'a' }}"),
    render_case("format-filter-width", "{{ '%3000000000s'|format('a') }}"),
    render_case("format-method-width", "{{ '{:>3000000000}'.format('a') }}"),
    render_case("indent-huge", "{{ 'a\\nb'|indent(3000000000) }}"),
    render_case("repeat-list", "{{ ([1] * 10000000)|length }}"),
    render_case("doubling-by-concat", _doubling("~")),
    render_case("doubling-by-plus", _doubling("+")),
    render_case(
        "recursive-macro",
        "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(1) }}",
        says="RecursionError: a macro or loop calls itself too deeply",
    ),
    render_case(
        "mutual-recursion",
        "{% macro f(n) %}{{ g(n) }}{% endmacro %}{% macro g(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
        says="RecursionError",
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_exhausting_template_is_bad_input(factory: ControlPlaneFactory, case: Case) -> None:
    _check(factory, case)


def test_growth_below_the_limit_still_renders(factory: ControlPlaneFactory) -> None:
    expression = "{{ 'x'|center(9) ~ ('ab' * 3) ~ ', '.join(['a', 'b']) ~ '%5s'|format('z') }}"
    _check_valid(factory, {T: template(f"a: '{expression}'")})


def test_many_renders_share_one_budget_per_run(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each render is far under its own limit; together they pass the run's."""
    _check_valid(factory, {})
    monkeypatch.setenv("PROMOTER_RENDER_BUDGET", "0s")
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path)])
    assert result.exit_code == 2, result.output
    assert "of the run's rendering budget (0.0ms, --render-budget)" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def _check_valid(factory: ControlPlaneFactory, main: dict[str, str]) -> None:
    _build(factory, Case("valid", "", None, "", main=dict(main)))
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path)])
    assert result.exit_code == 0, result.output


def test_limit_is_one_million() -> None:
    assert sandbox.MAX_STRING == 1_000_000 and LIMIT.endswith(str(sandbox.MAX_STRING))
