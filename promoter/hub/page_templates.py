"""The pages' jinja2 templates, style and refresh script (rendered by ``promoter.hub.pages``).

Each page names its state with a badge (healthy, progressing, failed, stale, held), says its
filters, links back up (Environments > environment > cluster), fits 390 pixels (wide tables
scroll inside their box, never the page), and refreshes its ``<main>`` every few seconds with
a dozen lines of plain JavaScript (``?refresh=0`` stops it; without JavaScript it is a page)."""

from __future__ import annotations

STYLE = """
*{box-sizing:border-box}body{font-family:system-ui,sans-serif;margin:1rem 1.5rem;color:#222;max-width:1360px}
table{border-collapse:collapse;margin:.4rem 0 1.2rem}.scroll{overflow-x:auto;max-width:100%}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}th{background:#f3f3f3;white-space:nowrap}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.t{white-space:nowrap;font-variant-numeric:tabular-nums}
td.msg{min-width:14rem;max-width:34rem;overflow-wrap:anywhere;font-size:.92em}td.name{white-space:nowrap}
td.rec{max-width:18rem}td.via{white-space:nowrap}
.success,.healthy{color:#17692e}.failed,.failure{color:#b3261e}.pending,.progressing{color:#555}.stale{color:#8a6d00}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:.8rem;font-size:.78rem;font-weight:600;color:#fff;
vertical-align:middle;letter-spacing:.02em}.badge.healthy{background:#2e7d32}.badge.progressing{background:#5f6b7a}
.badge.failed{background:#c62828}.badge.stale{background:#9a7400}.badge.held{background:#6a1b9a}
code{font-size:.9em}nav{display:flex;flex-wrap:wrap;gap:.3rem 1rem;margin-bottom:.4rem}p.head{margin:.3rem 0}
small.muted,.abs,p.crumbs,p.filters{color:#666}p.crumbs{margin:.2rem 0}h1{margin:.4rem 0;font-size:1.6rem}
h2{margin:1rem 0 .3rem;font-size:1.25rem}ul.failing{margin:.3rem 0 .6rem;padding-left:1.2rem}
ul.failing li,ul.holds li{margin:.2rem 0;overflow-wrap:anywhere}ul.holds{margin:.3rem 0 .6rem;padding-left:1.2rem}p.graph .tier{white-space:nowrap}p.follows{margin:.2rem 0}section.env{border-top:1px solid #ddd;padding-top:.2rem}
@media (max-width:640px){body{margin:.6rem .7rem}h1{font-size:1.3rem}td.msg{min-width:12rem}}
"""

SCRIPT = """(function(){var q=new URLSearchParams(location.search),every=parseFloat(q.get("refresh")||"5");
var note=document.getElementById("live");if(!(every>0)||!note||!window.fetch)return;
note.textContent="Refreshes every "+every+" s";
function tick(){if(document.hidden)return;fetch(location.href,{cache:"no-store",credentials:"same-origin"})
.then(function(r){if(!r.ok)throw new Error("HTTP "+r.status);return r.text()})
.then(function(t){var d=new DOMParser().parseFromString(t,"text/html"),m=d.querySelector("main");
if(m){document.querySelector("main").innerHTML=m.innerHTML;document.title=d.title}
note.textContent="Refreshes every "+every+" s"})
.catch(function(e){note.textContent="Refresh failed ("+e.message+"); retrying every "+every+" s"})}
setInterval(tick,every*1000)})();"""

BASE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{{ title }} · promoter hub</title>
<style>{{ style }}</style></head><body><nav><a href="/">Environments</a><a href="/failing">Failing</a>
<a href="/delivery">Delivery</a><a href="/discrepancies">Discrepancies</a><a href="/drift">Drift</a><a href="/stale">Stale</a>
<a href="/history">History</a></nav><main>{% if crumbs %}<p class="crumbs">{% for href, text in crumbs %}<a href="{{ href }}">{{ text }}</a> ›
{% endfor %}{{ title }}</p>{% endif %}<h1>{{ title }}</h1>{% block body %}{% endblock %}
<p><small class="muted">Rendered {{ now|when }}; a cluster silent for {{ stale_after|duration }} is stale.
<span id="live">Reload for the latest.</span></small></p></main><script>{{ script }}</script></body></html>"""

MACROS = """{% macro badge(state) %}<span class="badge {{ state }}">{{ state }}</span>{% endmacro %}
{% macro head_line(e, h, r, state) %}<p class="head">Head {{ h.commit|commit(e, repos) }}{% if h.mainCommit %}
(main <code>{{ h.mainCommit[:12] }}</code>){% endif %}, recorded {{ h.recordedAt|ago }}.
{% if state == 'failed' %}<span class="failed">Failed: {{ r|count('failed') }} of {{ r|totals }} cluster{{ 's' if r|totals != 1 }}
failed{% if h.runningSince %} after running it{% endif %}</span>; {{ r|successes }} run{{ 's' if r|successes == 1 }} it{% if r|count('stale') %},
<span class="stale">{{ r|count('stale') }} stale</span>{% endif %}.
{% elif h.runningSince %}<span class="success">Running on {{ 'all' if not r|count('stale') }} {{ r|successes }} cluster{{ 's' if r|successes != 1 }} since {{ h.runningSince|ago }}</span>{% if r|count('stale') %};
<span class="stale">{{ r|count('stale') }} stale</span>{% endif %}.
{% elif state == 'progressing' %}<span class="pending">Rolling out since {{ h.recordedAt|ago }}</span>:
{{ r|successes }} of {{ r|totals }} clusters run it{% if r|count('stale') %}, <span class="stale">{{ r|count('stale') }} stale</span>{% endif %}.
{% elif r %}<span class="stale">No fresh cluster runs it</span>: {{ r|count('stale') }} of {{ r|totals }} stale.{% endif %}</p>{% endmacro %}
{% macro failing_list(rows, repos, total=0, environment='') %}<ul class="failing">{% for c in rows %}<li data-cluster="{{ c.name }}">{{ badge(c.badge) }}
<a href="/clusters/{{ c.name|q }}">{{ c.name }}</a> ({{ c.clusterType }}) failing since {{ c.failingSince|ago }}{% if c.failingReconciler %}:
<b>{{ c.failingReconciler|breakable }}</b>{% if c.failingReconcilers > 1 %} (and {{ c.failingReconcilers - 1 }} more){% endif %}:
{{ (c.failingMessage or '')[:240] }}{% endif %}</li>{% endfor %}</ul>{% if total > rows|length %}<p class="more">And {{ total - rows|length }} more:
<a href="/failing?environment={{ environment|q }}">every failing cluster of {{ environment }}</a>.</p>{% endif %}{% endmacro %}
{% macro rollout_table(r) %}
<div class="scroll"><table class="rollout"><tr><th>cluster type</th><th>state</th><th class="n">total</th><th class="n">success</th>
<th class="n">failed</th><th class="n">pending</th><th class="n">stale</th><th class="n">percent</th><th>progress</th></tr>
{% for t, c in r.clusterTypes.items() %}<tr data-cluster-type="{{ t }}"><td>{{ t }}</td><td class="state">{{ badge(c.state) }}</td><td class="n total">{{ c.total }}</td>
<td class="n success">{{ c.success }}</td><td class="n failed">{{ c.failed }}</td><td class="n pending">{{ c.pending }}</td>
<td class="n stale">{{ c.stale }}</td><td class="n percent">{{ c.percent }}%</td><td>{{ c|bar }}</td></tr>
{% else %}<tr><td colspan="9">no cluster registered</td></tr>{% endfor %}</table></div>{% endmacro %}
{% macro clusters_table(rows, repos) %}<div class="scroll"><table class="clusters"><tr><th>cluster</th><th>type</th><th>state at head</th>
<th>failing since</th><th>failing</th><th>platform commit</th><th class="n">behind</th><th>via</th>
<th>last seen</th></tr>{% for c in rows %}<tr data-cluster="{{ c.name }}"><td class="name"><a href="/clusters/{{ c.name|q }}">{{ c.name }}</a></td>
<td class="name">{{ c.clusterType }}</td><td class="state">{{ badge(c.badge) }}</td><td class="t">{{ c.failingSince|ago('-') }}</td>
<td class="msg">{% if c.failingReconciler %}<b>{{ c.failingReconciler|breakable }}</b>{% if c.failingReconcilers > 1 %}
(and {{ c.failingReconcilers - 1 }} more){% endif %}: {{ (c.failingMessage or '')[:240] }}{% endif %}</td>
<td>{{ c.commit|commit(c.environment, repos) }}</td><td class="n">{{ c.behind if c.behind is not none else '-' }}</td>
<td class="via">{{ c.senders|senders }}</td><td class="t {{ 'stale' if c.stale }}">{{ c.lastSeen|ago('never') }}</td></tr>
{% else %}<tr><td colspan="9">no cluster registered</td></tr>{% endfor %}</table></div>{% endmacro %}
{% macro drift_table(rows, repos) %}<div class="scroll"><table class="drift"><tr><th>cluster</th><th>environment</th><th>type</th>
<th>platform commit</th><th class="n">commits behind</th><th>stale</th></tr>{% for d in rows %}<tr>
<td class="name"><a href="/clusters/{{ d.name|q }}">{{ d.name }}</a></td>
<td><a href="/environments/{{ d.environment|q }}">{{ d.environment }}</a></td><td>{{ d.clusterType }}</td>
<td>{{ d.commit|commit(d.environment, repos) }}</td><td class="n">{{ d.behind if d.behind is not none else 'no platform commit' }}</td>
<td class="{{ 'stale' if d.stale }}">{{ 'yes' if d.stale else 'no' }}</td></tr>
{% else %}<tr><td colspan="6">Every cluster is at its environment's head.</td></tr>{% endfor %}</table></div>{% endmacro %}
{% macro holds_list(holds, environment) %}<ul class="holds">{% for h in holds %}<li data-wave="{{ h.wave or '' }}">{{ badge('held') }}
{% if h.wave %}Wave <b>{{ h.wave }}</b>{% else %}The whole environment{% endif %} held
{% if h.origin == 'label' %}by the label <code>promoter/hold</code> on {% if h.url %}<a href="{{ h.url }}">its promotion PR</a>{% else %}its promotion PR{% endif %}
{%- else %}by <b>{{ h.by }}</b>{% endif %} {{ 'seen' if h.origin == 'label' else 'since' }} {{ h.since|ago }}{% if h.until %}, until {{ h.until|ago }}{% endif %}
{%- if h.origin != 'label' and h.reason %}: {{ h.reason }}{% endif %}. <small class="muted">{% if h.origin == 'label' %}Remove the label
{%- else %}<code>promoter release {{ environment }}{% if h.wave %} --wave {{ h.wave }}{% endif %}</code>{% endif %} lets it go.</small></li>
{% endfor %}</ul>{% endmacro %}
{% macro follows_line(follows, waits) %}{% if follows %}<p class="follows">After {% for u in follows %}<a href="/environments/{{ u|q }}">{{ u }}</a>{{ ' and ' if loop.revindex == 2 else ', ' if not loop.last }}{% endfor %}
{%- for w in waits or [] %}{{ '; waits on ' if loop.first else ', ' }}{{ w.environment }}'s main <code>{{ w.mainCommit[:12] }}</code>{% endfor %}.</p>{% endif %}{% endmacro %}
{% macro filters_line(shown) %}{% if shown %}<p class="filters">Only {{ shown|join(', ') }}. <a href="?">Show all</a></p>{% endif %}{% endmacro %}"""

_FAILING_TABLE = """<div class="scroll"><table class="failing-clusters"><tr><th>cluster</th><th>environment</th><th>type</th>
<th>state at head</th><th>failing since</th><th>failing</th><th>platform commit</th></tr>{% for c in rows %}
<tr data-cluster="{{ c.name }}"><td class="name"><a href="/clusters/{{ c.name|q }}">{{ c.name }}</a></td>
<td><a href="/environments/{{ c.environment|q }}">{{ c.environment }}</a></td><td>{{ c.clusterType }}</td>
<td class="state">{{ badge(c.badge) }}</td><td class="t">{{ c.failingSince|ago('-') }}</td>
<td class="msg"><b>{{ c.failingReconciler|breakable }}</b>{% if c.failingReconcilers > 1 %} (and {{ c.failingReconcilers - 1 }} more){% endif %}:
{{ (c.failingMessage or '')[:240] }}</td><td>{{ c.commit|commit(c.environment, repos) }}</td></tr>
{% else %}<tr><td colspan="7">{{ empty }}</td></tr>{% endfor %}</table></div>"""

_DELIVERY = """{% extends "base" %}{% from "_macros" import filters_line with context %}{% block body %}{{ filters_line(shown) }}
<p>Over the last {{ data.window|duration }} (<a href="?window=7d">7 days</a>, <a href="?window=30d">30 days</a>,
<a href="?window=90d">90 days</a>); the trend is the {{ data.environments[0].trend|length if data.environments else 0 }}
windows before it, oldest first. Definitions: docs/hub.md, "Delivery figures".</p>
{% for e in data.environments %}<section class="env" data-environment="{{ e.environment }}"><h2><a href="/environments/{{ e.environment|q }}">{{ e.environment }}</a></h2>
<div class="scroll"><table class="dora"><tr><th>measure</th><th class="n">{{ e.environment }}</th>{% for t in e.clusterTypes %}<th class="n">{{ t }}</th>{% endfor %}<th>trend</th></tr>
{% for key, label, unit in measures %}<tr data-measure="{{ key }}"><td>{{ label }}</td><td class="n value">{{ e[key]|figure(unit) }}</td>
{% for t, f in e.clusterTypes.items() %}<td class="n">{{ f[key]|figure(unit) }}</td>{% endfor %}
<td class="trend">{{ (e.trend|map(attribute=key)|list + [e[key]])|spark(unit) }}</td></tr>{% endfor %}
</table></div><p><small class="muted">{{ e.deployments }} deployment{{ 's' if e.deployments != 1 }}, {{ e.changes }} change{{ 's' if e.changes != 1 }}
({{ e.failedChanges }} failed), {{ e.restores }} restore{{ 's' if e.restores != 1 }} in the window.</small></p></section>
{% else %}<p>No environment yet.</p>{% endfor %}{% endblock %}"""

TEMPLATES = {
    "environments": """{% extends "base" %}{% from "_macros" import rollout_table, head_line, badge, failing_list, holds_list, follows_line with context %}{% block body %}
{% set failing = data|sum(attribute='failingTotal') %}{% if failing %}<p class="failed"><b>{{ failing }} cluster{{ 's' if failing != 1 }} failing</b>: <a href="/failing">what is failing now</a>.</p>{% endif %}
{% if graph %}<p class="graph">{% for tier in graph %}<span class="tier">{% for n in tier %}<a href="/environments/{{ n|q }}">{{ n }}</a> {{ badge(states[n]) }}{{ ', ' if not loop.last }}{% endfor %}</span>{{ ' → ' if not loop.last }}{% endfor %}</p>{% endif %}
{% for e in data %}<section class="env" id="env-{{ e.environment }}" data-environment="{{ e.environment }}"><h2><a href="/environments/{{ e.environment|q }}">{{ e.environment }}</a> {{ badge(e.state) }}</h2>
{{ follows_line(e.follows, e.waitsOn) }}
{% if e.holds %}{{ holds_list(e.holds, e.environment) }}{% endif %}
{% if e.head %}{{ head_line(e.environment, e.head, e.rollout, e.rollout.state) }}{% if e.failing %}{{ failing_list(e.failing, repos, e.failingTotal, e.environment) }}{% endif %}{{ rollout_table(e.rollout) }}
{% else %}<p>No platform commit recorded yet.</p>{% endif %}</section>
{% else %}<p>No environment yet: record a platform commit or register a cluster (docs/hub.md).</p>{% endfor %}
{% endblock %}""",
    "environment": """{% extends "base" %}{% from "_macros" import rollout_table, head_line, clusters_table, badge, failing_list, holds_list, follows_line with context %}{% block body %}
<p class="state">State {{ badge(data.state) }}</p>{{ follows_line(data.follows, []) }}{% if data.holds %}{{ holds_list(data.holds, data.environment) }}{% endif %}
{% if data.head %}{{ head_line(data.environment, data.head, data.rollout, data.rollout.state) }}{% if data.failing %}{{ failing_list(data.failing, repos, data.failingTotal, data.environment) }}{% endif %}
{% if data.waves %}<h2>Waves</h2><div class="scroll"><table class="waves"><tr><th>wave</th><th>state</th><th>cluster types</th><th>main commit</th></tr>
{% for w in data.waves %}<tr data-wave="{{ w.name }}"><td>{{ w.name }}</td><td class="state">{{ badge(w.state) }}</td><td>{{ w.clusterTypes|join(', ') }}</td>
<td>{% for m in w.mainCommits %}<code>{{ m[:12] }}</code>{{ ', ' if not loop.last }}{% else %}-{% endfor %}</td></tr>{% endfor %}</table></div>{% endif %}
<h2>Cluster types</h2>{{ rollout_table(data.rollout) }}
<p><a href="/rollout?environment={{ data.environment|q }}&amp;commit={{ data.head.commit }}">Time to each percent</a> ·
<a href="/delivery?environment={{ data.environment|q }}">Delivery figures</a> · <a href="/history?environment={{ data.environment|q }}">History</a></p>{% endif %}
<h2>Scheduled and running</h2><div class="scroll"><table class="targets"><tr><th>cluster type</th><th>deployment target</th>
<th class="n">running the head</th></tr>{% for t in data.targets %}<tr><td>{{ t.clusterType }}</td><td>{{ t.deploymentTarget }}</td>
<td class="n">{{ t.deployed }} of {{ t.clusters }}</td></tr>{% else %}<tr><td colspan="3">nothing scheduled</td></tr>
{% endfor %}</table></div><h2>Clusters</h2>{{ clusters_table(data.clusters, repos) }}{% if data.clustersTotal > data.clusters|length %}
{% set e = data.environment|q %}<p class="more">The first {{ data.clusters|length }} of {{ data.clustersTotal }} clusters, by type and name:
<a href="?all=1">all {{ data.clustersTotal }}</a>; those <a href="/failing?environment={{ e }}">failing</a>,
<a href="/drift?environment={{ e }}">not at the head</a>, <a href="/stale?environment={{ e }}">stale</a>.</p>{% endif %}{% endblock %}""",
    "cluster": """{% extends "base" %}{% from "_macros" import badge with context %}{% block body %}
<p class="state">State at the head {{ badge(data.badge) }}</p>
<p>Environment <a href="/environments/{{ data.environment|q }}">{{ data.environment }}</a>, cluster type
{{ data.clusterType }}, reported by {{ data.senders|senders }}; at {{ data.commit|commit(data.environment, repos) }}
{%- if data.behind %}, {{ data.behind }} commit{{ 's' if data.behind > 1 }} behind the head{% endif %};
last seen <span class="{{ 'stale' if data.stale }}">{{ data.lastSeen|ago('never') }}</span>.
{% if data.failingSince %}<br><span class="failed">Failing since {{ data.failingSince|ago }}</span>:
<b>{{ data.failingReconciler }}</b>: {{ (data.failingMessage or '')[:400] }}{% endif %}</p>
<h2>Reconcilers</h2><div class="scroll"><table class="reconcilers"><tr><th>reconciler</th><th>via</th><th>state</th><th>revision</th>
<th>reason</th><th>message</th><th>last report</th></tr>{% for r in data.reconcilerStates %}<tr><td class="rec">{{ r.name|breakable }}</td>
<td class="via">{{ [r.source]|senders }}</td><td class="{{ r.state }}">{{ r.state }}{% if r.failingSince %}<br><small>since {{ r.failingSince|ago }}</small>{% endif %}</td>
<td>{{ r.revision|commit(data.environment, repos) }}</td><td>{{ r.reason }}</td><td class="msg">{{ r.message[:400] }}</td>
<td class="t">{{ r.receivedAt|ago }}</td></tr>{% else %}<tr><td colspan="7">no report yet</td></tr>{% endfor %}</table></div>
<h2>History</h2><div class="scroll"><table class="history"><tr><th>received</th><th>reconciler</th><th>state</th><th>revision</th>
<th>reason</th><th>message</th></tr>{% for h in data.history %}<tr><td class="t">{{ h.receivedAt|ago }}</td><td class="rec">{{ h.reconciler|breakable }}</td>
<td class="{{ h.state }}">{{ h.state }}</td><td>{{ h.revision|commit(data.environment, repos) }}</td><td>{{ h.reason }}</td>
<td class="msg">{{ h.message[:240] }}</td></tr>{% else %}<tr><td colspan="6">no history</td></tr>{% endfor %}</table></div>
<p><a href="/history?cluster={{ data.name|q }}">All of its history</a></p>{% endblock %}""",
    "rollout": """{% extends "base" %}{% from "_macros" import rollout_table, badge with context %}{% block body %}
<p class="head">Platform commit {{ data.commit|commit(data.environment, repos) }}{% if data.mainCommit %}
(main <code>{{ data.mainCommit[:12] }}</code>){% endif %}, recorded {{ data.recordedAt|ago }}. State {{ badge(data.state) }}</p>
{{ rollout_table(data) }}<h2>Time to each percent of the fresh clusters</h2><p><small class="muted">From the hub's record of the commit
to its receipt of each cluster's success (0s: the success came first).</small></p><div class="scroll"><table class="times"><tr><th>cluster type</th>
{% for p in ['25', '50', '75', '90', '100'] %}<th class="n">{{ p }}%</th>{% endfor %}</tr>{% for t, c in data.clusterTypes.items() %}
<tr><td>{{ t }}</td>{% for p in ['25', '50', '75', '90', '100'] %}<td class="n">{{ c.timeToPercent[p]|seconds }}</td>
{% endfor %}</tr>{% endfor %}</table></div>{% endblock %}""",
    "history": """{% extends "base" %}{% from "_macros" import filters_line with context %}{% block body %}{{ filters_line(shown) }}
<p>The {{ data|length }} newest report{{ 's' if data|length != 1 }} (changes of state; heartbeats only move last-seen times).</p>
<div class="scroll"><table class="history"><tr><th>received</th><th>cluster</th>
<th>environment</th><th>via</th><th>reconciler</th><th>state</th><th>revision</th><th>reason</th><th>message</th></tr>
{% for h in data %}<tr><td class="t">{{ h.receivedAt|ago }}</td><td class="name"><a href="/clusters/{{ h.cluster|q }}">{{ h.cluster }}</a></td>
<td><a href="/environments/{{ h.environment|q }}">{{ h.environment }}</a></td><td class="via">{{ [h.source]|senders }}</td>
<td class="rec">{{ h.reconciler|breakable }}</td><td class="{{ h.state }}">{{ h.state }}</td><td>{{ h.revision|commit(h.environment, repos) }}</td>
<td>{{ h.reason }}</td><td class="msg">{{ h.message[:200] }}</td></tr>
{% else %}<tr><td colspan="9">No report yet.</td></tr>{% endfor %}</table></div>{% endblock %}""",
    "discrepancies": """{% extends "base" %}{% from "_macros" import drift_table, badge with context %}{% block body %}
{% set failing = data|selectattr('kind', 'equalto', 'failing')|list %}
<p>{{ data|selectattr('kind', 'equalto', 'promotion')|list|length }} between environments,
{{ data|selectattr('kind', 'equalto', 'drift')|list|length }} cluster(s) off their head, {{ failing|length }} failing.</p>
<h2>Between environments</h2><div class="scroll"><table class="promotions"><tr><th>environment</th><th>main commit it runs</th><th>next environment</th>
<th>main commit it runs</th></tr>{% for d in data if d.kind == 'promotion' %}<tr>
<td><a href="/environments/{{ d.upstream|q }}">{{ d.upstream }}</a></td><td><code>{{ (d.upstreamMainCommit or '-')[:12] }}</code></td>
<td><a href="/environments/{{ d.downstream|q }}">{{ d.downstream }}</a></td><td><code>{{ (d.downstreamMainCommit or '-')[:12] }}</code></td></tr>
{% else %}<tr><td colspan="4">Each environment runs what the one before it runs.</td></tr>{% endfor %}</table></div>
<h2>Failing clusters</h2>{% with rows=failing, empty="No cluster is failing." %}"""
    + _FAILING_TABLE
    + """{% endwith %}
<h2>Clusters not at their environment's head</h2>{{ drift_table(data | selectattr('kind', 'equalto', 'drift') | list, repos) }}
{% endblock %}""",
    "failing": """{% extends "base" %}{% from "_macros" import badge, filters_line with context %}{% block body %}{{ filters_line(shown) }}
<p>{{ data.total }} cluster{{ 's' if data.total != 1 }} with a failing reconciler now, failing longest first
(a failure older than its cluster's head is listed, and its state says whether the head's rollout counts it).</p>
{% with rows=data, empty="No cluster is failing." %}"""
    + _FAILING_TABLE
    + """{% endwith %}{% if data.total > data|length %}<p class="more">The {{ data|length }} failing longest of {{ data.total }}:
<a href="?all=1{% if data.environment %}&amp;environment={{ data.environment|q }}{% endif %}">all of them</a>.</p>{% endif %}{% endblock %}""",
    "drift": """{% extends "base" %}{% from "_macros" import drift_table, filters_line with context %}{% block body %}{{ filters_line(shown) }}{{ drift_table(data, repos) }}{% endblock %}""",
    "stale": """{% extends "base" %}{% from "_macros" import filters_line with context %}{% block body %}{{ filters_line(shown) }}
<div class="scroll"><table class="stale-clusters"><tr><th>cluster</th><th>environment</th><th>type</th>
<th>last seen</th></tr>{% for s in data %}<tr><td class="name"><a href="/clusters/{{ s.name|q }}">{{ s.name }}</a></td>
<td><a href="/environments/{{ s.environment|q }}">{{ s.environment }}</a></td><td>{{ s.clusterType }}</td>
<td class="t stale">{{ s.lastSeen|ago('never') }}</td></tr>{% else %}<tr><td colspan="4">No stale cluster.</td></tr>{% endfor %}
</table></div>{% endblock %}""",
    "delivery": _DELIVERY,
}
