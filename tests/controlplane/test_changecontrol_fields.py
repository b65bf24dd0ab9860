"""The Pipeline's change-control fields, checked by ``validate``: one ``file:line`` error line,
exit 2, for each mistake in a window or a receiver."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.controlplane.repo import ControlPlane
from tests.support.helpers import PIPELINE, WORKLOAD, ControlPlaneFactory


def with_prod(*lines: str) -> str:
    return PIPELINE.replace(
        "    - name: prod\n", "    - name: prod\n" + "".join(f"      {ln}\n" for ln in lines)
    )


GOOD = with_prod(
    "windows:",
    "  timeZone: Europe/Berlin",
    "  allow:",
    "    - {days: Mon-Thu, hours: '09:00-17:00'}",
    "    - {days: [Fri], hours: '09:00-12:00'}",
    "  deny:",
    "    - {dates: '2026-12-21..2027-01-04', reason: year-end freeze}",
    "    - {dates: [2026-05-01]}",
) + (
    "  notifications:\n"
    "    - {name: team-chat, slack: {urlFrom: SLACK_WEBHOOK_URL}, events: [approval, failed, held]}\n"
    "    - {name: audit, webhook: {url: 'https://audit.example.com/promoter', secretFrom: AUDIT_KEY}, environments: [prod]}\n"
)

CASES = [
    (
        "zone",
        with_prod("windows: {timeZone: europe/berlin, allow: [{days: Mon}]}"),
        10,
        "spec.environments[2].windows.timeZone: unknown time zone 'europe/berlin' (did you mean Europe/Berlin?)",
    ),
    (
        "hours",
        with_prod("windows:", "  timeZone: UTC", "  allow:", "    - {hours: '9-17'}"),
        13,
        "spec.environments[2].windows.allow[0].hours: '9-17': hours are HH:MM-HH:MM on a 24-hour clock, like 09:00-17:00",
    ),
    (
        "days",
        with_prod("windows: {timeZone: UTC, deny: [{days: Fry}]}"),
        10,
        "spec.environments[2].windows.deny[0].days: 'Fry': days are Mon, Tue, Wed, Thu, Fri, Sat, Sun, or a range like Mon-Fri",
    ),
    (
        "dates",
        with_prod("windows: {timeZone: UTC, deny: [{dates: '2027-01-04..2026-12-21'}]}"),
        10,
        "spec.environments[2].windows.deny[0].dates: '2027-01-04..2026-12-21': the range ends before it starts",
    ),
    (
        "empty rule",
        with_prod("windows: {timeZone: UTC, deny: [{reason: why}]}"),
        10,
        "spec.environments[2].windows.deny[0]: needs days, hours or dates",
    ),
    (
        "secret",
        PIPELINE + "  notifications:\n    - {name: chat, slack: {urlFrom: 'https://hooks.slack.com/x'}}\n",
        11,
        "spec.notifications[0].slack.urlFrom: 'https://hooks.slack.com/x': names the environment variable that holds the secret, like SLACK_WEBHOOK_URL",
    ),
    (
        "event",
        PIPELINE + "  notifications:\n    - {name: chat, slack: {urlFrom: URL}, events: [merged]}\n",
        11,
        "spec.notifications[0].events: unknown event 'merged'; known: approval, failed, rolled-back, held, released, window, done",
    ),
]


@pytest.mark.parametrize(("text", "line", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_change_control_field_is_one_line_with_file_and_line(
    factory: ControlPlaneFactory, text: str, line: int, says: str
) -> None:
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 2
    assert result.output == f"error: promoter.yaml:{line}: {says}\n"


def test_good_windows_and_receivers_are_read(factory: ControlPlaneFactory) -> None:
    path = factory.create({"promoter.yaml": GOOD, "workloads/app.yaml": WORKLOAD})
    cp = ControlPlane(path)
    pipeline = cp.main(cp.resolve(None)).pipeline
    prod = pipeline.environment("prod")
    assert prod is not None and prod.windows is not None
    assert prod.windows.zone == "Europe/Berlin"
    assert [sorted(r.days or ()) for r in prod.windows.allow] == [[0, 1, 2, 3], [4]]
    assert prod.windows.deny[0].reason == "year-end freeze"
    assert [(r.name, r.kind) for r in pipeline.notifications] == [
        ("team-chat", "slack"),
        ("audit", "webhook"),
    ]
    assert pipeline.notifications[1].environments == ("prod",)
