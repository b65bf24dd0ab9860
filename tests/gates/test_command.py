"""The command gate: what it runs, what it is given (never the receivers' secrets), and what is
left of it after a timeout."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.clock import FakeClock
from promoter.controlplane.repo import ControlPlane
from promoter.gates import GateContext, build_gate
from promoter.gates.command import CommandGate
from promoter.model import Source
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage

SRC = Source("promoter.yaml", 9)


def _ctx() -> GateContext:
    return GateContext("qa", "c" * 40, "m" * 40, "/srv/platform.git", "qa", FakeClock(0), "envs/qa")


def _gone(pid: int) -> bool:
    """No such process, or a zombie waiting to be reaped (killed either way)."""
    stat = Path(f"/proc/{pid}/stat")
    if not stat.exists():
        return True
    return stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_a_timed_out_attempt_ends_everything_it_started(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    gate = CommandGate.from_spec(
        {"run": f"sleep 60 & echo $! > {pidfile}; echo started; wait", "shell": True, "timeout": "1s"}, SRC
    )
    observation = gate.check(_ctx())
    assert (observation.state, observation.message) == ("failure", "timed out after 1.0s: started")
    pid = int(pidfile.read_text())
    for _ in range(100):  # SIGKILL is sent before check returns; the reaping may lag a little
        if _gone(pid):
            break
        time.sleep(0.05)
    assert _gone(pid), f"the shell's child {pid} outlived the attempt"


def test_the_whole_promotion_is_in_the_environment(tmp_path: Path) -> None:
    out = tmp_path / "env"
    names = ("PROMOTER_ENV", "PROMOTER_COMMIT", "PROMOTER_PLATFORM_SHA", "PROMOTER_PLATFORM_REPO")
    names += ("PROMOTER_PLATFORM_BRANCH", "PROMOTER_PLATFORM_PATH")
    script = f"import os; open({str(out)!r}, 'w').write(' '.join(os.environ[k] for k in {names!r}))"
    gate = CommandGate.from_spec([sys.executable, "-c", script], SRC)
    assert gate.check(_ctx()).state == "success"
    assert out.read_text() == f"qa {'c' * 40} {'m' * 40} /srv/platform.git qa envs/qa"


def test_failure_shows_the_last_line_of_error_output() -> None:
    gate = CommandGate.from_spec(
        [sys.executable, "-c", "import sys; print('checking'); sys.exit('error: deployment api not ready')"],
        SRC,
    )
    observation = gate.check(_ctx())
    assert (observation.state, observation.message) == ("failure", "exit 1: error: deployment api not ready")


def test_a_command_that_cannot_start_fails_even_with_retry() -> None:
    gate = CommandGate.from_spec({"run": ["/nonexistent/kubectl", "wait"], "retry": True}, SRC)
    observation = gate.check(_ctx())
    assert (observation.state, observation.message) == ("failure", "cannot run: No such file or directory")


PRINT_ENV = "import json, os, sys; open(sys.argv[1], 'w').write(json.dumps(dict(os.environ)))"


def test_the_variables_it_is_told_to_withhold_never_reach_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHAT_URL", "https://hooks.example.com/T0/B0/secret-path")
    monkeypatch.setenv("AUDIT_KEY", "audit-hmac-key")
    monkeypatch.setenv("PROMOTER_NOTIFICATIONS_ENV", "CHAT_URL=https://hooks.example.com/x")
    monkeypatch.setenv("KUBECONFIG", "/etc/kube")
    out = tmp_path / "env.json"
    gate = CommandGate.from_spec([sys.executable, "-c", PRINT_ENV, str(out)], SRC)
    gate.withhold(["CHAT_URL", "AUDIT_KEY"])
    assert gate.check(_ctx()).state == "success"
    seen = json.loads(out.read_text())
    assert not {"CHAT_URL", "AUDIT_KEY", "PROMOTER_NOTIFICATIONS_ENV"} & set(seen)
    assert seen["KUBECONFIG"] == "/etc/kube" and seen["PROMOTER_ENV"] == "qa"


def test_a_promotions_gate_command_never_gets_the_receivers_variables(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The variables the Pipeline's receivers name (``urlFrom``, ``secretFrom``), set as plain
    variables of the promoter's environment, reach no gate command: neither an environment's nor
    a wave's."""
    out = factory.root / "env.json"
    gate = f"[{{command: {{run: [{sys.executable}, -c, {json.dumps(PRINT_ENV)}, {out}]}}}}]"
    text = pipeline("dev", stage("qa", gates=gate), "prod") + (
        "  notifications:\n"
        "    - {name: chat, slack: {urlFrom: CHAT_URL}, events: [failed]}\n"
        "    - {name: audit, webhook: {url: 'http://127.0.0.1:9/hook', secretFrom: AUDIT_KEY}, events: [failed]}\n"
    )
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    monkeypatch.setenv("CHAT_URL", "http://127.0.0.1:9/T0/B0/secret-path")
    monkeypatch.setenv("AUDIT_KEY", "audit-hmac-key")
    monkeypatch.setenv("KUBECONFIG", "/etc/kube")
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--to", "qa"])
    assert result.exit_code == 0, result.output
    seen = json.loads(out.read_text())
    assert "CHAT_URL" not in seen and "AUDIT_KEY" not in seen
    assert seen["KUBECONFIG"] == "/etc/kube" and seen["PROMOTER_ENV"] == "qa"


def test_the_pipeline_tells_each_command_gate_what_to_withhold(factory: ControlPlaneFactory) -> None:
    """Every command gate of the Pipeline, an environment's or a wave's, and no other gate."""
    waves = "[{name: canary, clusterTypes: [small], gates: [{command: 'true'}, {soak: 1m}]}]"
    text = pipeline(stage("dev", gates="[{command: 'true'}]", waves=waves), "qa", "prod") + (
        "  notifications:\n    - {name: chat, slack: {urlFrom: CHAT_URL}}\n"
        "    - {name: audit, webhook: {url: 'https://a.example.com/', secretFrom: AUDIT_KEY}}\n"
    )
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    cp = ControlPlane(path)
    dev = cp.main(cp.resolve(None)).pipeline.environments[0]
    wave_gates = dev.waves[0].gates or ()
    assert [g.withheld for g in (*dev.gates, *wave_gates)] == [("AUDIT_KEY", "CHAT_URL")] * 2 + [()]
    command = build_gate(dev.gates[0])
    assert isinstance(command, CommandGate) and command.withheld == {"AUDIT_KEY", "CHAT_URL"}
