"""Bad input in a graph of environments (DESIGN section 14): a cycle, an unknown name, an
environment that follows itself or names one twice, and one that no commit could ever reach;
each is exit 2 with one ``error: promoter.yaml:<line>: ...`` line and nothing pushed, through the
corpus's own machinery (tests/controlplane/test_bad_input.py)."""

from __future__ import annotations

import pytest

from tests.controlplane.test_bad_input import Case, P, _check
from tests.support.helpers import ControlPlaneFactory, pipeline, stage

CASES = [
    Case(
        "follows-unknown-environment",
        P,
        9,
        "spec.environments[1].follows: no environment 'deev', did you mean 'dev'?",
        main={P: pipeline("dev", stage("qa", follows="[deev]"), "prod")},
    ),
    Case(
        "follows-unknown-environment-far-from-any",
        P,
        9,
        "spec.environments[1].follows: no environment 'staging' (the Pipeline has dev, qa, prod)",
        main={P: pipeline("dev", stage("qa", follows="[staging]"), "prod")},
    ),
    Case(
        "follows-itself",
        P,
        9,
        "spec.environments[1].follows: environment 'qa' cannot follow itself",
        main={P: pipeline("dev", stage("qa", follows="[dev, qa]"), "prod")},
    ),
    Case(
        "follows-twice",
        P,
        9,
        "spec.environments[1].follows: 'dev' is listed twice",
        main={P: pipeline("dev", stage("qa", follows="[dev, dev]"), "prod")},
    ),
    Case(
        "follows-not-a-name",
        P,
        9,
        "spec.environments[1].follows: must be a list of environment names, got a mapping in it",
        main={P: pipeline("dev", stage("qa", follows="[{name: dev}]"), "prod")},
    ),
    Case(
        "follows-cycle-of-two",
        P,
        8,
        "spec.environments[0].follows: a cycle, dev -> prod -> dev: no commit could ever reach dev, prod"
        ", nor qa after them",
        main={P: pipeline(stage("dev", follows="[prod]"), "qa", stage("prod", follows="[dev]"))},
    ),
    Case(
        # qa and prod follow each other: dev is fine, and the cycle is named where it starts
        "follows-cycle-later",
        P,
        9,
        "spec.environments[1].follows: a cycle, qa -> prod -> qa: no commit could ever reach qa, prod",
        main={P: pipeline("dev", stage("qa", follows="[prod]"), stage("prod", follows="[qa]"))},
    ),
    Case(
        # every environment follows another: none takes a commit first, so none can be reached
        "follows-no-entry",
        P,
        8,
        "spec.environments[0].follows: a cycle, dev -> prod -> qa -> dev: no commit could ever reach dev, prod, qa",
        main={
            P: pipeline(
                stage("dev", follows="[qa]"), stage("qa", follows="[prod]"), stage("prod", follows="[dev]")
            )
        },
    ),
    Case(
        "fail-fast-not-a-flag",
        P,
        6,
        "spec.failFast: must be true or false, got a string",
        main={
            P: pipeline("dev", "qa", "prod").replace(
                "  environments:\n", "  failFast: sometimes\n  environments:\n"
            )
        },
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_bad_graph(factory: ControlPlaneFactory, case: Case) -> None:
    _check(factory, case)
