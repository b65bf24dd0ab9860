"""Resource quantities read as apimachinery's ParseQuantity reads them."""

from __future__ import annotations

from decimal import Decimal

import pytest

from promoter.k8s.quantity import is_integer_resource, parse, quantities


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", Decimal(3)),
        (3, Decimal(3)),
        (0.5, Decimal("0.5")),
        ("500m", Decimal("0.5")),
        ("2Gi", Decimal(2 * 1024**3)),
        ("1.5Ki", Decimal(1536)),
        ("1e3", Decimal(1000)),
        ("1E-3", Decimal("0.001")),
        ("+1k", Decimal(1000)),
        ("-1", Decimal(-1)),
        (".5", Decimal("0.5")),
        ("100n", Decimal("1E-7")),
    ],
)
def test_quantities_are_read_as_kubernetes_reads_them(text: object, value: Decimal) -> None:
    assert parse(text) == value


@pytest.mark.parametrize(
    "text",
    ["three", "threethreethree", "", "1.2.3", "2GB", "2gi", "1 Gi", "Gi", "1e", "0x10", True, None, [1]],
)
def test_what_is_not_a_quantity(text: object) -> None:
    assert parse(text) is None


def test_counted_resources_want_whole_numbers() -> None:
    assert is_integer_resource("pods") and is_integer_resource("count/deployments.apps")
    assert is_integer_resource("example.com/gpu")
    assert not is_integer_resource("requests.cpu") and not is_integer_resource("memory")
    _, found = quantities({"pods": "1.5"}, "spec.hard")
    assert [str(f) for f in found] == ["spec.hard[pods]: '1.5': must be an integer"]
    _, found = quantities({"requests.cpu": "-1"}, "spec.hard")
    assert [str(f) for f in found] == ["spec.hard[requests.cpu]: '-1': must be greater than or equal to 0"]
    parsed, found = quantities({"requests.cpu": "500m", "pods": 10}, "spec.hard")
    assert found == [] and parsed == {"requests.cpu": Decimal("0.5"), "pods": Decimal(10)}
