"""Which gates exist: ``GATES`` maps the key used in a Pipeline to the module and class of the gate.

The registry names gates instead of importing them, so reading a Pipeline (which validates
each gate's spec) loads only the gates it uses: a Pipeline with a ``soak`` never imports the
HTTP client the ``prometheus`` and ``argocd`` gates need. It sits below the control plane (which
validates gate specs through it) while the gates sit above it (they read their spec with the
control plane's strict reader). A new gate is a module in ``promoter/gates`` and a line in
``GATES`` (see docs/architecture.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from promoter.model import Source

if TYPE_CHECKING:
    from promoter.gates.base import Gate

GATES: dict[str, str] = {
    "commitStatus": "promoter.gates.commit_status:CommitStatusGate",
    "prometheus": "promoter.gates.prometheus:PrometheusGate",
    "argocd": "promoter.gates.argocd:ArgoCDGate",
    "command": "promoter.gates.command:CommandGate",
    "soak": "promoter.gates.soak:SoakGate",
    "hub": "promoter.gates.hub:HubGate",
}


def gate_class(kind: str) -> type[Gate]:
    """The class of gate ``kind`` (a key of ``GATES``), imported on first use."""
    module, _, name = GATES[kind].partition(":")
    found: type[Gate] = getattr(importlib.import_module(module), name)
    return found


def validate_gate(kind: str, spec: Any, source: Source) -> None:
    """A ConfigError naming the Pipeline line when ``spec`` is not a valid spec of gate ``kind``."""
    gate_class(kind).from_spec(spec, source)
