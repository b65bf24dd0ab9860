"""Health gates. ``GATES`` maps the key used in a Pipeline to the module and class of the gate.

The registry names gates instead of importing them, so reading a Pipeline (which validates
each gate's spec) loads only the gates it uses: a Pipeline with a ``soak`` never imports the
HTTP client the ``prometheus`` and ``argocd`` gates need. A new gate is a module here and a line
in ``GATES`` (see docs/architecture.md).
"""

from __future__ import annotations

import importlib
from typing import Any

from promoter.gates.base import Gate, GateContext, Observation
from promoter.model import GateSpec, Source

GATES: dict[str, str] = {
    "commitStatus": "promoter.gates.commit_status:CommitStatusGate",
    "prometheus": "promoter.gates.prometheus:PrometheusGate",
    "argocd": "promoter.gates.argocd:ArgoCDGate",
    "command": "promoter.gates.command:CommandGate",
    "soak": "promoter.gates.soak:SoakGate",
}


def gate_class(kind: str) -> type[Gate]:
    """The class of gate ``kind`` (a key of ``GATES``), imported on first use."""
    module, _, name = GATES[kind].partition(":")
    found: type[Gate] = getattr(importlib.import_module(module), name)
    return found


def build_gate(spec: GateSpec) -> Gate:
    """A fresh gate (gates keep state between checks) from a validated spec."""
    return gate_class(spec.type).from_spec(spec.spec, spec.source)


def validate_gate(kind: str, spec: Any, source: Source) -> None:
    gate_class(kind).from_spec(spec, source)


__all__ = ["GATES", "Gate", "GateContext", "Observation", "build_gate", "gate_class", "validate_gate"]
