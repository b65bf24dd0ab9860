#!/usr/bin/env python3
"""Turn the Flux and Argo CD CRD schemas (as ../shared/crds holds them: the controllers' own
openAPIV3Schema per served version) into the JSON Schemas promoter ships in
promoter/k8s/schemas/, with what JSON Schema says differently:

- ``nullable: true`` allows null;
- ``x-kubernetes-int-or-string`` is an integer or a string;
- an object that lists its properties and does not preserve unknown fields refuses others, as
  the API server's strict field validation (kubectl's default) does;
- ``x-kubernetes-validations`` (CEL rules) and the other markers are dropped.

usage: scripts/gen-crd-schemas.py [SOURCE_DIR] (default: ../shared/crds beside the checkout)

It also reads the YAML files of scripts/crds/ (CRD specs transcribed by hand, see its README).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "promoter" / "k8s" / "schemas"


def convert(schema: Any) -> Any:
    if isinstance(schema, list):
        return [convert(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: convert(v) for k, v in schema.items() if not k.startswith("x-kubernetes-") and k != "nullable"}
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if schema.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if (
        "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "crds"
    OUT.mkdir(parents=True, exist_ok=True)
    for path in sorted([*source.glob("*.json"), *(ROOT / "scripts" / "crds").glob("*.yaml")]):
        crd = json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())
        served = {
            name: convert(version["schema"])
            for name, version in crd["versions"].items()
            if version.get("served")
        }
        body = {"group": crd["group"], "kind": crd["kind"], "source": crd["source"], "versions": served}
        target = OUT / f"{path.stem}.json"
        target.write_text(json.dumps(body, sort_keys=True, separators=(",", ":")) + "\n")
        print(f"wrote {target.relative_to(ROOT)}: {crd['kind']} {', '.join(served)}")


if __name__ == "__main__":
    main()
