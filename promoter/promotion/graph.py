"""The Pipeline's environments as a graph (DESIGN section 14), as text: a mermaid flowchart for
docs and pull requests, and the lines ``status`` prints (pure functions)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from promoter.model import Environment, Pipeline

# A node's colours per state of its ``promoter/<env>`` status (GitHub renders mermaid in markdown).
_CLASSES = {
    "success": "fill:#dafbe1,stroke:#1a7f37,color:#1a7f37",
    "pending": "fill:#fff8c5,stroke:#9a6700,color:#9a6700",
    "failure": "fill:#ffebe9,stroke:#cf222e,color:#cf222e",
    "error": "fill:#ffebe9,stroke:#cf222e,color:#cf222e",
}


def mermaid(pipeline: Pipeline, states: Mapping[str, str] | None = None) -> str:
    """A mermaid flowchart of the environments, each arrow from an environment to one that
    follows it; with ``states`` (environment -> status state), each node says and shows its
    state. Node ids are positions, so any environment name is safe inside the quotes."""
    ids = {e.name: f"e{i}" for i, e in enumerate(pipeline.environments)}
    lines = ["flowchart LR"]
    for env in pipeline.ordered():
        label = env.name
        state = (states or {}).get(env.name)
        if states is not None:
            label += f"<br/>{state or 'not promoted'}"
        lines.append(f'  {ids[env.name]}["{label}"]')
    for env in pipeline.ordered():
        lines += [f"  {ids[up]} --> {ids[env.name]}" for up in pipeline.upstreams(env.name)]
    if states:
        used = sorted({s for s in states.values() if s in _CLASSES})
        lines += [f"  classDef {s} {_CLASSES[s]}" for s in used]
        lines += [
            f"  class {','.join(ids[e.name] for e in pipeline.environments if states.get(e.name) == s)} {s}"
            for s in used
        ]
    return "\n".join(lines) + "\n"


def edges(pipeline: Pipeline) -> dict[str, Any]:
    """The graph as data (``-o json``): each environment with what it follows and what follows
    it, in an order of promotion."""
    return {
        "environments": [
            {
                "name": env.name,
                "follows": list(pipeline.upstreams(env.name)),
                "followedBy": list(pipeline.downstreams(env.name)),
            }
            for env in pipeline.ordered()
        ],
        "failFast": pipeline.fail_fast,
    }


def waits_on(pipeline: Pipeline, name: str, states: Mapping[str, str]) -> list[str]:
    """The environments ``name`` follows that have not succeeded (their state, or ``not
    promoted``): what a commit waits on before it can go to ``name``."""
    return [
        f"{up} ({states.get(up) or 'not promoted'})"
        for up in pipeline.upstreams(name)
        if states.get(up) != "success"
    ]


def upstream_states(
    pipeline: Pipeline, name: str, state_of: Callable[[Environment], str | None]
) -> str | None:
    """What the promotion PR says of the environments ``name`` follows: ``prod-eu: success,
    prod-us: success`` (None for an environment that follows none)."""
    upstreams = [pipeline.environments[pipeline.index(n)] for n in pipeline.upstreams(name)]
    return ", ".join(f"{u.name}: {state_of(u) or 'not promoted'}" for u in upstreams) or None


def through(pipeline: Pipeline, name: str) -> list[Environment]:
    """The environments a commit passes to reach ``name``, and ``name``, in an order of
    promotion (``--to``: in a list, the list up to it)."""
    wanted = pipeline.ancestors(name) | {name}
    return [e for e in pipeline.ordered() if e.name in wanted]
