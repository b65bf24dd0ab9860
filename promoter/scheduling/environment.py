"""The assignments of one environment, per cluster type, config merged and checked on demand."""

from __future__ import annotations

from promoter.model import (
    EnvironmentObjects,
    MainObjects,
)
from promoter.scheduling.config import ConfigIndex
from promoter.scheduling.ordering import check_assigned
from promoter.scheduling.schemas import SchemaChecker
from promoter.scheduling.targets import (
    Assignment,
    Fact,
    Pair,
    pairs,
    target_facts,
)


class EnvironmentSchedule:
    """The assignments of one environment, grouped by cluster type, with config merged and
    checked per cluster type on demand: a render that reuses a cluster type's earlier result
    need not merge its config."""

    def __init__(self, main: MainObjects, env: EnvironmentObjects, environment: str) -> None:
        self.environment = environment
        self.pairs: dict[str, list[Pair]] = {}  # by cluster type name, in order
        for pair in pairs(main, env, environment):
            self.pairs.setdefault(pair[0].name, []).append(pair)
        check_assigned(self.pairs, environment)  # each dependsOn assigned where its dependent is
        self.index = ConfigIndex(env.configmaps)
        self._checker = SchemaChecker(main.schemas, env.configmaps)
        self._facts: dict[tuple[str, str], frozenset[Fact]] = {}

    def assign(self, cluster_type: str) -> list[Assignment]:
        """The assignments to one cluster type, config merged and checked (SchemaError)."""
        out = []
        for ct, w, t in self.pairs.get(cluster_type, ()):
            facts = self._facts.get((w.name, t.name))
            if facts is None:
                facts = self._facts[(w.name, t.name)] = target_facts(w, t)
            names = self.index.names(ct, facts)
            done = Assignment(self.environment, ct, w, t, self.index.merged(names), names)
            self._checker.check(done, facts)
            out.append(done)
        return out


def assign(main: MainObjects, env: EnvironmentObjects, environment: str) -> list[Assignment]:
    """Schedule, merge config and check schemas: the assignments ready to render."""
    schedule = EnvironmentSchedule(main, env, environment)
    return [a for cluster_type in schedule.pairs for a in schedule.assign(cluster_type)]
