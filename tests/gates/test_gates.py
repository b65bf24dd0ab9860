"""The gate framework with a fake clock: success, failure, timeout, soak, progress lines."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from promoter.clock import FakeClock, parse_duration
from promoter.errors import ConfigError, GateFailed, GateTimedOut
from promoter.gates import GateContext, Observation, build_gate
from promoter.gates.base import Gate
from promoter.gates.command import CommandGate
from promoter.gates.runner import run_gates
from promoter.gates.soak import SoakGate
from promoter.model import GateSpec, Source

SRC = Source("promoter.yaml", 12)


class Scripted(Gate):
    """A gate that reports a script of observations, then repeats the last."""

    type = "scripted"

    def __init__(self, *states: str, interval: float = 5.0) -> None:
        super().__init__(SRC, interval)
        self.script = list(states)
        self.checked_at: list[float] = []

    @classmethod
    def from_spec(cls, spec: Any, source: Source) -> Scripted:
        raise NotImplementedError

    def describe(self) -> str:
        return "scripted"

    def check(self, ctx: GateContext) -> Observation:
        self.checked_at.append(ctx.clock.now())
        state = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        return Observation(state, f"saw {state}")  # type: ignore[arg-type]


def ctx(clock: FakeClock) -> GateContext:
    return GateContext("qa", "x" * 40, "m" * 40, "/platform", "qa", clock)


def test_waits_for_success_then_soaks_after_the_others() -> None:
    clock = FakeClock(0)
    slow = Scripted("pending", "pending", "success")
    soak = SoakGate(60, SRC)
    lines: list[str] = []
    outcomes = run_gates([slow, soak], ctx(clock), deadline=1000, progress=lines.append, progress_interval=20)
    assert slow.checked_at == [0, 5, 10]
    assert [(o.gate, o.state) for o in outcomes] == [("scripted", "success"), ("soak 1m00s", "success")]
    assert 70 <= clock.now() <= 75  # soak started at 10, after the other gate passed
    assert (
        lines[0] == "qa: waiting 20s (16m20s left), gate soak 1m00s: pending, 6.0s of 1m00s"
    )  # last observed, at 16 s
    assert len(lines) == 3  # a steady pace: one line per 20 s


def test_failure_stops_at_once_with_every_outcome() -> None:
    clock = FakeClock(0)
    with pytest.raises(GateFailed) as err:
        run_gates([Scripted("pending", "failure"), SoakGate(60, SRC)], ctx(clock), 1000, lambda _: None)
    assert str(err.value) == "qa: gate scripted failed: saw failure"
    assert [o.state for o in err.value.outcomes] == ["failure", "pending"]  # type: ignore[attr-defined]
    assert clock.now() == 5


def test_timeout_reports_the_last_observed_state() -> None:
    clock = FakeClock(0)
    with pytest.raises(GateTimedOut) as err:
        run_gates([Scripted("pending")], ctx(clock), 30, lambda _: None)
    assert str(err.value) == "qa: gates did not pass within the timeout: scripted: pending (saw pending)"
    assert clock.now() == 30


def test_command_gate_gets_the_promotion_in_its_environment(tmp_path: Any) -> None:
    out = tmp_path / "env.txt"
    script = f"import os; open({str(out)!r}, 'w').write(' '.join(os.environ[k] for k in ('PROMOTER_ENV', 'PROMOTER_COMMIT', 'PROMOTER_PLATFORM_SHA')))"
    gate = build_gate(GateSpec("command", [sys.executable, "-c", script], SRC))
    assert gate.check(ctx(FakeClock())) == Observation("success", "exit 0")
    assert out.read_text() == f"qa {'x' * 40} {'m' * 40}"


def test_command_gate_runs_no_shell_unless_asked(tmp_path: Any) -> None:
    marker = tmp_path / "marker"
    gate = CommandGate.from_spec({"run": ["echo", f"$(touch {marker})"]}, SRC)
    assert gate.check(ctx(FakeClock())).state == "success"
    assert not marker.exists()
    shell = CommandGate.from_spec({"run": f"touch {marker} && exit 4", "shell": True}, SRC)
    assert shell.check(ctx(FakeClock())) == Observation("failure", "exit 4")
    assert marker.exists()


def test_command_gate_retry_turns_failure_into_pending() -> None:
    gate = CommandGate.from_spec({"run": "false", "retry": True, "interval": "2s"}, SRC)
    assert gate.check(ctx(FakeClock())) == Observation("pending", "exit 1")
    assert gate.interval == 2


@pytest.mark.parametrize(
    ("kind", "spec", "message"),
    [
        ("command", {"run": []}, "gate command: 'run' must be a non-empty string or list of strings"),
        ("command", {"run": "x", "sh": True}, "gate command: unknown field 'sh'"),
        (
            "command",
            {"run": "x", "interval": "soon"},
            "gate command: expected a duration like 30s, 5m or 1h, got 'soon'",
        ),
        ("soak", "forever", "gate soak: expected a duration like 30s, 5m or 1h, got 'forever'"),
        ("soak", {"time": "1m"}, "gate soak: unknown field 'time'"),
    ],
)
def test_bad_gate_specs_name_the_line(kind: str, spec: Any, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_gate(GateSpec(kind, spec, SRC))
    assert str(err.value) == f"promoter.yaml:12: {message}"


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), (90, 90), ("1h30m", 5400), ("2m5s", 125), ("500ms", 0.5), ("0.5s", 0.5)]
)
def test_durations(text: Any, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_command_gate_does_not_get_the_promoters_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMOTER_GITHUB_TOKEN", "ghp_abcdefgh12345678")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_abcdefgh12345678")
    monkeypatch.setenv("KUBECONFIG", "/etc/kube")
    # the gates' block: its variables (set by the promoter when it starts) stay, the block goes
    monkeypatch.setenv("PROMOTER_GATES_ENV", "ARGOCD_AUTH_TOKEN=argo-0123456789")
    monkeypatch.setenv("ARGOCD_AUTH_TOKEN", "argo-0123456789")
    env = CommandGate.from_spec("true", SRC).environment(ctx(FakeClock()))
    assert "PROMOTER_GITHUB_TOKEN" not in env and "GITHUB_TOKEN" not in env
    assert env["KUBECONFIG"] == "/etc/kube" and env["PROMOTER_ENV"] == "qa"
    assert "PROMOTER_GATES_ENV" not in env and env["ARGOCD_AUTH_TOKEN"] == "argo-0123456789"
