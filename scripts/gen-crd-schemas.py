#!/usr/bin/env python3
"""Turn the Flux and Argo CD CRD schemas (as ../shared/crds holds them: the controllers' own
openAPIV3Schema per served version) into the JSON Schemas promoter ships in
promoter/k8s/schemas/, with what JSON Schema says differently:

- ``nullable: true`` allows null;
- ``x-kubernetes-int-or-string`` is an integer or a string;
- an object that lists its properties and does not preserve unknown fields refuses others, as
  the API server's strict field validation (kubectl's default) does;
- ``x-kubernetes-validations`` (CEL rules) are kept apart, under ``rules``: per served version,
  each rule with the path of the object it judges (``promoter/k8s/cel.py`` evaluates them), and
  the defaults the API server gives that object's fields before it evaluates them; the other
  markers are dropped.

usage: scripts/gen-crd-schemas.py [SOURCE_DIR] (default: ../shared/crds beside the checkout)

It also reads the YAML files of scripts/crds/ (CRD specs transcribed by hand, see its README)
for a kind SOURCE_DIR does not hold in full.
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


def cel_rules(schema: Any, path: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Each ``x-kubernetes-validations`` rule of ``schema`` with the path of the object it is on
    (``[]`` for each item of a list) and the defaults of that object's properties."""
    if not isinstance(schema, dict):
        return []
    defaults = {k: v["default"] for k, v in schema.get("properties", {}).items() if "default" in v}
    found = [
        {"path": list(path), "rule": r["rule"], "message": r.get("message", r["rule"]), "defaults": defaults}
        for r in schema.get("x-kubernetes-validations", [])
    ]
    for name, sub in schema.get("properties", {}).items():
        found += cel_rules(sub, (*path, name))
    if "items" in schema:
        found += cel_rules(schema["items"], (*path, "[]"))
    return found


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "crds"
    OUT.mkdir(parents=True, exist_ok=True)
    full = {p.stem for p in source.glob("*.json")}
    transcribed = [p for p in (ROOT / "scripts" / "crds").glob("*.yaml") if p.stem not in full]
    for path in sorted([*source.glob("*.json"), *transcribed]):
        crd = json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())
        served = {
            name: convert(version["schema"])
            for name, version in crd["versions"].items()
            if version.get("served")
        }
        rules = {
            name: cel_rules(version["schema"])
            for name, version in crd["versions"].items()
            if version.get("served")
        }
        body = {
            "group": crd["group"],
            "kind": crd["kind"],
            "source": crd["source"],
            "versions": served,
            "rules": {name: found for name, found in rules.items() if found},
        }
        target = OUT / f"{path.stem}.json"
        target.write_text(json.dumps(body, sort_keys=True, separators=(",", ":")) + "\n")
        print(f"wrote {target.relative_to(ROOT)}: {crd['kind']} {', '.join(served)}")


if __name__ == "__main__":
    main()
