#!/usr/bin/env python3
"""Write promoter/k8s/schemas/core.json: the JSON Schemas of Kubernetes' own kinds for one
Kubernetes version, from the `kubernetes-validate` package (Apache-2.0, Will Thames; its schemas
are made from Kubernetes' OpenAPI documents).

It takes that version's strict definitions (objects refuse fields they do not define, as the API
server's strict field validation does), removes every ``description`` and keeps an index from
``<group>/<version> <Kind>`` to the definition, from ``x-kubernetes-group-version-kind``.

usage: pip install kubernetes-validate && scripts/gen-core-schemas.py [KUBERNETES_VERSION]
(default 1.33: the oldest Kubernetes that Flux 2.8 supports)
"""

from __future__ import annotations

import json
import sys
from importlib import metadata, resources
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "promoter" / "k8s" / "schemas" / "core.json"


def strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def main() -> None:
    version = sys.argv[1] if len(sys.argv) > 1 else "1.33"
    folder = resources.files("kubernetes_validate") / "kubernetes-json-schema" / f"v{version}.0-local-strict"
    definitions = json.loads((folder / "_definitions.json").read_text())["$defs"]
    kinds = {}
    for name, schema in definitions.items():
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            api = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            if "properties" in schema and "kind" in schema["properties"]:
                kinds[f"{api} {gvk['kind']}"] = name
    body = {
        "source": {
            "package": "kubernetes-validate",
            "version": metadata.version("kubernetes-validate"),
            "schemas": folder.name,
            "licence": "Apache-2.0",
        },
        "kubernetes": version,
        "kinds": dict(sorted(kinds.items())),
        "$defs": strip(definitions),
    }
    OUT.write_text(json.dumps(body, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: Kubernetes {version}, {len(kinds)} kinds")


if __name__ == "__main__":
    main()
