"""Resource quantities as apimachinery's ``resource.ParseQuantity`` reads them (``500m``,
``2Gi``, ``1e3``, ``3``), and the API server's rules of their values: never negative, whole
numbers for what is counted (pods, services, extended resources), requests within limits.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from promoter.k8s.fields import Finding, Findings, memoised, qualified_name

QUANTITY = re.compile(
    r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?"
)
SUFFIXES = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    **{s: Decimal(1024) ** (i + 1) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))},
}
NOT_A_QUANTITY = (
    "is not a quantity such as 500m, 2Gi or 3: quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
# Counted, not measured: the API server wants whole numbers (helper.IsIntegerResourceName).
INTEGER_RESOURCES = frozenset(
    {
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)


def parse(value: Any) -> Decimal | None:
    """The quantity's value, or None when it is not one (a YAML number is read as its text)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    return _parse(value)


@memoised
def _parse(value: str | int | float) -> Decimal | None:
    match = QUANTITY.fullmatch(str(value)) if isinstance(value, str) else QUANTITY.fullmatch(_number(value))
    if match is None:
        return None
    number, suffix = match.group(1), match.group(2) or ""
    try:
        if suffix[:1] in ("e", "E"):
            return Decimal(number) * Decimal(10) ** int(suffix[1:])
        return Decimal(number) * SUFFIXES[suffix]
    except (InvalidOperation, OverflowError):
        return None


def _number(value: int | float) -> str:
    return str(value) if isinstance(value, int) else repr(value).replace("e+", "e")


def is_extended(name: str) -> bool:
    """A resource of a domain other than kubernetes.io (``example.com/gpu``): counted."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return qualified_name("requests." + name) is None


def is_integer_resource(name: str) -> bool:
    return name in INTEGER_RESOURCES or name.startswith("count/") or is_extended(name)


def quantities(
    values: Any, path: str, *, name_rule: Any = qualified_name, integer: Any = is_integer_resource
) -> tuple[dict[str, Decimal], list[Finding]]:
    """Each ``resource: quantity`` of a mapping (requests, limits, hard, ...) parsed, and the first
    problem: a bad resource name, a value that is not a quantity, negative, or not whole."""
    parsed: dict[str, Decimal] = {}
    if not isinstance(values, dict):
        return parsed, []
    for name, raw in values.items():
        number, said, value = _judged((name, raw, name_rule, integer))
        if said:
            return parsed, [Finding(f"{path}[{name}]", value, said)]
        parsed[name] = number
    return parsed, []


@memoised
def _judged(entry: tuple[Any, Any, Any, Any]) -> tuple[Decimal, str | None, Any]:
    """One ``resource: quantity`` judged (the same pairs recur in every document): its value, or
    the rule it breaks and the value to show."""
    name, raw, name_rule, integer = entry
    said = name_rule(name)
    if said:
        return Decimal(0), f"the resource name {said}", name
    number = parse(raw)
    if number is None:
        return Decimal(0), NOT_A_QUANTITY, raw
    if number < 0:
        return number, "must be greater than or equal to 0", raw
    if integer(name) and number != number.to_integral_value():
        return number, "must be an integer", raw
    return number, None, raw


def within(
    smaller: dict[str, Decimal], larger: dict[str, Decimal], raw: dict[str, Any], path: str, what: str
) -> Findings:
    """Each of ``smaller`` at most the same resource of ``larger`` (requests within limits)."""
    for name, number in smaller.items():
        bound = larger.get(name)
        if bound is not None and number > bound:
            yield Finding(f"{path}[{name}]", raw.get(name), f"must be less than or equal to {name} {what}")
