"""Rendered manifests as the clusters will judge them, before anything is pushed.

Each document of a kind the reconcilers define (Flux's Kustomization, GitRepository,
OCIRepository, HelmRepository and HelmRelease, Argo CD's Application and AppProject) is checked
against the served versions of its CRD schema (package data made by
``scripts/gen-crd-schemas.py``); a version the controller no longer serves (Flux 2.8 removed
``v1beta2``) is an error. Kubernetes' own kinds are checked against Kubernetes' schemas
(``promoter.k8s.core``). Then the rules no schema says, per cluster-type folder (what one
cluster applies):

- names: namespaces are DNS labels of at most 63 characters, object names at most 253, label
  values at most 63; a Kustomization's name becomes a label value on everything it applies;
- no two objects with the same group, kind, namespace and name;
- Flux reads ``postBuild.substituteFrom`` only from the Kustomization's own namespace, with
  variable names ``[_a-zA-Z][_a-zA-Z0-9]*``, and never creates its ``targetNamespace``;
- a HelmRelease names its chart by ``chart`` or by ``chartRef``, exactly one (the CRD's CEL
  rule), and reads ``valuesFrom`` only from its own namespace;
- a source a Kustomization or HelmRelease names without a namespace is looked up in its own
  namespace: one rendered beside it under that name but in another namespace is an error;
- Flux's ``dependsOn`` waits for objects of the referrer's own kind only (a Kustomization for
  Kustomizations, a HelmRelease for HelmReleases): one that names, in the folder, only an object
  of the other kind, or itself, would wait forever (one that names nothing in the folder is
  not judged: the cluster may hold it, as its bootstrap Kustomization);
- Argo CD syncs into a destination namespace that exists or that it creates
  (``CreateNamespace=true``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import chain
from typing import Any

import jsonschema_rs

from promoter.k8s import core, crds
from promoter.k8s.names import DNS_LABEL_MAX, LABEL_VALUE_MAX, is_dns_label
from promoter.k8s.served import Runs, verdict
from promoter.k8s.values import FLUX_VARIABLE

NAME_MAX = 253
KUSTOMIZATION = ("kustomize.toolkit.fluxcd.io", "Kustomization")
APPLICATION = ("argoproj.io", "Application")
HELMRELEASE = ("helm.toolkit.fluxcd.io", "HelmRelease")
SOURCES = {"GitRepository", "OCIRepository", "HelmRepository", "Bucket", "HelmChart"}


@dataclass(frozen=True)
class Problem:
    path: str  # the file, relative to the environment folder
    object: str  # Kind/namespace/name
    rule: str

    def __str__(self) -> str:
        return f"{self.path}: {self.object}: {self.rule}"


class Doc:
    """One rendered document, its fields read once (a tree holds hundreds of thousands)."""

    __slots__ = ("body", "group_kind", "meta", "name", "namespace", "path", "spec")

    def __init__(self, path: str, body: dict[str, Any]) -> None:
        self.path = path
        self.body = body
        api_version, kind = body.get("apiVersion", ""), body.get("kind", "")
        self.group_kind = (str(api_version).rpartition("/")[0], str(kind))
        meta = body.get("metadata")
        self.meta: dict[str, Any] = meta if isinstance(meta, dict) else {}
        self.name = str(self.meta.get("name", ""))
        self.namespace = str(self.meta.get("namespace", ""))
        spec = body.get("spec")
        self.spec: dict[str, Any] = spec if isinstance(spec, dict) else {}

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.body.get('kind', '?')}/{where}{self.name}"


@cache
def _schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(group, kind) -> {served version: JSON Schema}, from the package data."""
    out = {}
    for item in (resources.files("promoter") / "k8s" / "schemas").iterdir():
        if item.name.endswith(".json") and item.name != "core.json":  # core.json: Kubernetes' kinds
            crd = json.loads(item.read_text())
            out[(crd["group"], crd["kind"])] = crd["versions"]
    return out


@cache
def _fast(group: str, kind: str, version: str) -> Any:
    """A compiled validator (jsonschema-rs, about a hundred times faster) for the verdict."""
    return jsonschema_rs.validator_for(_schemas()[(group, kind)][version])


@cache
def _validator(group: str, kind: str, version: str) -> Any:
    """The Python validator, for the words of a failure."""
    return core.python_validator(_schemas()[(group, kind)][version])


def check_tree(
    files: Mapping[str, list[dict[str, Any]]],
    runs: Mapping[str, Runs] | None = None,
    warnings: list[str] | None = None,
) -> list[Problem]:
    """Every problem of a rendered environment: ``files`` maps each path (``<cluster-type>/...``)
    to its parsed documents; ``runs`` what each cluster-type folder declares it runs (none: the
    newest releases), ``warnings`` collects what such a cluster serves that the newest do not."""
    folders: dict[str, list[Doc]] = {}
    for path, bodies in files.items():
        folder = path.split("/", 1)[0]
        folders.setdefault(folder, []).extend(Doc(path, b) for b in bodies if isinstance(b, dict))
    problems: list[Problem] = []
    for folder, docs in folders.items():
        declared = (runs or {}).get(folder)
        problems += [p for d in docs for p in check_document(d, declared, warnings)]
        problems += check_folder(docs)
    return problems


def check_document(doc: Doc, runs: Runs | None = None, warnings: list[str] | None = None) -> list[Problem]:
    """The CRD schema of its kind, and the limits of names and label values."""
    rules = [*_name_rules(doc), *_schema_rules(doc, runs, warnings)]
    return [Problem(doc.path, str(doc), rule) for rule in rules]


def _schema_rules(doc: Doc, runs: Runs | None, warnings: list[str] | None) -> list[str]:
    """What the schemas say of ``doc``: those of the releases its cluster type runs where they
    decide, else promoter's CRD schema of its kind, else Kubernetes' own (``core``)."""
    versions = _schemas().get(doc.group_kind)
    decided = _release_rules(doc, versions, runs, warnings) if runs else None
    if decided is not None:
        return decided
    if versions is None:
        return _core_rules(doc)
    return _crd_rules(doc, versions)


def _release_rules(
    doc: Doc, versions: dict[str, Any] | None, runs: Runs, warnings: list[str] | None
) -> list[str] | None:
    """An older release than promoter's schemas: what it serves (served.py) refuses ``doc``, or
    accepts it unchecked (said in ``warnings``, once per cluster type); None leaves it to the
    schemas."""
    judged = verdict(str(doc.body.get("apiVersion", "")), doc.group_kind[1], frozenset(versions or ()), runs)
    if judged is None or judged.action == "check":
        return None
    if judged.action == "refuse":
        return [judged.rule]
    if warnings is not None:
        warnings.append(f"{doc.path.split('/', 1)[0]}: {judged.warning}")
    return []


def _core_rules(doc: Doc) -> list[str]:
    """Kubernetes' own schema of a kind no CRD schema of promoter's covers."""
    rule = core.check(doc.body) if doc.body.get("apiVersion") and doc.group_kind[1] else None
    return [rule] if rule else []


def _crd_rules(doc: Doc, versions: dict[str, Any]) -> list[str]:
    """The served version of the CRD schema, then the API server's own validation of the kind."""
    group, kind = doc.group_kind
    version = str(doc.body.get("apiVersion", "")).rpartition("/")[2]
    if version not in versions:
        served = ", ".join(f"{group}/{v}" for v in sorted(versions))
        return [f"{group}/{version} is not served by the {kind} CRD (served: {served})"]
    if not _fast(group, kind, version).is_valid(doc.body):
        return _crd_schema_failure(doc, version)
    found = crds.first(group, kind, version, doc.body)
    return [] if found is None else [f"{found} (the API server's validation of {kind})"]


def _crd_schema_failure(doc: Doc, version: str) -> list[str]:
    """The words of the schema's best-matching error (the fast validator gives none)."""
    group, kind = doc.group_kind
    error = core.best_error(_validator(group, kind, version), doc.body)
    if error is None:
        return []
    where, what = error
    return [f"{where}: {what} (the {kind} CRD schema)"]


def _name_rules(doc: Doc) -> Iterator[str]:
    if not doc.body.get("apiVersion") or not doc.body.get("kind"):
        return  # not a Kubernetes object: check-platform says so; templates may render other YAML
    yield from _name_limits(doc)
    yield from _label_limits(doc)


def _name_limits(doc: Doc) -> Iterator[str]:
    if not doc.name or len(doc.name) > NAME_MAX:
        yield f"metadata.name must be 1 to {NAME_MAX} characters"
    if doc.namespace and not is_dns_label(doc.namespace):
        yield f"metadata.namespace {doc.namespace!r} is not a DNS label of at most {DNS_LABEL_MAX} characters"
    if doc.body.get("kind") == "Namespace" and not is_dns_label(doc.name):
        yield f"a namespace name must be a DNS label of at most {DNS_LABEL_MAX} characters"


def _label_limits(doc: Doc) -> Iterator[str]:
    labels = doc.meta.get("labels")
    for key, value in (labels if isinstance(labels, dict) else {}).items():
        if len(str(value)) > LABEL_VALUE_MAX:
            yield f"label {key} is over {LABEL_VALUE_MAX} characters"
    if doc.group_kind == KUSTOMIZATION and len(doc.name) > LABEL_VALUE_MAX:
        yield f"a Kustomization's name labels what it applies: at most {LABEL_VALUE_MAX} characters"


def check_folder(docs: list[Doc]) -> list[Problem]:
    """The rules between the objects one cluster applies."""
    problems = _duplicates(docs)
    folder = Folder.of(docs)
    for doc in docs:
        rules = _KIND_RULES.get(doc.group_kind, _no_rules)(doc, folder)
        rules = chain(rules, _source_rules(doc, folder.sources), _dependency_rules(doc, folder.waiters))
        problems += [Problem(doc.path, str(doc), r) for r in rules]
    return problems


def _duplicates(docs: list[Doc]) -> list[Problem]:
    """Each object with the group, kind, namespace and name of one before it."""
    problems: list[Problem] = []
    seen: dict[tuple[str, str, str, str], Doc] = {}
    for doc in docs:
        key = (*doc.group_kind, doc.namespace, doc.name)
        if key in seen:
            problems.append(Problem(doc.path, str(doc), f"the same object is also in {seen[key].path}"))
        seen.setdefault(key, doc)
    return problems


@dataclass(frozen=True)
class Folder:
    """What the rules between a folder's objects look up: the namespaces it creates, its
    ConfigMaps, and the namespace of each source by (kind, name)."""

    namespaces: set[str]
    configmaps: ConfigMaps
    sources: dict[tuple[str, str], str]
    waiters: set[tuple[tuple[str, str], str, str]]  # the Kustomizations and HelmReleases

    @classmethod
    def of(cls, docs: list[Doc]) -> Folder:
        return cls(
            {d.name for d in docs if d.body.get("kind") == "Namespace"},
            ConfigMaps([d for d in docs if d.group_kind == ("", "ConfigMap")]),
            {(str(d.body.get("kind")), d.name): d.namespace for d in docs if d.body.get("kind") in SOURCES},
            {
                (d.group_kind, d.namespace, d.name)
                for d in docs
                if d.group_kind in (KUSTOMIZATION, HELMRELEASE)
            },
        )


def _source_rules(doc: Doc, sources: dict[tuple[str, str], str]) -> Iterator[str]:
    """A sourceRef or chartRef without a namespace means the referrer's own namespace."""
    chart = doc.spec.get("chart")
    chart_spec = chart.get("spec") if isinstance(chart, dict) else None
    refs = [
        ("sourceRef", doc.spec.get("sourceRef")),
        ("chartRef", doc.spec.get("chartRef")),
        ("chart.spec.sourceRef", chart_spec.get("sourceRef") if isinstance(chart_spec, dict) else None),
    ]
    for field, ref in refs:
        if not isinstance(ref, dict) or ref.get("namespace"):
            continue
        where = sources.get((str(ref.get("kind")), str(ref.get("name"))))
        if where is not None and where != doc.namespace:
            yield (
                f"{field} {ref.get('kind')}/{ref.get('name')} is in namespace {where}, not {doc.namespace}: "
                "without a namespace, Flux looks in the referrer's own namespace"
            )


def _dependency_rules(doc: Doc, waiters: set[tuple[tuple[str, str], str, str]]) -> Iterator[str]:
    """Flux's ``dependsOn`` names objects of the referrer's own kind, in its own namespace unless
    it says another: ``waiters`` are the folder's Kustomizations and HelmReleases."""
    if doc.group_kind not in (KUSTOMIZATION, HELMRELEASE):
        return
    depends = doc.spec.get("dependsOn")
    other = HELMRELEASE if doc.group_kind == KUSTOMIZATION else KUSTOMIZATION
    for ref in depends if isinstance(depends, list) else []:
        if not isinstance(ref, dict):
            continue
        name, namespace = str(ref.get("name")), str(ref.get("namespace") or doc.namespace)
        if (namespace, name) == (doc.namespace, doc.name):
            yield f"dependsOn {namespace}/{name} is itself: it would never become ready"
        elif (doc.group_kind, namespace, name) not in waiters and (other, namespace, name) in waiters:
            yield (
                f"dependsOn {namespace}/{name} is a {other[1]} in this folder, not a {doc.group_kind[1]}: "
                f"Flux's dependsOn waits only for objects of the referrer's own kind, so this one would "
                "wait forever (give both targets the same kind of source, or order them otherwise)"
            )


def _configmap_refs(refs: Iterable[Any]) -> list[dict[str, Any]]:
    """The ConfigMaps a list of ``{kind, name}`` references (``substituteFrom``, ``valuesFrom``)."""
    return [ref for ref in refs if isinstance(ref, dict) and ref.get("kind") == "ConfigMap"]


def _helmrelease_rules(doc: Doc, folder: Folder) -> Iterator[str]:
    # v2's CRD says it in a CEL rule of its own, evaluated with the schema; older versions do not
    cel = str(doc.body.get("apiVersion", "")).endswith("/v2")
    if not cel and ("chart" in doc.spec) == ("chartRef" in doc.spec):
        yield "a HelmRelease needs exactly one of spec.chart and spec.chartRef"
    values_from = doc.spec.get("valuesFrom")
    for ref in _configmap_refs(values_from if isinstance(values_from, list) else []):
        name = str(ref.get("name"))
        elsewhere = folder.configmaps.elsewhere(doc.namespace, name)
        if elsewhere:
            yield (
                f"valuesFrom ConfigMap/{name} is in namespace {elsewhere[0]}, not {doc.namespace}: "
                "Flux reads it from the HelmRelease's own namespace only"
            )


class ConfigMaps:
    """The ConfigMaps of a folder, by namespace and name, and the namespaces of each name."""

    def __init__(self, docs: list[Doc]) -> None:
        self.by_key = {(d.namespace, d.name): d for d in docs}
        self.namespaces: dict[str, list[str]] = {}
        for d in docs:
            self.namespaces.setdefault(d.name, []).append(d.namespace)

    def get(self, namespace: str, name: str) -> Doc | None:
        return self.by_key.get((namespace, name))

    def elsewhere(self, namespace: str, name: str) -> list[str]:
        """The other namespaces a ConfigMap of this name is in, when it is not in ``namespace``."""
        if (namespace, name) in self.by_key:
            return []
        return [ns for ns in self.namespaces.get(name, []) if ns != namespace]


def _kustomization_rules(doc: Doc, folder: Folder) -> Iterator[str]:
    target = doc.spec.get("targetNamespace")
    if target and target not in folder.namespaces:
        yield f"targetNamespace {target} is not created in this cluster type's folder (Flux never creates it)"
    post = doc.spec.get("postBuild")
    for ref in _configmap_refs((post.get("substituteFrom") or []) if isinstance(post, dict) else []):
        yield from _substitute_from_rules(doc, str(ref.get("name")), folder.configmaps)


def _substitute_from_rules(doc: Doc, name: str, configmaps: ConfigMaps) -> Iterator[str]:
    """A ConfigMap a Kustomization substitutes from: in its own namespace, its keys variable names."""
    elsewhere = configmaps.elsewhere(doc.namespace, name)
    if elsewhere:
        yield (
            f"postBuild.substituteFrom ConfigMap/{name} is in namespace {elsewhere[0]}, not {doc.namespace}: "
            "Flux reads it from the Kustomization's own namespace only"
        )
    found = configmaps.get(doc.namespace, name)
    data = found.body.get("data") if found else None
    for key in data if isinstance(data, dict) else {}:
        if not FLUX_VARIABLE.fullmatch(str(key)):
            yield f"ConfigMap/{name} key {key!r} is not a Flux variable name ([_a-zA-Z][_a-zA-Z0-9]*)"


def _application_rules(doc: Doc, folder: Folder) -> Iterator[str]:
    destination = doc.spec.get("destination")
    target = destination.get("namespace") if isinstance(destination, dict) else None
    sync = doc.spec.get("syncPolicy")
    options = sync.get("syncOptions") if isinstance(sync, dict) else None
    creates = "CreateNamespace=true" in (options if isinstance(options, list) else [])
    if target and target not in folder.namespaces and not creates:
        yield f"destination.namespace {target} is neither in this folder nor created (CreateNamespace=true)"


def _no_rules(doc: Doc, folder: Folder) -> Iterator[str]:
    return iter(())


# The rules of each reconciler's kind between its object and the rest of its folder.
_KIND_RULES: dict[tuple[str, str], Callable[[Doc, Folder], Iterator[str]]] = {
    KUSTOMIZATION: _kustomization_rules,
    HELMRELEASE: _helmrelease_rules,
    APPLICATION: _application_rules,
}
