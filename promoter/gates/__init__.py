"""Health gates: one module per gate, the runner, and the registry naming them
(``promoter.gates.registry``)."""

from __future__ import annotations

from promoter.gates.base import Gate, GateContext, Observation
from promoter.gates.registry import gate_class
from promoter.model import GateSpec


def build_gate(spec: GateSpec) -> Gate:
    """A fresh gate (gates keep state between checks) from a validated spec."""
    gate = gate_class(spec.type).from_spec(spec.spec, spec.source)
    gate.withhold(spec.withheld)
    return gate


__all__ = ["Gate", "GateContext", "Observation", "build_gate"]
