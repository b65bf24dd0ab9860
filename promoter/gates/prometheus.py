"""The ``prometheus`` gate: measurements of a PromQL query, judged as Argo Rollouts' analysis does.

Every ``interval`` the gate runs an instant query (``GET /api/v1/query``) and turns the answer
into ``result``: a list of the sample values for a vector, a number for a scalar, the text for
a string. Each measurement is then

- **successful** or **failed** by the conditions: with only ``successCondition``, false means
  failed; with only ``failureCondition``, false means successful; with both, neither true means
- **inconclusive**;
- an **error** when the query or the condition cannot be evaluated (server down, bad PromQL,
  ``result[0]`` of an empty vector).

The gate fails as soon as failed measurements exceed ``failureLimit``, inconclusive ones exceed
``inconclusiveLimit``, or errors in a row exceed ``consecutiveErrorLimit``; it passes once
``count`` measurements (errors not counted) are taken within those limits and the last one was
successful (a tolerated failure is never the final word). The query may use
``{{ platformSha }}``, ``{{ commit }}``, ``{{ environment }}`` and ``{{ platformBranch }}``, so
that it selects the promoted revision's series and not an older one's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from promoter.controlplane.fields import Fields, GateFields
from promoter.gates.base import Gate, GateContext, Observation
from promoter.gates.expression import EvaluationError, Expression, ExpressionError, parse, show
from promoter.gates.http import Endpoint, HttpProblem, check_base_url
from promoter.masking import mask
from promoter.model import Source

Phase = Literal["successful", "failed", "inconclusive", "error"]
VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
VARIABLES = ("platformSha", "commit", "environment", "platformBranch")
DEFAULT_TOKEN_ENV = "PROMOTER_PROMETHEUS_TOKEN"


@dataclass(frozen=True)
class Analysis:
    """How measurements are judged (the AnalysisTemplate metric's fields)."""

    success: Expression | None
    failure: Expression | None
    count: int = 1
    failure_limit: int = 0
    inconclusive_limit: int = 0
    consecutive_error_limit: int = 4

    def phase(self, result: Any) -> Phase:
        """One measurement's phase; EvaluationError when a condition cannot be evaluated."""
        if self.failure is not None and self.failure.evaluate(result):
            return "failed"
        if self.success is not None:
            if self.success.evaluate(result):
                return "successful"
            return "inconclusive" if self.failure is not None else "failed"
        return "successful"


@dataclass
class Tally:
    successful: int = 0
    failed: int = 0
    inconclusive: int = 0
    errors: int = 0
    consecutive_errors: int = 0
    last: str = ""
    last_phase: str = ""
    started_at: float | None = None

    @property
    def measured(self) -> int:
        return self.successful + self.failed + self.inconclusive


class PrometheusGate(Gate):
    type = "prometheus"

    def __init__(
        self,
        endpoint: Endpoint,
        query: str,
        analysis: Analysis,
        *,
        interval: float,
        initial_delay: float,
        source: Source,
    ) -> None:
        super().__init__(source, interval)
        self.endpoint = endpoint
        self.query = query
        self.analysis = analysis
        self.initial_delay = initial_delay
        self.tally = Tally()

    @classmethod
    def from_spec(cls, spec: Any, source: Source) -> PrometheusGate:
        f = GateFields(cls.type, spec, source)
        address = f.any("address")
        problem = check_base_url(address)
        if problem:
            f.problem("address", problem)
        query = _query(f)
        analysis = _analysis(f)
        endpoint = Endpoint(
            address.strip(),
            token_env=f.text("tokenEnv", DEFAULT_TOKEN_ENV),
            ca_file=f.text("caFile"),
            insecure=f.flag("insecure", False),
            timeout=f.duration("timeout", "30s"),
        )
        interval = f.duration("interval", "30s")
        initial_delay = f.duration("initialDelay", "0s", positive=False)
        f.done()
        return cls(endpoint, query, analysis, interval=interval, initial_delay=initial_delay, source=source)

    def describe(self) -> str:
        condition = self.analysis.success or self.analysis.failure
        assert condition is not None
        text = " ".join(condition.text.split())
        text = text if len(text) <= 60 else text[:57] + "..."
        return f"prometheus {text}" + (f" x{self.analysis.count}" if self.analysis.count > 1 else "")

    def check(self, ctx: GateContext) -> Observation:
        tally = self.tally
        now = ctx.clock.now()
        if tally.started_at is None:
            tally.started_at = now
        if now < tally.started_at + self.initial_delay:
            left = tally.started_at + self.initial_delay - now
            return Observation("pending", f"initial delay: first measurement in {left:.0f}s")
        self._measure(ctx)
        return self._assess()

    def render_query(self, ctx: GateContext) -> str:
        values = {
            "platformSha": ctx.platform_sha,
            "commit": ctx.commit,
            "environment": ctx.environment,
            "platformBranch": ctx.platform_branch,
        }
        # Escaped for a PromQL string literal, where these values go.
        return VARIABLE.sub(
            lambda m: values[m.group(1)].replace("\\", "\\\\").replace('"', '\\"'), self.query
        )

    def _measure(self, ctx: GateContext) -> None:
        tally = self.tally
        try:
            result = self.fetch(self.render_query(ctx))
            phase = self.analysis.phase(result)
            tally.last = f"result {show(result)}"
        except (HttpProblem, EvaluationError) as err:
            phase, tally.last = "error", f"error: {err}"
        tally.last_phase = phase
        if phase == "error":
            tally.errors += 1
            tally.consecutive_errors += 1
            return
        tally.consecutive_errors = 0
        if phase == "successful":
            tally.successful += 1
        elif phase == "failed":
            tally.failed += 1
        else:
            tally.inconclusive += 1

    def fetch(self, query: str) -> Any:
        """``result`` for one instant query: a list of floats, a float, or a string."""
        body = self.endpoint.get("/api/v1/query", {"query": query}, token=self.endpoint.token())
        if not isinstance(body, dict) or body.get("status") != "success":
            raise HttpProblem(f"Prometheus answered {str(body)[:200]}")
        data = body.get("data") or {}
        kind = data.get("resultType")
        value: Any = data.get("result")
        try:
            if kind == "vector":
                return [_float(sample["value"][1]) for sample in value]
            if kind == "scalar":
                return _float(value[1])
            if kind == "string":
                return str(value[1])
        except (TypeError, KeyError, IndexError, ValueError) as err:
            raise HttpProblem(f"cannot read the {kind} result: {err}") from err
        raise HttpProblem(f"the query gives a {kind}; use an instant vector or a scalar")

    def _assess(self) -> Observation:
        a, t = self.analysis, self.tally
        counts = f"{t.successful} successful, {t.failed} failed" + (
            f", {t.inconclusive} inconclusive" if t.inconclusive else ""
        )
        if t.failed > a.failure_limit:
            return self._obs(
                "failure", f"{_count(t.failed, 'failed measurement')} > failureLimit {a.failure_limit}"
            )
        if t.inconclusive > a.inconclusive_limit:
            return self._obs(
                "failure", f"inconclusive: {t.inconclusive} > inconclusiveLimit {a.inconclusive_limit}"
            )
        if t.consecutive_errors > a.consecutive_error_limit:
            return self._obs(
                "failure",
                f"{t.consecutive_errors} errors in a row > consecutiveErrorLimit {a.consecutive_error_limit}",
            )
        if t.measured >= a.count and t.last_phase == "successful":
            return self._obs("success", f"{_count(t.measured, 'measurement')}: {counts}")
        if t.measured >= a.count:  # within the limits, but a pass must end on a good measurement
            return self._obs(
                "pending", f"{_count(t.measured, 'measurement')}: {counts}; waiting for a successful one"
            )
        return self._obs("pending", f"{t.measured} of {a.count} measurements: {counts}")

    def _obs(self, state: Literal["success", "failure", "pending"], text: str) -> Observation:
        return Observation(state, mask(f"{text}; last {self.tally.last}"))


def _query(f: GateFields) -> str:
    """The PromQL query, whose ``{{ variables }}`` must each be one the gate fills in."""
    query = f.text("query", required=True)
    assert query is not None
    unknown = [v for v in VARIABLE.findall(query) if v not in VARIABLES]
    if unknown:
        f.fail(f"'query' uses {{{{ {unknown[0]} }}}}; known: {', '.join(VARIABLES)}")
    return query


def _analysis(f: GateFields) -> Analysis:
    """How the query's results are judged: its conditions (one at least) and limits."""
    conditions = {key: _condition(f, key) for key in ("successCondition", "failureCondition")}
    if not any(conditions.values()):
        f.fail("needs 'successCondition', 'failureCondition', or both")
    return Analysis(
        conditions["successCondition"],
        conditions["failureCondition"],
        count=f.integer("count", 1, minimum=1) or 1,
        failure_limit=f.integer("failureLimit", 0) or 0,
        inconclusive_limit=f.integer("inconclusiveLimit", 0) or 0,
        consecutive_error_limit=f.integer("consecutiveErrorLimit", 4) or 0,
    )


def _condition(f: Fields, key: str) -> Expression | None:
    text = f.text(key)
    if text is None:
        return None
    try:
        return parse(text)
    except ExpressionError as err:
        f.problem(key, f"{text!r}: {err}")


def _float(text: Any) -> float:
    if not isinstance(text, str):
        raise ValueError(f"a sample value must be a string, got {text!r}")
    return float(text)  # Prometheus sends "NaN", "+Inf" and "-Inf", which float() reads


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
