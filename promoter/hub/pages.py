"""The hub's web pages: server-rendered HTML with no JavaScript, the rollout drawn as inline SVG
bars. Rendered with jinja2, autoescaped: every value a cluster sent is text, never markup."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

from jinja2 import DictLoader, Environment, select_autoescape
from markupsafe import Markup

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}table{border-collapse:collapse;margin:.5rem 0 1.5rem}
th,td{border:1px solid #ccc;padding:.25rem .6rem;text-align:left}th{background:#f3f3f3}
td.n{text-align:right;font-variant-numeric:tabular-nums}.success{color:#17692e}.failed,.failure{color:#b3261e}
.stale{color:#8a6d00}code{font-size:.9em}nav a{margin-right:1rem}
"""
_COLORS = {"success": "#2e9d4d", "failed": "#d64541", "pending": "#b0b0b0", "stale": "#e0b020"}

_BASE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{ title }} · promoter hub</title>
<style>{{ style }}</style></head><body><nav><a href="/">Environments</a><a href="/discrepancies">Discrepancies</a>
<a href="/drift">Drift</a><a href="/stale">Stale</a><a href="/history">History</a></nav><h1>{{ title }}</h1>
{% block body %}{% endblock %}<p><small>Rendered {{ now|when }}</small></p></body></html>"""

_ROLLOUT = """{% macro rollout_table(r) %}
<p>Rolling out <code>{{ r.commit[:12] }}</code>{% if r.mainCommit %} (main <code>{{ r.mainCommit[:12] }}</code>){% endif %}
 <a href="/rollout?environment={{ r.environment|q }}&commit={{ r.commit }}">details</a></p>
<table class="rollout"><tr><th>cluster type</th><th>total</th><th>success</th><th>failed</th><th>pending</th>
<th>stale</th><th>percent</th><th>progress</th></tr>
{% for t, c in r.clusterTypes.items() %}<tr data-cluster-type="{{ t }}"><td>{{ t }}</td><td class="n total">{{ c.total }}</td>
<td class="n success">{{ c.success }}</td><td class="n failed">{{ c.failed }}</td><td class="n pending">{{ c.pending }}</td>
<td class="n stale">{{ c.stale }}</td><td class="n percent">{{ c.percent }}%</td><td>{{ c|bar }}</td></tr>
{% else %}<tr><td colspan="8">no cluster registered</td></tr>{% endfor %}</table>{% endmacro %}"""

_TEMPLATES = {
    "environments": """{% extends "base" %}{% from "_macros" import rollout_table %}{% block body %}
{% for e in data %}<section><h2><a href="/environments/{{ e.environment|q }}">{{ e.environment }}</a></h2>
{% if e.rollout %}{{ rollout_table(e.rollout) }}{% else %}<p>No platform commit recorded yet.</p>{% endif %}</section>
{% else %}<p>No environment yet: record a platform commit or register a cluster (docs/hub.md).</p>{% endfor %}
{% endblock %}""",
    "environment": """{% extends "base" %}{% from "_macros" import rollout_table %}{% block body %}
{% if data.rollout %}{{ rollout_table(data.rollout) }}{% endif %}
<h2>Scheduled and deployed</h2><table class="targets"><tr><th>cluster type</th><th>deployment target</th>
<th>deployed on</th></tr>{% for t in data.targets %}<tr><td>{{ t.clusterType }}</td><td>{{ t.deploymentTarget }}</td>
<td class="n">{{ t.deployed }} of {{ t.clusters }}</td></tr>{% else %}<tr><td colspan="3">nothing scheduled</td></tr>
{% endfor %}</table><h2>Clusters</h2><table class="clusters"><tr><th>cluster</th><th>type</th><th>platform commit</th>
<th>behind</th><th>failing</th><th>last seen</th></tr>{% for c in data.clusters %}
<tr><td><a href="/clusters/{{ c.name|q }}">{{ c.name }}</a></td><td>{{ c.clusterType }}</td>
<td><code>{{ (c.commit or 'none')[:12] }}</code></td><td class="n">{{ c.behind if c.behind is not none else '?' }}</td>
<td class="n">{{ c.failingReconcilers }}</td><td class="{{ 'stale' if c.stale }}">{{ c.lastSeen|when }}</td></tr>
{% endfor %}</table>{% endblock %}""",
    "cluster": """{% extends "base" %}{% block body %}
<p>Environment <a href="/environments/{{ data.environment|q }}">{{ data.environment }}</a>, cluster type
{{ data.clusterType }}; at <code>{{ (data.commit or 'none')[:12] }}</code>{% if data.behind %}, {{ data.behind }}
behind the head{% endif %}; last seen <span class="{{ 'stale' if data.stale }}">{{ data.lastSeen|when }}</span>.</p>
<h2>Reconcilers</h2><table class="reconcilers"><tr><th>reconciler</th><th>state</th><th>revision</th><th>reason</th>
<th>message</th><th>reported</th></tr>{% for r in data.reconcilerStates %}<tr><td>{{ r.name }}</td>
<td class="{{ r.state }}">{{ r.state }}</td><td><code>{{ r.revision[:12] }}</code></td><td>{{ r.reason }}</td>
<td>{{ r.message[:200] }}</td><td>{{ r.receivedAt|when }}</td></tr>{% endfor %}</table>
<h2>History</h2><table class="history"><tr><th>received</th><th>reconciler</th><th>state</th><th>revision</th>
<th>reason</th></tr>{% for h in data.history %}<tr><td>{{ h.receivedAt|when }}</td><td>{{ h.reconciler }}</td>
<td class="{{ h.state }}">{{ h.state }}</td><td><code>{{ h.revision[:12] }}</code></td><td>{{ h.reason }}</td></tr>
{% endfor %}</table>{% endblock %}""",
    "table": """{% extends "base" %}{% block body %}{% if data %}<table class="list"><tr>
{% for k in data[0].keys() %}<th>{{ k }}</th>{% endfor %}</tr>{% for row in data %}<tr>{% for k, v in row.items() %}
<td>{% if k in ('name', 'cluster') %}<a href="/clusters/{{ v|q }}">{{ v }}</a>{% elif k in ('environment', 'upstream',
'downstream') %}<a href="/environments/{{ v|q }}">{{ v }}</a>{% elif k in ('lastSeen', 'receivedAt', 'eventTime') %}{{ v|when }}
{% elif v is string and v|length == 40 %}<code>{{ v[:12] }}</code>{% else %}{{ v if v is not none else '' }}{% endif %}</td>
{% endfor %}</tr>{% endfor %}</table>{% else %}<p>None.</p>{% endif %}{% endblock %}""",
    "rollout": """{% extends "base" %}{% from "_macros" import rollout_table %}{% block body %}
{{ rollout_table(data) }}<h2>Time to each percent of the fresh clusters</h2><table class="times"><tr><th>cluster type</th>
{% for p in ['25', '50', '75', '90', '100'] %}<th>{{ p }}%</th>{% endfor %}</tr>{% for t, c in data.clusterTypes.items() %}
<tr><td>{{ t }}</td>{% for p in ['25', '50', '75', '90', '100'] %}<td class="n">{{ c.timeToPercent[p]|seconds }}</td>
{% endfor %}</tr>{% endfor %}</table>{% endblock %}""",
}


def _bar(counts: dict[str, Any], width: int = 240) -> str:
    """A stacked bar of success, failed, pending and stale clusters, as inline SVG."""
    total = counts.get("total") or 0
    parts, x = [], 0.0
    for state, color in _COLORS.items():
        n = counts.get(state) or 0
        if not total or not n:
            continue
        w = width * n / total
        parts.append(
            f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="14" fill="{color}"><title>{n} {state}</title></rect>'
        )
        x += w
    outline = f'<rect x="0" y="0" width="{width}" height="14" fill="none" stroke="#999"/>'
    label = f"{counts.get('success', 0)} of {total} clusters succeeded"
    return f'<svg width="{width}" height="14" role="img" aria-label="{label}">{"".join(parts)}{outline}</svg>'


def _when(value: Any) -> str:
    if not isinstance(value, int | float):
        return "never"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(value))


def _seconds(value: Any) -> str:
    if not isinstance(value, int | float):
        return "-"
    minutes, seconds = divmod(int(value), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


def _environment() -> Environment:
    loader_map = {"base": _BASE, "_macros": _ROLLOUT, **_TEMPLATES}
    env = Environment(
        loader=DictLoader(loader_map), autoescape=select_autoescape(default=True, default_for_string=True)
    )
    env.filters.update(
        {
            "bar": lambda c: Markup(_bar(c)),
            "when": _when,
            "seconds": _seconds,
            "q": lambda v: quote(str(v), safe=""),
        }
    )
    return env


_ENV: Environment | None = None
_TITLES = {
    "environments": "Environments",
    "environment": "Environment {}",
    "cluster": "Cluster {}",
    "rollout": "Rollout in {}",
    "history": "History",
    "discrepancies": "Discrepancies between environments",
    "drift": "Clusters not at their environment's head",
    "stale": "Stale clusters",
}
#: The reads shown as one plain table.
_TABLES = ("history", "discrepancies", "drift", "stale")


def render(name: str, data: Any, now: float) -> str:
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    subject = (
        data.get("environment" if name in ("environment", "rollout") else "name", "")
        if isinstance(data, dict)
        else ""
    )
    title = _TITLES[name].format(subject)
    template = "table" if name in _TABLES else name
    return _ENV.get_template(template).render(data=data, title=title, now=now, style=_STYLE)


def not_found(message: str) -> str:
    env = _ENV or _environment()
    page = env.from_string("{% extends 'base' %}{% block body %}<p>{{ message }}</p>{% endblock %}")
    return page.render(title="Not found", message=message, now=time.time(), style=_STYLE)
