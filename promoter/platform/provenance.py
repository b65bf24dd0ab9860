"""The provenance file, ``.promoter/promotion.yaml``: which control-plane commits a platform
tree was rendered from. Written with every render, read by the guard, resume, supersede,
rollback, ``status`` and ``check-platform``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from promoter.model import Environment, EnvironmentObjects, MainObjects
from promoter.rendering.tree import Rendered

PROVENANCE = ".promoter/promotion.yaml"
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the same, faster
_HEADER = "# Written by promoter: the control-plane commits this tree was rendered from.\n"


@dataclass(frozen=True)
class Provenance:
    """What a platform tree holds. Read leniently: a field that is missing or of the wrong type
    reads as empty, since the file may have been edited by hand."""

    pipeline: str = ""
    environment: str = ""
    main_commit: str | None = None
    env_branch: str = ""
    env_commit: str | None = None
    cluster_types: tuple[str, ...] = ()
    files: int = 0

    @classmethod
    def of(
        cls, main: MainObjects, env: Environment, objects: EnvironmentObjects, rendered: Rendered
    ) -> Provenance:
        """The provenance of ``env``'s tree rendered from ``main`` and the environment branch."""
        return cls(
            pipeline=main.pipeline.name,
            environment=env.name,
            main_commit=main.commit,
            env_branch=env.branch,
            env_commit=objects.commit,
            cluster_types=rendered.cluster_types,
            files=len(rendered.files),
        )

    def text(self) -> bytes:
        body = {
            "apiVersion": "promoter.dev/v1alpha1",
            "kind": "Promotion",
            "pipeline": self.pipeline,
            "environment": self.environment,
            "mainCommit": self.main_commit,
            "environmentBranch": self.env_branch,
            "environmentCommit": self.env_commit,
            "clusterTypes": list(self.cluster_types),
            "files": self.files,
        }
        return (_HEADER + yaml.safe_dump(body, sort_keys=False)).encode()

    @classmethod
    def parse(cls, data: bytes | None) -> Provenance | None:
        """The provenance in ``data``; None when there is none (no file, not YAML, not a map)."""
        if not data:
            return None
        try:
            value = yaml.load(data, Loader=_SafeLoader)
        except yaml.YAMLError:
            return None
        if not isinstance(value, dict):
            return None
        listed = value.get("clusterTypes")
        return cls(
            pipeline=_text(value.get("pipeline")),
            environment=_text(value.get("environment")),
            main_commit=_text(value.get("mainCommit")) or None,
            env_branch=_text(value.get("environmentBranch")),
            env_commit=_text(value.get("environmentCommit")) or None,
            cluster_types=tuple(c for c in listed if isinstance(c, str)) if isinstance(listed, list) else (),
            files=_count(value.get("files")),
        )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
