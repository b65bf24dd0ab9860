"""The renderer's memo: a digest of everything a cluster type's folder is rendered from, and
the tree that digest gave before, on disk. Rendering is deterministic, so a folder whose digest
is known need not be rendered again; the platform repo writes it by its tree id."""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from importlib import metadata
from pathlib import Path

from promoter import k8s
from promoter.controlplane import yamlfile
from promoter.model import ClusterType, EnvironmentObjects, MainObjects, Template
from promoter.rendering import render, sandbox
from promoter.scheduling import targets as scheduling_targets
from promoter.scheduling.environment import EnvironmentSchedule

_SHA = re.compile(r"[0-9a-f]{40}")


def cache_root() -> Path:
    base = os.environ.get("PROMOTER_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "promoter"
    )
    return Path(base)


class FolderMemo:
    """Which tree each set of rendering inputs gave before: ``<cache>/rendered/<digest>`` holds
    the id of the folder's tree. An entry is written only once the folder rendered without error,
    so a render may skip a folder whose digest is here (rendering is deterministic)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def default(cls) -> FolderMemo:
        return cls(cache_root() / "rendered")

    def _file(self, digest: str) -> Path:
        return self.root / digest[:2] / digest

    def get(self, digest: str) -> str | None:
        try:
            value = self._file(digest).read_text().strip()
        except OSError:
            return None
        return value if _SHA.fullmatch(value) else None

    def put(self, digest: str, tree: str) -> None:
        target = self._file(digest)
        if self.get(digest) == tree:
            return
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f"{target.name}.{uuid.uuid4().hex[:8]}")
            tmp.write_text(tree + "\n")
            tmp.replace(target)
        except OSError:  # a memo is an optimisation: a read-only cache just renders again
            return


# Bump when rendering changes its output in a way the code digest below would not notice.
RENDER_FORMAT = 1
_CODE_DIGEST: list[str] = []


# The libraries a memoised folder's files and verdicts came from: a new version of one may
# render or judge differently, so it renders and checks every folder again.
_LIBRARIES = ("jinja2", "PyYAML", "yaml-rs", "jsonschema", "jsonschema-rs")


def digested_files() -> list[Path]:
    """The code a folder is rendered and checked with: every module of rendering (this one
    included), the scheduling package, the YAML module, and the rules of what is rendered
    (``promoter.k8s``: its modules and schemas). A new rule changes one of them, and so every
    folder's digest: memoised folders are checked by it too."""
    k8s_package = Path(str(k8s.__file__)).parent
    return [
        *sorted(Path(__file__).parent.glob("*.py")),
        *sorted(Path(str(scheduling_targets.__file__)).parent.glob("*.py")),
        Path(str(yamlfile.__file__)),
        *sorted(k8s_package.glob("*.py")),
        *sorted((k8s_package / "schemas").glob("*.json")),
    ]


def _version(library: str) -> str:
    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:  # an optional one (yaml-rs) not installed
        return "-"


def code_digest() -> str:
    """What else a rendered file and its checks depend on: the code (``digested_files``), the
    sandbox's limits, the libraries' versions."""
    if not _CODE_DIGEST:
        versions = [(name, _version(name)) for name in _LIBRARIES]
        h = hashlib.sha256(repr((RENDER_FORMAT, versions)).encode())
        for path in digested_files():
            h.update(path.read_bytes())
        _CODE_DIGEST.append(h.hexdigest())
    limits = (
        sandbox.RENDER_SECONDS,
        sandbox.MAX_STRING,
        sandbox.MAX_RANGE,
        render.MAX_OUTPUT_BYTES,
        yamlfile.MAX_DEPTH,
    )
    return f"{_CODE_DIGEST[0]}:{limits!r}"


def _short(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:32]


def folder_digests(
    main: MainObjects,
    env: EnvironmentObjects,
    environment: str,
    schedule: EnvironmentSchedule,
    templates: dict[str, Template],
) -> dict[str, str]:
    """Per cluster type with assignments: a digest of everything its folder is rendered and
    checked from. Its assignments (targets in order), the ConfigMaps it may match (those not
    labelled for another cluster type), the schemas, its templates, the environment and where
    it goes, and the code."""
    where = main.pipeline.environment(environment)
    general = sorted(schedule.index.general(), key=lambda cm: cm.name)
    common = _short(
        (
            code_digest(),
            environment,
            main.pipeline.platform_of(where) if where else main.pipeline.platform_url,
            (where.gitops_branch, where.gitops_path) if where else None,
            [(s.name, s.labels, s.schema) for s in sorted(main.schemas.values(), key=lambda s: s.name)],
            [(cm.name, cm.labels, cm.data) for cm in general],
        )
    )
    targets: dict[tuple[str, str], str] = {}
    out = {}
    for name, pairs in schedule.pairs.items():
        ct = pairs[0][0]
        named = sorted(schedule.index.named(ct), key=lambda cm: cm.name)
        parts = [
            common,
            _short((_cluster_type_inputs(ct, templates), [(cm.name, cm.labels, cm.data) for cm in named])),
        ]
        for _, w, t in pairs:
            key = (w.name, t.name)
            if key not in targets:
                ordering = ([(a, b) for a, b, _ in t.depends_on], t.depth)
                targets[key] = _short(
                    (w.name, w.labels, w.workspace, t.name, t.labels, t.manifests, ordering)
                )
            parts.append(targets[key])
        out[name] = hashlib.sha256(" ".join(parts).encode()).hexdigest()
    return out


def _cluster_type_inputs(ct: ClusterType, templates: dict[str, Template]) -> object:
    used = (ct.reconciler, ct.namespace_service, ct.config_type)
    templated = [(templates[n].type, templates[n].language, templates[n].manifests) for n in used]
    return (ct.name, ct.labels, used, templated, ct.versions)  # versions: what the checks judge by
