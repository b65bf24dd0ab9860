"""Kubernetes' own kinds (Namespace, ConfigMap, Deployment, ...) checked against Kubernetes'
schemas for one version, strict as the API server's field validation is.

The schemas are package data (``schemas/core.json``, made by ``scripts/gen-core-schemas.py``
from the ``kubernetes-validate`` package). A kind of a Kubernetes API group that the version does
not serve (``extensions/v1beta1 Deployment``) is an error; kinds of other groups (custom
resources) are left to their own CRD schema, when promoter ships one.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

import jsonschema_rs

from promoter.k8s import apiserver

_REF = re.compile(r'"#/\$defs/([^"]+)"')


@cache
def _core() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (resources.files("promoter") / "k8s" / "schemas" / "core.json").read_text()
    )
    return data


def kubernetes_version() -> str:
    return str(_core()["kubernetes"])


@cache
def _groups() -> frozenset[str]:
    """The API groups Kubernetes defines (``""`` is the core group)."""
    return frozenset(key.split(" ")[0].rpartition("/")[0] for key in _core()["kinds"])


def _schema(definition: str) -> dict[str, Any]:
    """The kind's schema with only the definitions it reaches (compiling all 700 is slow)."""
    everything = _core()["$defs"]
    reached, todo = set(), [definition]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += _REF.findall(json.dumps(everything[name]))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": f"#/$defs/{definition}",
        "$defs": {name: everything[name] for name in sorted(reached)},
    }


@cache
def _fast(definition: str) -> Any:
    return jsonschema_rs.validator_for(_schema(definition))


@cache
def _slow(definition: str) -> Any:
    """The Python validator, only for the words of a failure."""
    return python_validator(_schema(definition))


def python_validator(schema: dict[str, Any]) -> Any:
    """jsonschema's validator of ``schema`` (of the draft its ``$schema`` names, else 2020-12),
    for the words of a failure: jsonschema-rs gives the verdict."""
    import jsonschema  # heavy (70 ms, a fifth of `promoter render`'s start): loads only when a document fails

    return jsonschema.validators.validator_for(schema)(schema)


def best_error(validator: Any, body: Any) -> tuple[str, str] | None:
    """(where, what) of ``validator``'s best-matching error in ``body``; None when it finds none."""
    from jsonschema.exceptions import best_match  # heavy, as above: loads only when a document fails

    error = best_match(validator.iter_errors(body))
    if error is None:
        return None
    return ".".join(str(p) for p in error.absolute_path) or "(document)", error.message


def is_kubernetes_group(api_version: str) -> bool:
    group = api_version.rpartition("/")[0]
    return group in _groups() or group.endswith(".k8s.io")


def check(body: dict[str, Any]) -> str | None:
    """The first problem of a Kubernetes kind's document against its schema, then against the
    API server's own field rules (``promoter.k8s.apiserver``), or None (also for kinds of groups
    Kubernetes does not define)."""
    api_version, kind = str(body.get("apiVersion", "")), str(body.get("kind", ""))
    definition = _core()["kinds"].get(f"{api_version} {kind}")
    if definition is None:
        if is_kubernetes_group(api_version):
            return f"Kubernetes {kubernetes_version()} serves no {kind} in {api_version or '(no apiVersion)'}"
        return None
    if _fast(definition).is_valid(body):
        found = apiserver.first(body)
        return (
            f"{found} (the Kubernetes {kubernetes_version()} API server's validation of {kind})"
            if found
            else None
        )
    error = best_error(_slow(definition), body)
    if error is None:  # the two validators disagree: trust the strict verdict, say what we can
        return f"does not match the Kubernetes {kubernetes_version()} schema of {kind}"
    where, what = error
    return f"{where}: {what} (the Kubernetes {kubernetes_version()} schema of {kind})"
