"""A Workload target's ``manifests``, strict per source kind: a typo such as ``brach: dev-2``
would otherwise pass and render the default branch, so each kind takes only the keys the
built-in reconcilers read, and a template that needs free keys reads them from ``extra``."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from promoter.controlplane.fields import Fields, kind_of


@dataclass(frozen=True)
class SourceKind:
    name: str  # as errors say it: "a git source"
    how: str  # how the kind is recognised, for the error
    keys: tuple[str, ...]  # besides repo and extra


GIT = SourceKind("a git source", "repo not oci://, no chart", ("branch", "path"))
OCI = SourceKind("an OCI source", "repo oci://, no chart", ("tag", "semver", "digest", "path"))
HELM = SourceKind("a Helm repository source", "chart, repo not oci://", ("chart", "version", "values"))
OCI_CHART = SourceKind("an OCI chart source", "chart, repo oci://", ("chart", "version", "values"))
KINDS = (GIT, OCI, HELM, OCI_CHART)
COMMON = ("repo", "extra")
MAPS = ("values", "extra")  # the two keys whose value is a mapping of free keys
OCI_REFS = ("tag", "semver", "digest")


def sourcekind_for(manifests: Fields) -> SourceKind:
    """The kind the built-in reconcilers render for these ``manifests`` (as their templates choose)."""
    repo = manifests.text("repo", required=True)
    assert repo is not None
    return kind_for(repo, "chart" in manifests.value)


def kind_for(repo: str, chart: bool) -> SourceKind:
    """The kind of source a ``repo`` (with or without a ``chart``) is."""
    oci = repo.startswith("oci://")
    if chart:
        return OCI_CHART if oci else HELM
    return OCI if oci else GIT


def check_manifests(manifests: Fields) -> None:
    """Every key known to the target's source kind, of the right type; else exit 2 naming the
    key's line, the kind, and the nearest key it takes."""
    kind = sourcekind_for(manifests)
    allowed = COMMON + kind.keys
    for key in manifests.value:
        if key not in allowed:
            _unknown(manifests, kind, str(key), allowed)
    for key in allowed:
        if key == "repo":
            continue
        if key in MAPS:
            manifests.get(key, dict)
        else:
            _string(manifests, key)
    refs = [k for k in OCI_REFS if k in manifests.value and kind is OCI]
    if len(refs) > 1:
        manifests.fail(f"give one of {', '.join(OCI_REFS)}, not {' and '.join(refs)}", refs[1])
    manifests.done()


def _string(manifests: Fields, key: str) -> None:
    value = manifests.get(key)
    if value is not None and not (isinstance(value, str) and value.strip()):
        manifests.problem(key, f"must be a non-empty string (quote it), got {kind_of(value)}")


def _unknown(manifests: Fields, kind: SourceKind, key: str, allowed: tuple[str, ...]) -> None:
    near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.7)
    elsewhere = [k.name for k in KINDS if key in k.keys]
    if near:
        hint = f", did you mean '{near[0]}'?"
    elif elsewhere:
        hint = f": it is for {' or '.join(dict.fromkeys(elsewhere))}, and this is {kind.name} ({kind.how})"
    else:
        hint = ""
    manifests.fail(
        f"unknown field '{manifests.sub(key)}'{hint} ({kind.name} takes {', '.join(allowed[:1] + kind.keys)};"
        " a template's own keys go under 'extra')",
        key,
        named=True,
    )


def with_extra(manifests: dict[str, Any]) -> dict[str, Any]:
    """``manifests`` as a strict Workload takes them: the keys its source kind does not take
    moved under ``extra`` (``promoter convert`` writes Kalypso's free maps so)."""
    kind = kind_for(str(manifests.get("repo", "")), "chart" in manifests)
    out = {k: v for k, v in manifests.items() if k in COMMON + kind.keys and k != "extra"}
    free = {k: v for k, v in manifests.items() if k not in out}
    if isinstance(free.get("extra"), dict):
        given = free.pop("extra")
        free = {**free, **given}
    if free:
        out["extra"] = free
    return out
