"""The prometheus gate against a real Prometheus (Debian's package, started here on 127.0.0.1)
scraping a loopback exporter this test serves; transport details faked with ``responses``."""

from __future__ import annotations

import contextlib
import http.server
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import responses

from promoter.clock import FakeClock
from promoter.errors import ConfigError, GateFailed, GateTimedOut
from promoter.gates import GateContext, build_gate
from promoter.gates.prometheus import PrometheusGate
from promoter.gates.runner import GateOutcome, run_gates
from promoter.model import GateSpec, Source

SRC = Source("promoter.yaml", 21)
MERGE = "4d5e6f" + "0" * 34
OLDER = "1a2b3c" + "0" * 34
RATIO = 'app_success_ratio{environment="{{ environment }}", revision="{{ platformSha }}"}'
# What the exporter serves: per environment, the merged revision's success ratio, and in qa
# also an older revision's much worse one, which a query on the merged revision must not see.
METRICS = f"""\
# HELP app_success_ratio Share of requests answered without error.
# TYPE app_success_ratio gauge
app_success_ratio{{environment="qa",revision="{MERGE}"}} 0.998
app_success_ratio{{environment="qa",revision="{OLDER}"}} 0.42
app_success_ratio{{environment="staging",revision="{MERGE}"}} 0.61
app_success_ratio{{environment="canary",revision="{MERGE}"}} 0.9
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Exporter(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = METRICS.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def _exporter() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Exporter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _wait_for_samples(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    """The first scrape lands a few seconds after start: poll until every series is there."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"prometheus exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
        with contextlib.suppress(requests.RequestException, ValueError, KeyError):
            body = requests.get(
                f"{url}/api/v1/query", params={"query": "app_success_ratio"}, timeout=2
            ).json()
            if len(body["data"]["result"]) == 4:
                return
        time.sleep(0.25)
    pytest.fail(f"prometheus had no samples after 90s:\n{log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("prometheus")
    if binary is None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail("prometheus is not installed: `make deps` runs scripts/deps/prometheus.sh")
        pytest.skip("prometheus is not installed (run scripts/deps/prometheus.sh as root)")
    root = tmp_path_factory.mktemp("prometheus")
    with _exporter() as target:
        config = root / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"scrape_configs:\n  - job_name: app\n    static_configs: [{{targets: ['{target}']}}]\n"
        )
        port = _free_port()
        log = root / "prometheus.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [
                    binary,
                    f"--config.file={config}",
                    f"--storage.tsdb.path={root / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_for_samples(url, proc, log)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _context(environment: str, clock: FakeClock, platform_sha: str = MERGE) -> GateContext:
    return GateContext(environment, "c" * 40, platform_sha, "/platform", environment, clock)


def _run(
    spec: dict[str, Any], environment: str = "qa", timeout: float = 3600, **kw: Any
) -> list[GateOutcome]:
    clock = kw.pop("clock", FakeClock(0))
    gate = build_gate(GateSpec("prometheus", spec, SRC))
    return run_gates([gate], _context(environment, clock, **kw), timeout, lambda _: None, 7200)


def test_success_after_count_measurements_at_the_interval(prometheus: str) -> None:
    clock = FakeClock(0)
    spec = {"address": prometheus, "query": RATIO, "successCondition": "result[0] >= 0.99"}
    [outcome] = _run({**spec, "count": 3, "interval": "1m"}, clock=clock)
    assert outcome.gate == "prometheus result[0] >= 0.99 x3"
    assert (outcome.state, outcome.message) == (
        "success",
        "3 measurements: 3 successful, 0 failed; last result [0.998]",
    )
    assert clock.now() == 120  # measured at 0, 60 and 120 s


def test_a_sample_of_an_older_revision_is_ignored(prometheus: str) -> None:
    condition = "len(result) > 0 && all(result, {# >= 0.99})"
    spec = {"address": prometheus, "query": RATIO, "successCondition": condition}
    [outcome] = _run(spec)
    assert outcome.message == "1 measurement: 1 successful, 0 failed; last result [0.998]"
    # The older revision's sample is in Prometheus: a query that does not pick the merged
    # revision sees it and fails; the gate's query, on {{ platformSha }}, never did.
    unpinned = {**spec, "query": 'app_success_ratio{environment="qa"}'}
    with pytest.raises(GateFailed, match=r"last result \[(0.998, 0.42|0.42, 0.998)\]"):
        _run(unpinned)
    with pytest.raises(GateFailed, match=r"last result \[0.42\]"):
        _run(spec, platform_sha=OLDER)


def test_failure_once_failed_measurements_exceed_the_failure_limit(prometheus: str) -> None:
    clock = FakeClock(0)
    spec = {"address": prometheus, "query": RATIO, "successCondition": "result[0] >= 0.99"}
    with pytest.raises(GateFailed) as err:
        _run({**spec, "count": 5, "interval": "30s", "failureLimit": 1}, "staging", clock=clock)
    assert str(err.value) == (
        "staging: gate prometheus result[0] >= 0.99 x5 failed: "
        "2 failed measurements > failureLimit 1; last result [0.61]"
    )
    assert clock.now() == 30


def test_inconclusive_when_neither_condition_holds(prometheus: str) -> None:
    spec = {
        "address": prometheus,
        "query": RATIO,
        "successCondition": "result[0] >= 0.99",
        "failureCondition": "result[0] < 0.8",
    }
    with pytest.raises(GateFailed) as err:
        _run(spec, "canary")
    assert str(err.value).endswith("failed: inconclusive: 1 > inconclusiveLimit 0; last result [0.9]")
    [outcome] = _run({**spec, "inconclusiveLimit": 1, "count": 1}, "qa")
    assert outcome.state == "success"


def test_timeout_reports_the_last_measurement(prometheus: str) -> None:
    spec = {"address": prometheus, "query": RATIO, "successCondition": "result[0] >= 0.99"}
    with pytest.raises(GateTimedOut) as err:
        _run({**spec, "count": 10, "interval": "1m"}, timeout=180)
    assert str(err.value) == (
        "qa: gates did not pass within the timeout: prometheus result[0] >= 0.99 x10: pending "
        "(4 of 10 measurements: 4 successful, 0 failed; last result [0.998])"
    )


def test_errors_in_a_row_fail_with_the_servers_message(prometheus: str) -> None:
    bad = {"address": prometheus, "query": "sum(app_success_ratio", "successCondition": "result[0] > 0"}
    with pytest.raises(GateFailed) as err:
        _run({**bad, "consecutiveErrorLimit": 1})
    message = str(err.value)
    assert message.startswith(
        "qa: gate prometheus result[0] > 0 failed: 2 errors in a row > consecutiveErrorLimit 1; "
        f'last error: HTTP 400 from {prometheus}/api/v1/query: invalid parameter "query": '
    )
    assert message.endswith("unclosed left parenthesis")
    empty = {"address": prometheus, "query": RATIO, "successCondition": "result[0] >= 0.99"}
    with pytest.raises(GateFailed) as err:
        _run({**empty, "consecutiveErrorLimit": 0}, "nowhere")
    assert str(err.value).endswith("last error: index 0 is out of range: the result is empty")


def test_a_scalar_result_is_a_number(prometheus: str) -> None:
    spec = {
        "address": prometheus,
        "query": f"scalar(sum({RATIO}))",
        "successCondition": "result >= 0.99 && !isNaN(result)",
    }
    [outcome] = _run(spec)
    assert outcome.message == "1 measurement: 1 successful, 0 failed; last result 0.998"


# ---------------------------------------------------------------- transport, with responses


def _vector(*values: str) -> dict[str, Any]:
    return {
        "status": "success",
        "data": {
            "resultType": "vector",
            "result": [
                {"metric": {"__name__": "x", "pod": f"p{i}"}, "value": [1795240723.089, v]}
                for i, v in enumerate(values)
            ],
        },
    }


def test_bearer_token_from_the_named_variable_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("METRICS_TOKEN", "s3cr3t-metrics-token")
    spec = {
        "address": "https://metrics.example.com/prometheus",
        "query": "up",
        "successCondition": "result[0] == 1",
        "tokenEnv": "METRICS_TOKEN",
    }
    gate = PrometheusGate.from_spec(spec, SRC)
    with responses.RequestsMock() as mock:
        mock.get(
            "https://metrics.example.com/prometheus/api/v1/query",
            json={
                "status": "error",
                "errorType": "unauthorized",
                "error": "token s3cr3t-metrics-token expired",
            },
            status=401,
        )
        mock.get("https://metrics.example.com/prometheus/api/v1/query", json=_vector("1"))
        first = gate.check(_context("qa", FakeClock(0)))
        second = gate.check(_context("qa", FakeClock(0)))
        assert mock.calls[0].request.headers["Authorization"] == "Bearer s3cr3t-metrics-token"
        assert mock.calls[0].request.params == {"query": "up"}
    assert (first.state, first.message) == (
        "pending",
        "0 of 1 measurements: 0 successful, 0 failed; last error: HTTP 401 from "
        "https://metrics.example.com/prometheus/api/v1/query: token *** expired",
    )
    assert second.state == "success"


def test_nan_and_infinity_reach_the_condition() -> None:
    spec = {
        "address": "http://prom:9090",
        "query": "x",
        "successCondition": "!isNaN(result[0]) && result[1] < 1",
    }
    gate = PrometheusGate.from_spec({**spec, "failureLimit": 1}, SRC)
    with responses.RequestsMock() as mock:
        mock.get("http://prom:9090/api/v1/query", json=_vector("NaN", "+Inf"))
        mock.get("http://prom:9090/api/v1/query", json=_vector("0.5", "-Inf"))
        first = gate.check(_context("qa", FakeClock(0)))
        second = gate.check(_context("qa", FakeClock(0)))
    # one failure is tolerated (failureLimit 1), but a pass must end on a successful measurement
    assert (first.state, first.message) == (
        "pending",
        "1 measurement: 0 successful, 1 failed; waiting for a successful one; last result [NaN, +Inf]",
    )
    assert (second.state, second.message) == (
        "success",
        "2 measurements: 1 successful, 1 failed; last result [0.5, -Inf]",
    )


def test_a_range_vector_or_an_unreachable_server_is_an_error_measurement() -> None:
    gate = PrometheusGate.from_spec(
        {"address": "http://prom:9090", "query": "x[5m]", "successCondition": "true"}, SRC
    )
    matrix = {"status": "success", "data": {"resultType": "matrix", "result": []}}
    with responses.RequestsMock() as mock:
        mock.get("http://prom:9090/api/v1/query", json=matrix)
        observation = gate.check(_context("qa", FakeClock(0)))
    assert observation.message.endswith(
        "last error: the query gives a matrix; use an instant vector or a scalar"
    )
    down = PrometheusGate.from_spec(
        {"address": f"http://127.0.0.1:{_free_port()}", "query": "up", "successCondition": "true"}, SRC
    )
    observation = down.check(_context("qa", FakeClock(0)))
    assert observation.state == "pending"
    assert "last error: cannot reach http://127.0.0.1:" in observation.message
    assert "Connection refused" in observation.message


def test_initial_delay_waits_before_the_first_measurement() -> None:
    gate = PrometheusGate.from_spec(
        {"address": "http://prom:9090", "query": "up", "successCondition": "true", "initialDelay": "1m"}, SRC
    )
    clock = FakeClock(0)
    with responses.RequestsMock() as mock:
        assert gate.check(_context("qa", clock)).message == "initial delay: first measurement in 60s"
        clock.sleep(60)
        mock.get("http://prom:9090/api/v1/query", json=_vector("1"))
        assert gate.check(_context("qa", clock)).state == "success"
        assert len(mock.calls) == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"query": "up", "successCondition": "true"},
            "'address' must be a URL such as https://server.example.com",
        ),
        (
            {"address": "prometheus:9090", "query": "up", "successCondition": "true"},
            "'address' must be an http:// or https:// URL with a host, got 'prometheus:9090'",
        ),
        ({"address": "http://p:9090", "successCondition": "true"}, "missing required field 'query'"),
        (
            {"address": "http://p:9090", "query": "up"},
            "needs 'successCondition', 'failureCondition', or both",
        ),
        (
            {"address": "http://p:9090", "query": "up", "successCondition": "result[0] >="},
            "'successCondition' 'result[0] >=': at column 13: unexpected the end",
        ),
        (
            {"address": "http://p:9090", "query": "up", "failureCondition": "eval('1')"},
            "'failureCondition' \"eval('1')\": at column 1: unknown name 'eval' "
            "(known: result, true, false, len, abs, min, max, sum, isNaN, isInf, all, any)",
        ),
        (
            {"address": "http://p:9090", "query": 'up{rev="{{ sha }}"}', "successCondition": "true"},
            "'query' uses {{ sha }}; known: platformSha, commit, environment, platformBranch",
        ),
        (
            {"address": "http://p:9090", "query": "up", "successCondition": "true", "count": 0},
            "'count' must be a whole number of at least 1, got 0",
        ),
        (
            {"address": "http://p:9090", "query": "up", "successCondition": "true", "interval": "soon"},
            "'interval': expected a duration like 30s, 5m or 1h, got 'soon'",
        ),
        (
            {"address": "http://p:9090", "query": "up", "successCondition": "true", "provider": {}},
            "unknown field 'provider'",
        ),
    ],
)
def test_bad_specs_are_config_errors_naming_the_line(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        PrometheusGate.from_spec(spec, SRC)
    assert str(err.value) == f"promoter.yaml:21: gate prometheus: {message}"


def test_the_query_gets_the_promotion_quoted_for_promql() -> None:
    gate = PrometheusGate.from_spec(
        {
            "address": "http://p:9090",
            "query": 'x{env="{{environment}}", sha="{{ platformSha }}", main="{{ commit }}", b="{{ platformBranch }}"}',
            "successCondition": "true",
        },
        SRC,
    )
    ctx = GateContext("qa", "c" * 40, MERGE, "/platform", 'env/"qa"', FakeClock(0))
    assert gate.render_query(ctx) == f'x{{env="qa", sha="{MERGE}", main="{"c" * 40}", b="env/\\"qa\\""}}'
