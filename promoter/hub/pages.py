"""The hub's web pages: server-rendered HTML with no JavaScript, the rollout drawn as inline SVG
bars. Rendered with jinja2, autoescaped: every value a cluster sent is text, never markup.

Every table has one header row and its own columns; every cell is formatted for a reader (a
time, a short commit linked to the platform repo when its URL is a web page, a state, "yes"),
never a raw value of Python's; the tables fit a 1400-pixel window (long texts wrap)."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

from jinja2 import DictLoader, Environment, select_autoescape
from markupsafe import Markup

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.2rem 1.5rem;color:#222;max-width:1360px}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;max-width:100%}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}th{background:#f3f3f3;white-space:nowrap}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.t{white-space:nowrap;font-variant-numeric:tabular-nums}
td.msg{min-width:14rem;max-width:34rem;overflow-wrap:anywhere;font-size:.92em}td.name{white-space:nowrap}
td.rec{max-width:18rem}td.via{white-space:nowrap}
.success{color:#17692e}.failed,.failure{color:#b3261e}.pending,.progressing{color:#555}.stale{color:#8a6d00}
code{font-size:.9em}nav a{margin-right:1rem}p.head{margin:.3rem 0}small.muted{color:#666}
"""
_COLORS = {"success": "#2e9d4d", "failed": "#d64541", "pending": "#b0b0b0", "stale": "#e0b020"}
_SENDERS = {"flux": "Flux", "argocd": "Argo CD", "native": "native"}

_BASE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{ title }} · promoter hub</title>
<style>{{ style }}</style></head><body><nav><a href="/">Environments</a><a href="/discrepancies">Discrepancies</a>
<a href="/drift">Drift</a><a href="/stale">Stale</a><a href="/history">History</a></nav><h1>{{ title }}</h1>
{% block body %}{% endblock %}<p><small class="muted">Rendered {{ now|when }}</small></p></body></html>"""

_MACROS = """{% macro head_line(e, h, r) %}<p class="head">Head {{ h.commit|commit(e, repos) }}{% if h.mainCommit %}
(main <code>{{ h.mainCommit[:12] }}</code>){% endif %}, recorded {{ h.recordedAt|when }}.
{% if h.runningSince %}<span class="success">Running on {{ 'all' if not r|count('stale') }} {{ r|successes }} cluster{{ 's' if r|successes != 1 }} since {{ h.runningSince|when }}</span>{% if r|count('stale') %};
<span class="stale">{{ r|count('stale') }} stale</span>{% endif %}.
{% elif r %}<span class="pending">Rolling out since {{ h.recordedAt|when }}</span>:
{{ r|successes }} of {{ r|totals }} clusters run it{% if r|count('failed') %}, <span class="failed">{{ r|count('failed') }} failed</span>{% endif %}{% if r|count('stale') %},
<span class="stale">{{ r|count('stale') }} stale</span>{% endif %}.{% endif %}</p>{% endmacro %}
{% macro rollout_table(r) %}
<table class="rollout"><tr><th>cluster type</th><th class="n">total</th><th class="n">success</th>
<th class="n">failed</th><th class="n">pending</th><th class="n">stale</th><th class="n">percent</th><th>progress</th></tr>
{% for t, c in r.clusterTypes.items() %}<tr data-cluster-type="{{ t }}"><td>{{ t }}</td><td class="n total">{{ c.total }}</td>
<td class="n success">{{ c.success }}</td><td class="n failed">{{ c.failed }}</td><td class="n pending">{{ c.pending }}</td>
<td class="n stale">{{ c.stale }}</td><td class="n percent">{{ c.percent }}%</td><td>{{ c|bar }}</td></tr>
{% else %}<tr><td colspan="8">no cluster registered</td></tr>{% endfor %}</table>{% endmacro %}
{% macro clusters_table(rows, repos) %}<table class="clusters"><tr><th>cluster</th><th>type</th><th>via</th>
<th>state at head</th><th>platform commit</th><th class="n">behind</th><th>failing since (UTC)</th><th>failing</th>
<th>last seen (UTC)</th></tr>{% for c in rows %}<tr data-cluster="{{ c.name }}"><td class="name"><a href="/clusters/{{ c.name|q }}">{{ c.name }}</a></td>
<td class="name">{{ c.clusterType }}</td><td class="via">{{ c.senders|senders }}</td>
<td class="state {{ c.state or '' }}">{{ c.state or '-' }}</td><td>{{ c.commit|commit(c.environment, repos) }}</td>
<td class="n">{{ c.behind if c.behind is not none else '-' }}</td><td class="t">{{ c.failingSince|stamp }}</td>
<td class="msg">{% if c.failingReconciler %}<b>{{ c.failingReconciler }}</b>{% if c.failingReconcilers > 1 %}
(and {{ c.failingReconcilers - 1 }} more){% endif %}: {{ (c.failingMessage or '')[:240] }}{% endif %}</td>
<td class="t {{ 'stale' if c.stale }}">{{ c.lastSeen|stamp }}</td></tr>
{% else %}<tr><td colspan="9">no cluster registered</td></tr>{% endfor %}</table>{% endmacro %}
{% macro drift_table(rows, repos) %}<table class="drift"><tr><th>cluster</th><th>environment</th><th>type</th>
<th>platform commit</th><th class="n">commits behind</th><th>stale</th></tr>{% for d in rows %}<tr>
<td class="name"><a href="/clusters/{{ d.name|q }}">{{ d.name }}</a></td>
<td><a href="/environments/{{ d.environment|q }}">{{ d.environment }}</a></td><td>{{ d.clusterType }}</td>
<td>{{ d.commit|commit(d.environment, repos) }}</td><td class="n">{{ d.behind if d.behind is not none else 'no platform commit' }}</td>
<td class="{{ 'stale' if d.stale }}">{{ 'yes' if d.stale else 'no' }}</td></tr>
{% else %}<tr><td colspan="6">Every cluster is at its environment's head.</td></tr>{% endfor %}</table>{% endmacro %}"""

_TEMPLATES = {
    "environments": """{% extends "base" %}{% from "_macros" import rollout_table, head_line with context %}{% block body %}
{% for e in data %}<section><h2><a href="/environments/{{ e.environment|q }}">{{ e.environment }}</a></h2>
{% if e.head %}{{ head_line(e.environment, e.head, e.rollout) }}{{ rollout_table(e.rollout) }}
{% else %}<p>No platform commit recorded yet.</p>{% endif %}</section>
{% else %}<p>No environment yet: record a platform commit or register a cluster (docs/hub.md).</p>{% endfor %}
{% endblock %}""",
    "environment": """{% extends "base" %}{% from "_macros" import rollout_table, head_line, clusters_table with context %}{% block body %}
{% if data.head %}{{ head_line(data.environment, data.head, data.rollout) }}{{ rollout_table(data.rollout) }}
<p><a href="/rollout?environment={{ data.environment|q }}&amp;commit={{ data.head.commit }}">Time to each percent</a></p>{% endif %}
<h2>Scheduled and running</h2><table class="targets"><tr><th>cluster type</th><th>deployment target</th>
<th class="n">running the head</th></tr>{% for t in data.targets %}<tr><td>{{ t.clusterType }}</td><td>{{ t.deploymentTarget }}</td>
<td class="n">{{ t.deployed }} of {{ t.clusters }}</td></tr>{% else %}<tr><td colspan="3">nothing scheduled</td></tr>
{% endfor %}</table><h2>Clusters</h2>{{ clusters_table(data.clusters, repos) }}{% endblock %}""",
    "cluster": """{% extends "base" %}{% block body %}
<p>Environment <a href="/environments/{{ data.environment|q }}">{{ data.environment }}</a>, cluster type
{{ data.clusterType }}, reported by {{ data.senders|senders }}. State at the head:
<span class="{{ data.state or '' }}">{{ data.state or '-' }}</span>; at {{ data.commit|commit(data.environment, repos) }}
{%- if data.behind %}, {{ data.behind }} commit{{ 's' if data.behind > 1 }} behind the head{% endif %};
last seen <span class="{{ 'stale' if data.stale }}">{{ data.lastSeen|when }}</span>.
{% if data.failingSince %}<br><span class="failed">Failing since {{ data.failingSince|when }}</span>:
<b>{{ data.failingReconciler }}</b>: {{ (data.failingMessage or '')[:400] }}{% endif %}</p>
<h2>Reconcilers</h2><table class="reconcilers"><tr><th>reconciler</th><th>via</th><th>state</th><th>revision</th>
<th>reason</th><th>message</th><th>last report (UTC)</th></tr>{% for r in data.reconcilerStates %}<tr><td class="rec">{{ r.name|breakable }}</td>
<td class="via">{{ [r.source]|senders }}</td><td class="{{ r.state }}">{{ r.state }}{% if r.failingSince %}<br><small>since {{ r.failingSince|stamp }}</small>{% endif %}</td>
<td>{{ r.revision|commit(data.environment, repos) }}</td><td>{{ r.reason }}</td><td class="msg">{{ r.message[:400] }}</td>
<td class="t">{{ r.receivedAt|stamp }}</td></tr>{% else %}<tr><td colspan="7">no report yet</td></tr>{% endfor %}</table>
<h2>History</h2><table class="history"><tr><th>received (UTC)</th><th>reconciler</th><th>state</th><th>revision</th>
<th>reason</th><th>message</th></tr>{% for h in data.history %}<tr><td class="t">{{ h.receivedAt|stamp }}</td><td class="rec">{{ h.reconciler|breakable }}</td>
<td class="{{ h.state }}">{{ h.state }}</td><td>{{ h.revision|commit(data.environment, repos) }}</td><td>{{ h.reason }}</td>
<td class="msg">{{ h.message[:240] }}</td></tr>{% else %}<tr><td colspan="6">no history</td></tr>{% endfor %}</table>{% endblock %}""",
    "rollout": """{% extends "base" %}{% from "_macros" import rollout_table with context %}{% block body %}
<p class="head">Platform commit {{ data.commit|commit(data.environment, repos) }}{% if data.mainCommit %}
(main <code>{{ data.mainCommit[:12] }}</code>){% endif %}, recorded {{ data.recordedAt|when }}.</p>
{{ rollout_table(data) }}<h2>Time to each percent of the fresh clusters</h2><table class="times"><tr><th>cluster type</th>
{% for p in ['25', '50', '75', '90', '100'] %}<th class="n">{{ p }}%</th>{% endfor %}</tr>{% for t, c in data.clusterTypes.items() %}
<tr><td>{{ t }}</td>{% for p in ['25', '50', '75', '90', '100'] %}<td class="n">{{ c.timeToPercent[p]|seconds }}</td>
{% endfor %}</tr>{% endfor %}</table>{% endblock %}""",
    "history": """{% extends "base" %}{% block body %}<table class="history"><tr><th>received (UTC)</th><th>cluster</th>
<th>environment</th><th>via</th><th>reconciler</th><th>state</th><th>revision</th><th>reason</th><th>message</th></tr>
{% for h in data %}<tr><td class="t">{{ h.receivedAt|stamp }}</td><td class="name"><a href="/clusters/{{ h.cluster|q }}">{{ h.cluster }}</a></td>
<td><a href="/environments/{{ h.environment|q }}">{{ h.environment }}</a></td><td class="via">{{ [h.source]|senders }}</td>
<td class="rec">{{ h.reconciler|breakable }}</td><td class="{{ h.state }}">{{ h.state }}</td><td>{{ h.revision|commit(h.environment, repos) }}</td>
<td>{{ h.reason }}</td><td class="msg">{{ h.message[:200] }}</td></tr>
{% else %}<tr><td colspan="9">No report yet.</td></tr>{% endfor %}</table>{% endblock %}""",
    "discrepancies": """{% extends "base" %}{% from "_macros" import drift_table with context %}{% block body %}
<h2>Between environments</h2><table class="promotions"><tr><th>environment</th><th>main commit it runs</th><th>next environment</th>
<th>main commit it runs</th></tr>{% for d in data if d.kind == 'promotion' %}<tr>
<td><a href="/environments/{{ d.upstream|q }}">{{ d.upstream }}</a></td><td><code>{{ (d.upstreamMainCommit or '-')[:12] }}</code></td>
<td><a href="/environments/{{ d.downstream|q }}">{{ d.downstream }}</a></td><td><code>{{ (d.downstreamMainCommit or '-')[:12] }}</code></td></tr>
{% else %}<tr><td colspan="4">Each environment runs what the one before it runs.</td></tr>{% endfor %}</table>
<h2>Clusters not at their environment's head</h2>{{ drift_table(data | selectattr('kind', 'equalto', 'drift') | list, repos) }}
{% endblock %}""",
    "drift": """{% extends "base" %}{% from "_macros" import drift_table with context %}{% block body %}{{ drift_table(data, repos) }}{% endblock %}""",
    "stale": """{% extends "base" %}{% block body %}<table class="stale-clusters"><tr><th>cluster</th><th>environment</th><th>type</th>
<th>last seen (UTC)</th></tr>{% for s in data %}<tr><td class="name"><a href="/clusters/{{ s.name|q }}">{{ s.name }}</a></td>
<td><a href="/environments/{{ s.environment|q }}">{{ s.environment }}</a></td><td>{{ s.clusterType }}</td>
<td class="t stale">{{ s.lastSeen|stamp }}</td></tr>{% else %}<tr><td colspan="4">No stale cluster.</td></tr>{% endfor %}
</table>{% endblock %}""",
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


def _when(value: Any, never: str = "never") -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return never
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(value))


def _stamp(value: Any) -> str:
    """A time in a table cell (the header says UTC), or a dash."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(value))


def _count(progress: dict[str, Any], state: str) -> int:
    return sum(int(c[state]) for c in progress["clusterTypes"].values())


def _breakable(value: Any) -> Markup:
    """A reconciler's name, allowed to wrap after each ``/`` only (never inside a name)."""
    return Markup("/<wbr>").join(str(value).split("/"))


def _seconds(value: Any) -> str:
    if not isinstance(value, int | float):
        return "-"
    minutes, seconds = divmod(int(value), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


def _commit(value: Any, environment: str | None = None, repos: dict[str, str] | None = None) -> Markup:
    """A revision, short: a 40-hex commit as 12 characters, linked to the platform repo's page of
    it when the environment's repo URL is a web address; anything else (a chart version, an OCI
    digest) as text; none as a dash."""
    if not value:
        return Markup("-")
    text = str(value)
    repo = (repos or {}).get(environment or "")
    if len(text) == 40 and all(c in "0123456789abcdef" for c in text):
        short = Markup("<code>{}</code>").format(text[:12])
        if repo:
            return Markup('<a href="{}/commit/{}" title="{}">{}</a>').format(repo, text, text, short)
        return Markup('<code title="{}">{}</code>').format(text, text[:12])
    return Markup("<code>{}</code>").format(text if len(text) <= 24 else text[:21] + "...")


def _senders(values: Any) -> str:
    names = [_SENDERS.get(str(v), str(v)) for v in values or []]
    return ", ".join(names) or "-"


def _environment() -> Environment:
    loader_map = {"base": _BASE, "_macros": _MACROS, **_TEMPLATES}
    env = Environment(
        loader=DictLoader(loader_map), autoescape=select_autoescape(default=True, default_for_string=True)
    )
    env.filters.update(
        {
            "bar": lambda c: Markup(_bar(c)),
            "when": _when,
            "seconds": _seconds,
            "q": lambda v: quote(str(v), safe=""),
            "commit": _commit,
            "senders": _senders,
            "successes": lambda r: _count(r, "success"),
            "count": _count,
            "stamp": _stamp,
            "breakable": _breakable,
            "totals": lambda r: sum(c["total"] for c in r["clusterTypes"].values()),
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


def render(name: str, data: Any, now: float, repos: dict[str, str] | None = None) -> str:
    """The page of read ``name``; ``repos`` maps an environment to its platform repo's web page."""
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    subject = (
        data.get("environment" if name in ("environment", "rollout") else "name", "")
        if isinstance(data, dict)
        else ""
    )
    title = _TITLES[name].format(subject)
    page = _ENV.get_template(name)
    return page.render(data=data, title=title, now=now, style=_STYLE, repos=repos or {})


def not_found(message: str) -> str:
    env = _ENV or _environment()
    page = env.from_string("{% extends 'base' %}{% block body %}<p>{{ message }}</p>{% endblock %}")
    return page.render(title="Not found", message=message, now=time.time(), style=_STYLE)
