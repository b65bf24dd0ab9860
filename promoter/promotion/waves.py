"""Waves (DESIGN section 11): an environment's rollout in steps of cluster types.

Each step renders the main commit into its own cluster types' folders only, lands as its own
merge and is gated before the next starts. The waves of the Pipeline are resolved against the
cluster types of the environment branch here (pure): named cluster types must exist, selectors
match labels, a cluster type is in at most one wave, a wave has at least one cluster type, and
the cluster types no wave names form the implicit last wave, ``rest``, gated by the
environment's own gates. An environment without waves is one step, the whole environment.
"""

from __future__ import annotations

from dataclasses import dataclass

from promoter.clock import format_duration
from promoter.errors import ConfigError
from promoter.gates.flux import runs_flux
from promoter.model import (
    NEWEST,
    REST_WAVE,
    Environment,
    EnvironmentObjects,
    GateSpec,
    Release,
    Versions,
    Wave,
)


@dataclass(frozen=True)
class Step:
    """One landing of an environment: a wave, or (name '') the whole environment."""

    name: str
    index: int  # from 1
    count: int
    cluster_types: tuple[str, ...]  # the folders it lands (all of them for the whole environment)
    gates: tuple[GateSpec, ...]
    bake: float
    timeout: float
    #: The Flux releases its cluster types declare (what a commitStatus gate can hear).
    flux: tuple[Release, ...] = ()

    @property
    def whole(self) -> bool:
        return not self.name

    @property
    def last(self) -> bool:
        return self.index == self.count

    @property
    def label(self) -> str:
        """``wave canary (1/2)``; '' for the whole environment."""
        return f"wave {self.name} ({self.index}/{self.count})" if self.name else ""

    def prefix(self, environment: str) -> str:
        """How progress lines of this step start: ``prod``, or ``prod: wave canary (1/2)``."""
        return f"{environment}: {self.label}" if self.name else environment


def whole(
    env: Environment, cluster_types: tuple[str, ...], flux: tuple[Release, ...] = ()
) -> tuple[Step, ...]:
    """The environment as one step (no waves, or the scheduling flow without ``--waves``)."""
    return (Step("", 1, 1, cluster_types, env.gates, 0.0, env.timeout, flux),)


def flux_of(objects: EnvironmentObjects, names: tuple[str, ...], default: Versions) -> tuple[Release, ...]:
    """The Flux releases the cluster types ``names`` run, as they (else the Pipeline) declare."""
    found = {runs_flux(objects.cluster_types[n], default) for n in names if n in objects.cluster_types}
    return tuple(sorted(r for r in found if r is not None))


def resolve(env: Environment, objects: EnvironmentObjects, default: Versions = NEWEST) -> tuple[Step, ...]:
    """The steps of ``env`` over the cluster types of its branch; ConfigError (naming the wave's
    line in the Pipeline) when a wave names a missing cluster type, selects none, or shares one.
    ``default``: the Pipeline's ``spec.versions``, for the Flux releases each step runs."""
    types = tuple(sorted(objects.cluster_types))
    if not env.waves:
        return whole(env, types, flux_of(objects, types, default))
    where = f"branch {env.branch} at {objects.commit[:12]}"
    for wave in env.waves:
        missing = [name for name in wave.cluster_types if name not in objects.cluster_types]
        if missing:
            raise _wave_error(
                env, wave, f"cluster type {missing[0]!r} does not exist on {where} (it has {_names(types)})"
            )
    members = _members(env, objects)
    for wave in env.waves:
        if not members[wave.name]:
            raise _wave_error(env, wave, f"selects no cluster type on {where} (it has {_names(types)})")
    claimed = {t for m in members.values() for t in m}
    rest = tuple(t for t in types if t not in claimed)
    count = len(env.waves) + (1 if rest else 0)
    steps = [
        Step(
            w.name,
            i,
            count,
            tuple(members[w.name]),
            env.gates if w.gates is None else w.gates,
            w.bake,
            env.timeout if w.timeout is None else w.timeout,
            flux_of(objects, tuple(members[w.name]), default),
        )
        for i, w in enumerate(env.waves, 1)
    ]
    if rest:
        steps.append(
            Step(REST_WAVE, count, count, rest, env.gates, 0.0, env.timeout, flux_of(objects, rest, default))
        )
    return tuple(steps)


def _members(env: Environment, objects: EnvironmentObjects) -> dict[str, list[str]]:
    """Each wave's cluster types; ConfigError when one is in two waves."""
    members: dict[str, list[str]] = {w.name: [] for w in env.waves}
    for name in sorted(objects.cluster_types):
        labels = objects.cluster_types[name].labels
        claimed = [w for w in env.waves if w.selects(name, labels)]
        if len(claimed) > 1:
            raise _wave_error(
                env,
                claimed[1],
                f"cluster type {name!r} is also in wave {claimed[0].name!r} (line {claimed[0].source.line}); "
                "a cluster type belongs to one wave",
            )
        if claimed:
            members[claimed[0].name].append(name)
    return members


def _wave_error(env: Environment, wave: Wave, message: str) -> ConfigError:
    return ConfigError(
        f"environment {env.name!r}, wave {wave.name!r}: {message}",
        file=wave.source.file,
        line=wave.source.line,
    )


def _names(types: tuple[str, ...]) -> str:
    shown = ", ".join(types[:10]) + (f" and {len(types) - 10} more" if len(types) > 10 else "")
    return shown or "none"


def passed_description(step: Step, following: Step | None, merge_sha: str, summary: str) -> str:
    """The environment's pending status once a wave passed and the next one starts (or, for
    the last wave, while it bakes)."""
    bake = f", baking {format_duration(step.bake)}" if step.bake else ""
    after = f"next: wave {following.name}" if following else "then done"
    return f"{step.label} healthy at {merge_sha[:12]} ({summary}){bake}; {after}"


def pending_description(step: Step, what: str) -> str:
    """A pending status during a step: ``wave canary (1/2): PR open: ...``."""
    return f"{step.label}: {what}" if step.name else what
