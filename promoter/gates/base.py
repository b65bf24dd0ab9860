"""The gate framework: a gate observes the promoted revision and says success, failure or pending.

A gate is built from its spec in the Pipeline (``from_spec``, which also validates it at load
time so that a bad spec is exit 2 with a line), then polled by ``promoter.gates.runner``.
Gates hold their own state between checks (counts, start times) and never sleep themselves.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from promoter.clock import Clock
from promoter.errors import ConfigError
from promoter.model import Release, Source

State = Literal["success", "failure", "pending"]
#: A gate's message is one line of at most this many characters: it goes into status
#: descriptions, PR tables and step summaries (the runner cuts a longer one).
MESSAGE_LIMIT = 400


@dataclass
class GateContext:
    """What a gate may look at: the promoted main commit X and the merged platform commit M."""

    environment: str
    commit: str
    platform_sha: str
    platform_url: str
    platform_branch: str
    clock: Clock
    platform_path: str = ""
    forge: Any = None
    platform: Any = None  # promoter.platform.PlatformRepo: the platform repo's git objects
    others_passed_at: float | None = None
    #: The cluster types this gate judges (a wave's); empty means all of the environment's.
    cluster_types: tuple[str, ...] = ()
    #: The Flux releases those cluster types declare they run (``spec.versions``); empty: not said.
    flux: tuple[Release, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Observation:
    state: State
    message: str


class Gate(ABC):
    """One health gate of an environment."""

    type: ClassVar[str]
    #: Soak-like gates start only after every other gate passed.
    after_others: ClassVar[bool] = False

    def __init__(self, source: Source, interval: float = 5.0) -> None:
        self.source = source
        self.interval = interval

    @classmethod
    @abstractmethod
    def from_spec(cls, spec: Any, source: Source) -> Gate:
        """Validate ``spec`` (raise ConfigError naming ``source``) and build the gate."""

    @abstractmethod
    def describe(self) -> str:
        """A short human name, e.g. ``command promoter check-platform``."""

    @abstractmethod
    def check(self, ctx: GateContext) -> Observation:
        """Observe once; never block for long."""

    def at_timeout(self, ctx: GateContext, last: Observation) -> Observation:
        """What the gate says when the deadline ends its wait, from ``last``, its last
        observation (still pending): by default just that. Never a pass."""
        return last

    def ready_at(self, ctx: GateContext) -> float | None:
        """When the gate will pass by itself (a soak), on the run's clock; None: unknown."""
        return None

    def withhold(self, names: Iterable[str]) -> None:  # noqa: B027 (most gates run nothing)
        """Keep these environment variables (the notification receivers') from what the gate
        runs; a gate that runs no command has nothing to keep them from."""


def spec_error(source: Source, gate: str, message: str) -> ConfigError:
    return ConfigError(f"gate {gate}: {message}", file=source.file, line=source.line)
