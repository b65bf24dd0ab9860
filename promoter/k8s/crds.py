"""What the API server checks of a Flux or Argo CD object beyond its CRD's OpenAPI schema: its
metadata (``ValidateObjectMeta``, as for every object) and the CRD's CEL rules
(``x-kubernetes-validations``, kept by ``scripts/gen-crd-schemas.py`` under ``rules``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import Any, NamedTuple

from promoter.k8s import cel, meta
from promoter.k8s.fields import Finding, Findings, mapping


class Rule(NamedTuple):
    path: tuple[str, ...]  # the object it judges; "[]" for each item of a list
    expr: cel.Expr
    text: str
    message: str
    defaults: dict[str, Any]


@cache
def _loaded() -> tuple[dict[tuple[str, str, str], tuple[Rule, ...]], tuple[str, ...]]:
    """(group, kind, version) -> its compiled rules; and the rules that do not compile."""
    compiled: dict[tuple[str, str, str], tuple[Rule, ...]] = {}
    skipped: list[str] = []
    for item in (resources.files("promoter") / "k8s" / "schemas").iterdir():
        if not item.name.endswith(".json") or item.name == "core.json":
            continue
        crd = json.loads(item.read_text())
        for version, found in crd.get("rules", {}).items():
            rules = []
            for r in found:
                try:
                    rules.append(
                        Rule(
                            tuple(r["path"]),
                            cel.compile_rule(r["rule"]),
                            r["rule"],
                            r["message"],
                            r["defaults"],
                        )
                    )
                except cel.Unsupported:
                    skipped.append(f"{crd['kind']} {version} {'.'.join(r['path'])}: {r['rule']}")
            compiled[(crd["group"], crd["kind"], version)] = tuple(rules)
    return compiled, tuple(skipped)


def skipped() -> tuple[str, ...]:
    """The CEL rules of the shipped CRDs that promoter cannot evaluate (none today)."""
    return _loaded()[1]


def findings(group: str, kind: str, version: str, body: dict[str, Any]) -> Findings:
    yield from meta.object_meta(kind, mapping(body, "metadata"))
    for rule in _loaded()[0].get((group, kind, version), ()):
        if "[]" not in rule.path:  # the usual case: one object, found without a generator
            value = _get(body, rule.path)
            if value is not None and not cel.holds(rule.expr, value, rule.defaults):
                yield Finding(
                    ".".join(rule.path) or "(document)", value, f"{rule.message} (the rule {rule.text})"
                )
            continue
        for where, found in _at(body, rule.path, ()):
            if not cel.holds(rule.expr, found, rule.defaults):
                yield Finding(".".join(where), found, f"{rule.message} (the rule {rule.text})")


def _get(value: Any, path: tuple[str, ...]) -> dict[str, Any] | None:
    for name in path:
        if not isinstance(value, dict):
            return None
        value = value.get(name)
    return value if isinstance(value, dict) else None


def _at(
    value: Any, path: tuple[str, ...], where: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """The objects at ``path`` in ``value`` that are set (a rule judges only those)."""
    if not path:
        if isinstance(value, dict):
            yield where, value
        return
    head, rest = path[0], path[1:]
    if head == "[]":
        for i, item in enumerate(value if isinstance(value, list) else ()):
            yield from _at(item, rest, (*where[:-1], f"{where[-1]}[{i}]"))
    elif isinstance(value, dict) and head in value:
        yield from _at(value[head], rest, (*where, head))


def first(group: str, kind: str, version: str, body: dict[str, Any]) -> Finding | None:
    return next(findings(group, kind, version, body), None)
