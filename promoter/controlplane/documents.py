"""Control-plane documents: every YAML object in a branch (the folder layout is free; dot-folders
are skipped), its envelope (apiVersion, kind, metadata) and the label selectors objects share."""

from __future__ import annotations

import difflib
from typing import Any

from promoter.controlplane.fields import Fields
from promoter.controlplane.yamlfile import LDict, line_of
from promoter.errors import ConfigError
from promoter.model import (
    Requirement,
    Selector,
    Source,
)

API_VERSION = "promoter.dev/v1alpha1"
KALYPSO_API_VERSION = "scheduler.kalypso.io/v1alpha1"
PIPELINE_FILE = "promoter.yaml"
MAIN_KINDS = ("Pipeline", "Template", "Workload", "ConfigSchema")
ENV_KINDS = ("ClusterType", "SchedulingPolicy", "ConfigMap")
KALYPSO_KINDS = ("Template", "Workload", "ConfigSchema", "ClusterType", "SchedulingPolicy")
# Kalypso's kinds that promoter's own control planes do not have (promoter/kalypso reads them).
KALYPSO_ONLY_KINDS = ("WorkloadRegistration", "Environment", "BaseRepo", "GitOpsRepo")
MAX_FILES = 20_000

Doc = tuple[str, LDict]


def is_control_plane_file(path: str) -> bool:
    """A YAML file outside dot-folders: the files control-plane objects are read from."""
    return path.endswith((".yaml", ".yml")) and not any(part.startswith(".") for part in path.split("/"))


def _kinds_hint(kind: Any) -> str:
    """``; did you mean Workload?`` for a misspelt kind, else the kinds there are."""
    kinds = sorted(set(MAIN_KINDS + ENV_KINDS))
    near = difflib.get_close_matches(str(kind), kinds, n=1, cutoff=0.6)
    return f"; did you mean {near[0]}?" if near else f" (the kinds: {', '.join(kinds)})"


def is_object(doc: Any, file: str) -> bool:
    """Ours, someone else's YAML (ignored), or a mistake (an error)."""
    if not isinstance(doc, dict):
        return False
    api, kind = doc.get("apiVersion"), doc.get("kind")
    if api in (API_VERSION, KALYPSO_API_VERSION):
        _check_kind(doc, api, kind, file)
        return True
    if api == "v1" and kind == "ConfigMap":
        return True
    _check_not_ours(doc, api, kind, file)
    return False


def _check_kind(doc: dict[str, Any], api: str, kind: Any, file: str) -> None:
    """A document of our apiVersion (or Kalypso's) must be of one of its kinds."""
    if api == KALYPSO_API_VERSION and kind in KALYPSO_ONLY_KINDS:
        raise ConfigError(
            f"kind {kind} is Kalypso's: validate, render, diff and promote read a Kalypso control plane as "
            "it is, other commands need a promoter Pipeline (promoter convert --from kalypso, docs/kalypso.md)",
            file=file,
            line=line_of(doc, "kind"),
        )
    if kind not in MAIN_KINDS + ENV_KINDS:
        raise ConfigError(f"unknown kind {kind!r}{_kinds_hint(kind)}", file=file, line=line_of(doc, "kind"))
    if api == KALYPSO_API_VERSION and kind not in KALYPSO_KINDS:
        raise ConfigError(
            f"kind {kind} is not a Kalypso kind; use apiVersion {API_VERSION}",
            file=file,
            line=line_of(doc, "apiVersion"),
        )


def _check_not_ours(doc: dict[str, Any], api: Any, kind: Any, file: str) -> None:
    """Someone else's document, unless it looks like one of ours written wrongly (an old
    apiVersion, or our kind without one)."""
    if isinstance(api, str) and api.startswith(("promoter.dev/", "scheduler.kalypso.io/")):
        raise ConfigError(
            f"unsupported apiVersion {api!r}; use {API_VERSION}", file=file, line=line_of(doc, "apiVersion")
        )
    if api is None and kind in MAIN_KINDS + ENV_KINDS:
        raise ConfigError(
            f"kind {kind} needs apiVersion: {API_VERSION}", file=file, line=line_of(doc, "kind")
        )


class ObjectDoc:
    """The common envelope: apiVersion, kind, metadata."""

    def __init__(self, file: str, doc: LDict) -> None:
        self.top = Fields(doc, file, "")
        self.top.get("apiVersion")
        self.kind: str = self.top.get("kind")
        meta = self.top.fields("metadata", required=True)
        assert meta is not None
        self.meta = meta
        self.name = meta.name("name")
        self.labels = meta.labels("labels")
        meta.get("annotations", dict)
        meta.get("namespace", str)
        meta.done()
        self.source = Source(file, doc.line)
        self.file = file

    def spec(self, required: bool = True) -> Fields:
        spec = self.top.fields("spec", required=required)
        return spec if spec is not None else Fields(LDict(), self.file, "spec", self.source.line)


def selector(f: Fields | None, with_workspace: bool) -> Selector:
    if f is None:
        return Selector()
    workspace = (f.name("workspace", required=False) or None) if with_workspace else None
    ls = f.fields("labelSelector")
    f.done()
    if ls is None:
        return Selector(workspace=workspace)
    return label_selector(ls, workspace)


def label_selector(ls: Fields, workspace: str | None = None) -> Selector:
    """A Kubernetes label selector: ``matchLabels`` and ``matchExpressions``."""
    match_labels = ls.labels("matchLabels")
    requirements = []
    for path, line, item in ls.items("matchExpressions"):
        e = Fields(item, ls.file, path, line)
        op = e.choice("operator", ("In", "NotIn", "Exists", "DoesNotExist"), default="")
        key = e.str("key", required=True)
        values = e.get("values", list) or []
        if any(not isinstance(v, str) for v in values):
            e.fail("values must be strings", "values")
        if op in ("In", "NotIn") and not values:
            e.fail(f"operator {op} needs values", "values")
        e.done()
        requirements.append(Requirement(str(key), op, tuple(values)))  # type: ignore[arg-type]
    ls.done()
    return Selector(match_labels, tuple(requirements), workspace)


def duplicate(kind: str, name: str, first: Source, again: Source) -> ConfigError:
    return ConfigError(f"duplicate {kind} {name!r} (also at {first})", file=again.file, line=again.line)


def wrong_branch(obj: ObjectDoc, where: str) -> ConfigError:
    home = "an environment branch" if obj.kind in ENV_KINDS else "main"
    return ConfigError(
        f"kind {obj.kind} belongs on {home}, not on {where}", file=obj.file, line=obj.source.line
    )
