"""Health gates. ``GATES`` maps the key used in a Pipeline to the gate class."""

from __future__ import annotations

from typing import Any

from promoter.gates.argocd import ArgoCDGate
from promoter.gates.base import Gate, GateContext, Observation
from promoter.gates.command import CommandGate
from promoter.gates.commit_status import CommitStatusGate
from promoter.gates.prometheus import PrometheusGate
from promoter.gates.soak import SoakGate
from promoter.model import GateSpec, Source

GATES: dict[str, type[Gate]] = {
    CommitStatusGate.type: CommitStatusGate,
    PrometheusGate.type: PrometheusGate,
    ArgoCDGate.type: ArgoCDGate,
    CommandGate.type: CommandGate,
    SoakGate.type: SoakGate,
}


def build_gate(spec: GateSpec) -> Gate:
    """A fresh gate (gates keep state between checks) from a validated spec."""
    return GATES[spec.type].from_spec(spec.spec, spec.source)


def validate_gate(kind: str, spec: Any, source: Source) -> None:
    GATES[kind].from_spec(spec, source)


__all__ = ["GATES", "Gate", "GateContext", "Observation", "build_gate", "validate_gate"]
