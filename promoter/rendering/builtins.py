"""The templates every control plane has: the built-ins shipped as package data
(``promoter/templates``), overridden by the control plane's own of the same name."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from promoter.controlplane.objects import template_from_document
from promoter.controlplane.yamlfile import load_documents
from promoter.model import MainObjects, Template


def builtin_templates() -> dict[str, Template]:
    """The default templates shipped with the package (flux, argocd, default, configmap)."""
    return dict(_read_builtins())


@lru_cache(maxsize=1)
def _read_builtins() -> dict[str, Template]:
    """Read once per process: package data does not change while it runs."""
    out: dict[str, Template] = {}
    folder = resources.files("promoter") / "templates"
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".yaml"):
            file = f"builtin:{item.name}"
            for doc in load_documents(item.read_bytes(), file):
                template = template_from_document(file, doc)
                out[template.name] = template
    return out


def all_templates(main: MainObjects) -> dict[str, Template]:
    """Built-ins, overridden by the control plane's own templates of the same name."""
    return {**builtin_templates(), **main.templates}
