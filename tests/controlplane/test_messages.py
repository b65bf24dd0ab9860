"""Bad ``messages`` templates, through the real CLI: ``validate`` and ``promote`` both exit 2 with
one ``error: promoter.yaml:<line>: ...`` line and nothing pushed (the cases and the check of
tests/controlplane/test_bad_input.py)."""

from __future__ import annotations

import pytest

from tests.controlplane.test_bad_input import Case, _check, dev_env, sub
from tests.support.helpers import PIPELINE, ControlPlaneFactory

P = "promoter.yaml"


def spec_messages(*lines: str) -> str:
    """The default Pipeline with ``messages:`` (line 5) in its spec, ``lines`` under it (from 6)."""
    return sub(PIPELINE, "spec:\n", "spec:\n  messages:\n" + "".join(f"    {ln}\n" for ln in lines))


def with_gate(text: str) -> str:
    """``text`` with a soak gate on dev (after the spec's lines: the lines above stay)."""
    return sub(text, "    - name: dev\n", "    - name: dev\n      gates: [{soak: 1m}]\n")


CASES = [
    Case(
        "syntax",
        P,
        6,
        "messages.title (environment dev): syntax error",
        main={P: spec_messages('title: "{{ main.sha "')},
    ),
    Case(
        "unknown-variable",
        P,
        6,
        "undefined variable 'mian': did you mean 'main'?",
        main={P: spec_messages('title: "{{ mian.sha }}"')},
    ),
    Case(
        "unknown-attribute",
        P,
        6,
        "main has no key 'sah': did you mean 'sha'?",
        main={P: spec_messages('title: "{{ main.sah }}"')},
    ),
    Case(
        "unknown-attribute-in-a-loop",
        P,
        8,  # the template's third line
        "messages.body (environment dev): undefined value",
        main={
            P: with_gate(
                spec_messages("body: |", "  {% for g in gates %}", "  {{ g.tpye }}", "  {% endfor %}")
            )
        },
    ),
    Case(
        "empty-title",
        P,
        6,
        "messages.title (environment dev): renders empty",
        main={P: spec_messages("title: \"{{ '' }}\"")},
    ),
    Case(
        "multi-line-title",
        P,
        6,
        "renders more than one line",
        main={P: spec_messages('title: "{{ main.body }}"')},  # the sample main commit has a body
    ),
    Case(
        "long-label",
        P,
        8,
        "messages.labels[1] (environment dev): renders 51 characters: a GitHub label is one line of 1 to 50",
        main={P: spec_messages("labels:", "  - promoted", "  - \"{{ 'x' * 51 }}\"")},
    ),
    Case(
        "empty-label",
        P,
        6,
        "messages.labels[0] (environment dev): renders empty",
        main={P: spec_messages('labels: ["{{ environment.wave }}"]')},  # no waves: ''
    ),
    Case(
        "label-not-a-string",
        P,
        6,
        "each label is a non-empty string (a template), got a mapping",
        main={P: spec_messages("labels: [{a: b}]")},
    ),
    Case(
        "title-not-a-string",
        P,
        6,
        "messages.title: must be a string, got a list",
        main={P: spec_messages("title: [a]")},
    ),
    Case(
        "unknown-field",
        P,
        6,
        "unknown field 'spec.messages.titel', did you mean 'title'?",
        main={P: spec_messages("titel: x")},
    ),
    Case(
        "empty-commit-message",
        P,
        6,
        "messages.commitMessage (environment dev): renders empty",
        main={P: spec_messages("commitMessage: \"{{ '  ' }}\"")},
    ),
    Case(
        "environment-override",
        P,
        8,
        "messages.title (environment dev): undefined variable 'nope'",
        main={P: dev_env('messages: {title: "{{ nope }}"}')},
    ),
    Case(
        "environment-labels",
        P,
        8,
        "messages.labels[0] (environment dev): renders 60 characters",
        main={P: dev_env("messages: {labels: [\"{{ 'y' * 60 }}\"]}")},
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_bad_messages(factory: ControlPlaneFactory, case: Case) -> None:
    _check(factory, case)


def test_an_environment_field_replaces_the_pipelines_bad_one(factory: ControlPlaneFactory) -> None:
    """Field by field: dev's own title replaces the Pipeline's, which still fails for qa."""
    text = sub(
        spec_messages('title: "{{ main.nope }}"'),
        "    - name: dev\n",
        '    - name: dev\n      messages: {title: "ok {{ main.short_sha }}"}\n',
    )
    case = Case(
        "pipeline-title-in-qa",
        P,
        6,
        "messages.title (environment qa): main has no key 'nope'",
        main={P: text},
    )
    _check(factory, case)
