"""The pages' jinja2 templates, style and refresh script (rendered by ``promoter.hub.pages``).

Each page names its state with a badge (healthy, progressing, failed, stale, held), says its
filters, links back up (Environments > environment > cluster), fits 390 pixels (wide tables
scroll inside their box, never the page), and refreshes its ``<main>`` every few seconds with
a dozen lines of plain JavaScript (``?refresh=0`` stops it; without JavaScript it is a page)."""

from __future__ import annotations

STYLE = """
*{box-sizing:border-box}body{font-family:system-ui,sans-serif;margin:1rem 1.5rem;color:#222;max-width:1360px}
table{border-collapse:collapse;margin:.4rem 0 1.2rem;max-width:100%}.scroll{overflow-x:auto;max-width:100%}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}th{background:#f3f3f3;white-space:nowrap}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.t{font-variant-numeric:tabular-nums;min-width:7rem}
td.t time .abs{display:block;font-size:.85em}td.msg{min-width:12rem;max-width:30rem;overflow-wrap:anywhere;font-size:.92em}
td.name{overflow-wrap:break-word}td.rec{max-width:18rem}td.via{white-space:nowrap}
.success,.healthy{color:#17692e}.failed,.failure{color:#b3261e}.pending,.progressing,.behind{color:#555}.stale{color:#8a6d00}
.stuck{color:#a04a00}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:.8rem;font-size:.78rem;font-weight:600;color:#fff;
vertical-align:middle;letter-spacing:.02em}.badge.healthy{background:#2e7d32}.badge.progressing{background:#5f6b7a}
.badge.failed{background:#c62828}.badge.stale{background:#9a7400}.badge.held{background:#6a1b9a}
.badge.stuck{background:#b34700}.badge.behind{background:#3f6fa0}
code{font-size:.9em;overflow-wrap:anywhere}nav{display:flex;flex-wrap:wrap;gap:.3rem 1rem;margin-bottom:.4rem}p.head{margin:.3rem 0}
small.muted,.abs,p.crumbs,p.filters,footer{color:#666}p.crumbs{margin:.2rem 0}h1{margin:.4rem 0;font-size:1.6rem}
h2{margin:1rem 0 .3rem;font-size:1.25rem}ul.failing,ul.acts{margin:.3rem 0 .6rem;padding-left:1.2rem}
ul.failing li,ul.holds li,ul.acts li{margin:.2rem 0;overflow-wrap:anywhere}ul.holds{margin:.3rem 0 .6rem;padding-left:1.2rem}
p.graph .tier{white-space:nowrap}p.follows{margin:.2rem 0}section.env{border-top:1px solid #ddd;padding-top:.2rem}
div.acts{border-left:4px solid #c62828;padding:.2rem .7rem;margin:.4rem 0;background:#fdf3f2}div.acts.stuck{border-color:#b34700;background:#fdf6ef}
div.acts p{margin:.2rem 0}#offline{position:sticky;top:0;z-index:2;margin:0 0 .5rem;padding:.45rem .7rem;
background:#fff3cd;border:1px solid #d9a400;border-radius:.3rem;font-weight:600}#offline[hidden]{display:none}
footer{font-size:.85em;margin:.4rem 0 1rem}footer .failed{font-weight:600}
@media (max-width:640px){body{margin:.6rem .7rem}h1{font-size:1.3rem}
table,table tbody,table tr,table td{display:block;width:auto;max-width:100%}table tr:first-child{display:none}
table{border:0}table tr{border:1px solid #ccc;border-radius:.4rem;margin:.45rem 0;padding:.25rem .5rem}
table td{border:0;padding:.08rem 0;text-align:left;min-width:0;max-width:none}table td.n{text-align:left}
table td.none{display:none}table td.title{font-weight:600}table td.t time .abs{display:inline}
table td[data-label]::before{content:attr(data-label) ": ";color:#666;font-size:.85em;font-weight:400}}
"""

#: The live refresh: every ``refresh`` seconds (5 by default; ``?refresh=0`` stops it) the page
#: fetches itself and swaps its ``<main>``. The footer line and the banner stand outside
#: ``<main>`` and are looked up at each use, so they stay the page's own across refreshes. A
#: refresh that fails (an error answer, no answer in 10 s or the refresh interval, the hub
#: unreachable) is said at once, in the banner at the top, with the age of what is shown (which
#: grows each second); the next refresh that works takes the banner away. A hidden tab does not
#: refresh and refreshes as soon as it is shown again; refreshes never overlap.
SCRIPT = """(function(){var q=new URLSearchParams(location.search),every=parseFloat(q.get("refresh")||"5");
if(!(every>0)||!document.getElementById("live")||!window.fetch)return;
var shown=Date.now(),failure=null,busy=false,count=0;
function age(ms){var s=Math.max(0,Math.round(ms/1000));return s<120?s+" s":Math.round(s/60)+" min"}
function say(){var live=document.getElementById("live"),banner=document.getElementById("offline");
live.setAttribute("data-refreshes",String(count));
if(failure===null){live.className="";live.textContent="Live: refreshes every "+every+" s.";banner.hidden=true;return}
var text="Not live: the last refresh failed ("+failure+"). What is shown is "+age(Date.now()-shown)+
" old; retrying every "+every+" s.";live.className="failed";live.textContent=text;banner.textContent=text;banner.hidden=false}
function tick(){if(document.hidden||busy)return;busy=true;var abort=window.AbortController?new AbortController():null;
var timer=setTimeout(function(){if(abort)abort.abort()},Math.max(every,10)*1000);
fetch(location.href,{cache:"no-store",credentials:"same-origin",signal:abort?abort.signal:undefined})
.then(function(r){if(!r.ok)throw new Error("HTTP "+r.status);return r.text()})
.then(function(t){var d=new DOMParser().parseFromString(t,"text/html"),m=d.querySelector("main");
if(!m)throw new Error("not a page of the hub");document.querySelector("main").innerHTML=m.innerHTML;
document.title=d.title;shown=Date.now();failure=null;count++})
.catch(function(e){failure=e&&e.name==="AbortError"?"no answer":e instanceof TypeError?"the hub is unreachable":String(e.message||e)})
.then(function(){clearTimeout(timer);busy=false;say()})}
setInterval(tick,every*1000);setInterval(function(){if(failure!==null)say()},1000);
document.addEventListener("visibilitychange",function(){if(!document.hidden)tick()});say()})();"""

BASE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{{ title }} · promoter hub</title>
<style>{{ style }}</style></head><body><nav><a href="/">Environments</a><a href="/failing">Failing</a>
<a href="/delivery">Delivery</a><a href="/discrepancies">Discrepancies</a><a href="/drift">Drift</a><a href="/stale">Stale</a>
<a href="/history">History</a></nav><p id="offline" role="alert" hidden></p><main>{% if crumbs %}<p class="crumbs">{% for href, text in crumbs %}<a href="{{ href }}">{{ text }}</a> ›
{% endfor %}{{ title }}</p>{% endif %}<h1>{{ title }}</h1>{% block body %}{% endblock %}
<p><small class="muted">Rendered {{ now|when }}; a cluster silent for {{ stale_after|duration }} is stale.</small></p></main>
<footer><span id="live">Reload for the latest.</span></footer><script>{{ script }}</script></body></html>"""

MACROS = """{% macro badge(state) %}<span class="badge {{ state }}">{{ state }}</span>{% endmacro %}
{% macro head_line(e, h, r, state) %}<p class="head">Head {{ h.commit|commit(e, repos) }}{% if h.mainCommit %}
(main <code>{{ h.mainCommit[:12] }}</code>){% endif %}, recorded {{ h.recordedAt|ago }}.
{% if state == 'failed' %}<span class="failed">Failed: {{ r|count('failed') }} of {{ r|totals }} cluster{{ 's' if r|totals != 1 }}
failed{% if h.runningSince %} after running it{% endif %}</span>; {{ r|successes }} run{{ 's' if r|successes == 1 }} it{% if r|count('stale') %},
<span class="stale">{{ r|count('stale') }} stale</span>{% endif %}.
{% elif h.runningSince %}<span class="success">Running on {{ 'all' if not r|count('stale') }} {{ r|successes }} cluster{{ 's' if r|successes != 1 }} since {{ h.runningSince|ago }}</span>{% if r|count('stale') %};
<span class="stale">{{ r|count('stale') }} stale</span>{% endif %}.
{% elif h.stuck %}<span class="stuck">Stuck: {{ r|successes }} of {{ r|totals }} cluster{{ 's' if r|totals != 1 }} run it
{{ (now - h.recordedAt)|duration }} after it was recorded; it was expected by {{ h.expectedBy|ago }} ({{ h.expectation }})</span>{% if r|count('stale') %},
<span class="stale">{{ r|count('stale') }} stale</span>{% endif %}.
{% elif state == 'progressing' %}<span class="pending">Rolling out since {{ h.recordedAt|ago }}</span>:
{{ r|successes }} of {{ r|totals }} clusters run it{% if r|count('stale') %}, <span class="stale">{{ r|count('stale') }} stale</span>{% endif %}.
{% elif r %}<span class="stale">No fresh cluster runs it</span>: {{ r|count('stale') }} of {{ r|totals }} stale.{% endif %}</p>{% endmacro %}
{% macro acts(a, state) %}<div class="acts {{ state }}"><p class="did">{{ a.did }}</p>{% if a.links %}<p class="links">{% for l in a.links %}<a href="{{ l.href }}">{{ l.text }}</a>{{ ' · ' if not loop.last }}{% endfor %}</p>{% endif %}
<ul class="acts">{% for c in a.commands %}<li><code>{{ c.command }}</code> {{ c.what }}</li>{% endfor %}</ul></div>{% endmacro %}
{% macro failing_list(rows, repos, total=0, environment='') %}<ul class="failing">{% for c in rows %}<li data-cluster="{{ c.name }}">{{ badge(c.badge) }}
<a href="/clusters/{{ c.name|q }}">{{ c.name }}</a> ({{ c.clusterType }}) failing since {{ c.failingSince|ago }}{% if c.failingReconciler %}:
<b>{{ c.failingReconciler|breakable }}</b>{% if c.failingReconcilers > 1 %} (and {{ c.failingReconcilers - 1 }} more){% endif %}:
{{ (c.failingMessage or '')[:240] }}{% endif %}</li>{% endfor %}</ul>{% if total > rows|length %}<p class="more">And {{ total - rows|length }} more:
<a href="/failing?environment={{ environment|q }}">every failing cluster of {{ environment }}</a>.</p>{% endif %}{% endmacro %}
{% macro rollout_table(r) %}
<div class="scroll"><table class="rollout"><tr><th>cluster type</th><th>state</th><th class="n">total</th><th class="n">success</th>
<th class="n">failed</th><th class="n">pending</th><th class="n">stale</th><th class="n">percent</th><th>progress</th></tr>
{% for t, c in r.clusterTypes.items() %}<tr data-cluster-type="{{ t }}"><td class="title">{{ t }}</td><td class="state" data-label="state">{{ badge(c.state) }}</td><td class="n total" data-label="total">{{ c.total }}</td>
<td class="n success" data-label="success">{{ c.success }}</td><td class="n failed" data-label="failed">{{ c.failed }}{% if c.failuresAllowed is defined and c.failuresAllowed is not none %} <small class="muted">of {{ c.failuresAllowed }} allowed</small>{% endif %}</td><td class="n pending" data-label="pending">{{ c.pending }}</td>
<td class="n stale" data-label="stale">{{ c.stale }}</td><td class="n percent" data-label="percent">{{ c.percent }}%</td><td class="bar">{{ c|bar }}</td></tr>
{% else %}<tr><td colspan="9">no cluster registered</td></tr>{% endfor %}</table></div>{% endmacro %}
{% macro clusters_table(rows, repos) %}<div class="scroll"><table class="clusters"><tr><th>cluster</th><th>type</th><th>state at head</th>
<th>failing since</th><th>failing</th><th>platform commit</th><th class="n">behind</th><th>via</th>
<th>last seen</th></tr>{% for c in rows %}<tr data-cluster="{{ c.name }}"><td class="name title"><a href="/clusters/{{ c.name|q }}">{{ c.name }}</a></td>
<td class="name" data-label="type">{{ c.clusterType }}</td><td class="state" data-label="state">{{ badge(c.badge) }}</td><td class="t{{ ' none' if not c.failingSince }}" data-label="failing since">{{ c.failingSince|ago('-') }}</td>
<td class="msg{{ ' none' if not c.failingReconciler }}" data-label="failing">{% if c.failingReconciler %}<b>{{ c.failingReconciler|breakable }}</b>{% if c.failingReconcilers > 1 %}
(and {{ c.failingReconcilers - 1 }} more){% endif %}: {{ (c.failingMessage or '')[:240] }}{% endif %}</td>
<td data-label="platform commit">{{ c.commit|commit(c.environment, repos) }}</td><td class="n" data-label="behind">{{ c.behind if c.behind is not none else '-' }}</td>
<td class="via" data-label="via">{{ c.senders|senders }}</td><td class="t {{ 'stale' if c.stale }}" data-label="last seen">{% if c.lastSeen %}{{ c.lastSeen|ago }}{% else %}never (registered {{ c.registeredAt|ago }}){% endif %}</td></tr>
{% else %}<tr><td colspan="9">no cluster registered</td></tr>{% endfor %}</table></div>{% endmacro %}
{% macro drift_table(rows, repos) %}<div class="scroll"><table class="drift"><tr><th>cluster</th><th>environment</th><th>type</th>
<th>platform commit</th><th class="n">commits behind</th><th>stale</th></tr>{% for d in rows %}<tr data-cluster="{{ d.name }}">
<td class="name title"><a href="/clusters/{{ d.name|q }}">{{ d.name }}</a></td>
<td data-label="environment"><a href="/environments/{{ d.environment|q }}">{{ d.environment }}</a></td><td data-label="type">{{ d.clusterType }}</td>
<td data-label="platform commit">{{ d.commit|commit(d.environment, repos) }}</td><td class="n" data-label="commits behind">{{ d.behind if d.behind is not none else 'no platform commit' }}</td>
<td class="{{ 'stale' if d.stale }}" data-label="stale">{{ 'yes' if d.stale else 'no' }}</td></tr>
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
{% macro more(count, total, words, environment='') %}{% if total > count %}<p class="more">{{ words }}:
<a href="?all=1{% if environment %}&amp;environment={{ environment|q }}{% endif %}">{{ total - count }} more, show all</a>.</p>{% endif %}{% endmacro %}
{% macro filters_line(shown) %}{% if shown %}<p class="filters">Only {{ shown|join(', ') }}. <a href="?">Show all</a></p>{% endif %}{% endmacro %}"""

_FAILING_TABLE = """<div class="scroll"><table class="failing-clusters"><tr><th>cluster</th><th>environment</th><th>type</th>
<th>state at head</th><th>failing since</th><th>failing</th><th>platform commit</th></tr>{% for c in rows %}
<tr data-cluster="{{ c.name }}"><td class="name title"><a href="/clusters/{{ c.name|q }}">{{ c.name }}</a></td>
<td data-label="environment"><a href="/environments/{{ c.environment|q }}">{{ c.environment }}</a></td><td data-label="type">{{ c.clusterType }}</td>
<td class="state" data-label="state">{{ badge(c.badge) }}</td><td class="t" data-label="failing since">{{ c.failingSince|ago('-') }}</td>
<td class="msg" data-label="why"><b>{{ c.failingReconciler|breakable }}</b>{% if c.failingReconcilers > 1 %} (and {{ c.failingReconcilers - 1 }} more){% endif %}:
{{ (c.failingMessage or '')[:240] }}</td><td data-label="platform commit">{{ c.commit|commit(c.environment, repos) }}</td></tr>
{% else %}<tr><td colspan="7">{{ empty }}</td></tr>{% endfor %}</table></div>"""

_DELIVERY = """{% extends "base" %}{% from "_macros" import filters_line with context %}{% block body %}{{ filters_line(shown) }}
<p>Over the last {{ data.window|duration }} (<a href="?window=7d">7 days</a>, <a href="?window=30d">30 days</a>,
<a href="?window=90d">90 days</a>); the trend is the {{ data.environments[0].trend|length if data.environments else 0 }}
windows before it, oldest first. Definitions: docs/hub.md, "Delivery figures".</p>
{% for e in data.environments %}<section class="env" data-environment="{{ e.environment }}"><h2><a href="/environments/{{ e.environment|q }}">{{ e.environment }}</a></h2>
<div class="scroll"><table class="dora"><tr><th>measure</th><th class="n">{{ e.environment }}</th>{% for t in e.clusterTypes %}<th class="n">{{ t }}</th>{% endfor %}<th>trend</th></tr>
{% for key, label, unit in measures %}<tr data-measure="{{ key }}"><td class="title">{{ label }}</td><td class="n value" data-label="{{ e.environment }}">{{ e[key]|figure(unit) }}</td>
{% for t, f in e.clusterTypes.items() %}<td class="n" data-label="{{ t }}">{{ f[key]|figure(unit) }}</td>{% endfor %}
<td class="trend" data-label="trend">{{ (e.trend|map(attribute=key)|list + [e[key]])|spark(unit) }}</td></tr>{% endfor %}
</table></div><p><small class="muted">{{ e.deployments }} deployment{{ 's' if e.deployments != 1 }}, {{ e.changes }} change{{ 's' if e.changes != 1 }}
({{ e.failedChanges }} failed), {{ e.restores }} restore{{ 's' if e.restores != 1 }} in the window.</small></p></section>
{% else %}<p>No environment yet.</p>{% endfor %}{% endblock %}"""

TEMPLATES = {
    "environments": """{% extends "base" %}{% from "_macros" import rollout_table, head_line, badge, failing_list, holds_list, follows_line, acts with context %}{% block body %}
{% set failing = data|sum(attribute='failingTotal') %}{% if failing %}<p class="failed"><b>{{ failing }} cluster{{ 's' if failing != 1 }} failing</b>: <a href="/failing">what is failing now</a>.</p>{% endif %}
{% if graph %}<p class="graph">{% for tier in graph %}<span class="tier">{% for n in tier %}<a href="/environments/{{ n|q }}">{{ n }}</a> {{ badge(states[n]) }}{{ ', ' if not loop.last }}{% endfor %}</span>{{ ' → ' if not loop.last }}{% endfor %}</p>{% endif %}
{% for e in data %}<section class="env" id="env-{{ e.environment }}" data-environment="{{ e.environment }}"><h2><a href="/environments/{{ e.environment|q }}">{{ e.environment }}</a> {{ badge(e.state) }}</h2>
{{ follows_line(e.follows, e.waitsOn) }}
{% if e.holds %}{{ holds_list(e.holds, e.environment) }}{% endif %}
{% if e.head %}{{ head_line(e.environment, e.head, e.rollout, e.rollout.state) }}{% if e.attention %}{{ acts(e.attention, e.state) }}{% endif %}{% if e.failing %}{{ failing_list(e.failing, repos, e.failingTotal, e.environment) }}{% endif %}{{ rollout_table(e.rollout) }}
{% else %}<p>No platform commit recorded yet.</p>{% endif %}</section>
{% else %}<p>No environment yet: record a platform commit or register a cluster (docs/hub.md).</p>{% endfor %}
{% endblock %}""",
    "environment": """{% extends "base" %}{% from "_macros" import rollout_table, head_line, clusters_table, badge, failing_list, holds_list, follows_line, acts with context %}{% block body %}
<p class="state">State {{ badge(data.state) }}</p>{{ follows_line(data.follows, []) }}{% if data.holds %}{{ holds_list(data.holds, data.environment) }}{% endif %}
{% if data.head %}{{ head_line(data.environment, data.head, data.rollout, data.rollout.state) }}{% if data.attention %}{{ acts(data.attention, data.state) }}{% endif %}{% if data.failing %}{{ failing_list(data.failing, repos, data.failingTotal, data.environment) }}{% endif %}
{% if data.waves %}<h2>Waves</h2><div class="scroll"><table class="waves"><tr><th>wave</th><th>state</th><th>cluster types</th><th>failures</th><th>main commit</th></tr>
{% for w in data.waves %}<tr data-wave="{{ w.name }}"><td class="title">{{ w.name }}</td><td class="state" data-label="state">{{ badge(w.state) }}</td><td data-label="cluster types">{{ w.clusterTypes|join(', ') }}</td>
<td class="budget" data-label="failures">{% if w.failuresAllowed is defined %}{{ w.failed }} of {{ w.failuresAllowed }} allowed{% else %}-{% endif %}</td>
<td data-label="main commit">{% for m in w.mainCommits %}<code>{{ m[:12] }}</code>{{ ', ' if not loop.last }}{% else %}-{% endfor %}</td></tr>{% endfor %}</table></div>{% endif %}
<h2>Cluster types</h2>{{ rollout_table(data.rollout) }}
<p><a href="/rollout?environment={{ data.environment|q }}&amp;commit={{ data.head.commit }}">Time to each percent</a> ·
<a href="/delivery?environment={{ data.environment|q }}">Delivery figures</a> · <a href="/history?environment={{ data.environment|q }}">History</a></p>{% endif %}
<h2>Scheduled and running</h2><div class="scroll"><table class="targets"><tr><th>cluster type</th><th>deployment target</th>
<th class="n">running the head</th></tr>{% for t in data.targets %}<tr><td class="title">{{ t.clusterType }}</td><td data-label="deployment target">{{ t.deploymentTarget }}</td>
<td class="n" data-label="running the head">{{ t.deployed }} of {{ t.clusters }}</td></tr>{% else %}<tr><td colspan="3">nothing scheduled</td></tr>
{% endfor %}</table></div><h2>Clusters</h2>{{ clusters_table(data.clusters, repos) }}{% if data.clustersTotal > data.clusters|length %}
{% set e = data.environment|q %}<p class="more">The first {{ data.clusters|length }} of {{ data.clustersTotal }} clusters, by type and name:
<a href="?all=1">all {{ data.clustersTotal }}</a>; those <a href="/failing?environment={{ e }}">failing</a>,
<a href="/drift?environment={{ e }}">not at the head</a>, <a href="/stale?environment={{ e }}">stale</a>.</p>{% endif %}{% endblock %}""",
    "cluster": """{% extends "base" %}{% from "_macros" import badge with context %}{% block body %}
<p class="state">State at the head {{ badge(data.badge) }}</p>
<p>Environment <a href="/environments/{{ data.environment|q }}">{{ data.environment }}</a>, cluster type
{{ data.clusterType }}{% if data.lastSeen %}, reported by {{ data.senders|senders }}; at {{ data.commit|commit(data.environment, repos) }}
{%- if data.behind %}, {{ data.behind }} commit{{ 's' if data.behind > 1 }} behind the head{% endif %};
last seen <span class="{{ 'stale' if data.stale }}">{{ data.lastSeen|ago }}</span>.{% else %}; registered {{ data.registeredAt|ago }},
<span class="stale">no report yet</span>: its controllers have not sent one (docs/hub.md: "Flux", "Argo CD").{% endif %}
{% if data.failingSince %}<br><span class="failed">Failing since {{ data.failingSince|ago }}</span>:
<b>{{ data.failingReconciler }}</b>: {{ (data.failingMessage or '')[:400] }}{% endif %}</p>
<h2>Reconcilers</h2><div class="scroll"><table class="reconcilers"><tr><th>reconciler</th><th>via</th><th>state</th><th>revision</th>
<th>reason</th><th>message</th><th>last report</th></tr>{% for r in data.reconcilerStates %}<tr><td class="rec title">{{ r.name|breakable }}</td>
<td class="via" data-label="via">{{ [r.source]|senders }}</td><td class="{{ r.state }}" data-label="state">{{ r.state }}{% if r.failingSince %}<br><small>since {{ r.failingSince|ago }}</small>{% endif %}</td>
<td data-label="revision">{{ r.revision|commit(data.environment, repos) }}</td><td data-label="reason">{{ r.reason }}</td><td class="msg" data-label="message">{{ r.message[:400] }}</td>
<td class="t" data-label="last report">{{ r.receivedAt|ago }}</td></tr>{% else %}<tr><td colspan="7">no report yet</td></tr>{% endfor %}</table></div>
<h2>History</h2><div class="scroll"><table class="history"><tr><th>received</th><th>reconciler</th><th>state</th><th>revision</th>
<th>reason</th><th>message</th></tr>{% for h in data.history %}<tr><td class="t title">{{ h.receivedAt|ago }}</td><td class="rec" data-label="reconciler">{{ h.reconciler|breakable }}</td>
<td class="{{ h.state }}" data-label="state">{{ h.state }}</td><td data-label="revision">{{ h.revision|commit(data.environment, repos) }}</td><td data-label="reason">{{ h.reason }}</td>
<td class="msg" data-label="message">{{ h.message[:240] }}</td></tr>{% else %}<tr><td colspan="6">no history</td></tr>{% endfor %}</table></div>
<p><a href="/history?cluster={{ data.name|q }}">All of its history</a></p>{% endblock %}""",
    "rollout": """{% extends "base" %}{% from "_macros" import rollout_table, badge with context %}{% block body %}
<p class="head">Platform commit {{ data.commit|commit(data.environment, repos) }}{% if data.mainCommit %}
(main <code>{{ data.mainCommit[:12] }}</code>){% endif %}, recorded {{ data.recordedAt|ago }}. State {{ badge(data.state) }}</p>
{{ rollout_table(data) }}<h2>Time to each percent of the fresh clusters</h2><p><small class="muted">From the hub's record of the commit
to its receipt of each cluster's success (0s: the success came first).</small></p><div class="scroll"><table class="times"><tr><th>cluster type</th>
{% for p in ['25', '50', '75', '90', '100'] %}<th class="n">{{ p }}%</th>{% endfor %}</tr>{% for t, c in data.clusterTypes.items() %}
<tr><td class="title">{{ t }}</td>{% for p in ['25', '50', '75', '90', '100'] %}<td class="n" data-label="{{ p }}%">{{ c.timeToPercent[p]|seconds }}</td>
{% endfor %}</tr>{% endfor %}</table></div>{% endblock %}""",
    "history": """{% extends "base" %}{% from "_macros" import filters_line with context %}{% block body %}{{ filters_line(shown) }}
<p>The {{ data|length }} newest report{{ 's' if data|length != 1 }} (changes of state; heartbeats only move last-seen times).</p>
<div class="scroll"><table class="history"><tr><th>received</th><th>cluster</th>
<th>environment</th><th>via</th><th>reconciler</th><th>state</th><th>revision</th><th>reason</th><th>message</th></tr>
{% for h in data %}<tr><td class="t title">{{ h.receivedAt|ago }}</td><td class="name" data-label="cluster"><a href="/clusters/{{ h.cluster|q }}">{{ h.cluster }}</a></td>
<td data-label="environment"><a href="/environments/{{ h.environment|q }}">{{ h.environment }}</a></td><td class="via" data-label="via">{{ [h.source]|senders }}</td>
<td class="rec" data-label="reconciler">{{ h.reconciler|breakable }}</td><td class="{{ h.state }}" data-label="state">{{ h.state }}</td><td data-label="revision">{{ h.revision|commit(h.environment, repos) }}</td>
<td data-label="reason">{{ h.reason }}</td><td class="msg" data-label="message">{{ h.message[:200] }}</td></tr>
{% else %}<tr><td colspan="9">No report yet.</td></tr>{% endfor %}</table></div>{% endblock %}""",
    "discrepancies": """{% extends "base" %}{% from "_macros" import drift_table, badge, more with context %}{% block body %}
{% set failing = data|selectattr('kind', 'equalto', 'failing')|list %}{% set drift = data|selectattr('kind', 'equalto', 'drift')|list %}
<p>{{ data.counts.promotion }} between environments, {{ data.counts.drift }} cluster(s) off their head, {{ data.counts.failing }} failing.</p>
<h2>Between environments</h2><div class="scroll"><table class="promotions"><tr><th>environment</th><th>main commit it runs</th><th>next environment</th>
<th>main commit it runs</th></tr>{% for d in data if d.kind == 'promotion' %}<tr>
<td class="title"><a href="/environments/{{ d.upstream|q }}">{{ d.upstream }}</a></td><td data-label="runs main"><code>{{ (d.upstreamMainCommit or '-')[:12] }}</code></td>
<td data-label="next environment"><a href="/environments/{{ d.downstream|q }}">{{ d.downstream }}</a></td><td data-label="which runs main"><code>{{ (d.downstreamMainCommit or '-')[:12] }}</code></td></tr>
{% else %}<tr><td colspan="4">Each environment runs what the one before it runs.</td></tr>{% endfor %}</table></div>
<h2>Failing clusters</h2>{% with rows=failing, empty="No cluster is failing." %}"""
    + _FAILING_TABLE
    + """{% endwith %}{{ more(failing|length, data.counts.failing, "The " ~ failing|length ~ " failing longest of " ~ data.counts.failing) }}
<h2>Clusters not at their environment's head</h2>{{ drift_table(drift, repos) }}
{{ more(drift|length, data.counts.drift, "The first " ~ drift|length ~ " of " ~ data.counts.drift ~ " clusters off their head") }}
{% endblock %}""",
    "failing": """{% extends "base" %}{% from "_macros" import badge, filters_line, more with context %}{% block body %}{{ filters_line(shown) }}
<p>{{ data.total }} cluster{{ 's' if data.total != 1 }} with a failing reconciler now, failing longest first
(a failure older than its cluster's head is listed, and its state says whether the head's rollout counts it).</p>
{% with rows=data, empty="No cluster is failing." %}"""
    + _FAILING_TABLE
    + """{% endwith %}{{ more(data|length, data.total, "The " ~ data|length ~ " failing longest of " ~ data.total, data.environment) }}{% endblock %}""",
    "drift": """{% extends "base" %}{% from "_macros" import drift_table, filters_line, more with context %}{% block body %}{{ filters_line(shown) }}
<p>{{ data.total }} cluster{{ 's' if data.total != 1 }} not at {{ 'its' if data.environment else 'their' }} environment's head, by environment, type and name.</p>{{ drift_table(data, repos) }}
{{ more(data|length, data.total, "The first " ~ data|length ~ " of " ~ data.total, data.environment) }}{% endblock %}""",
    "stale": """{% extends "base" %}{% from "_macros" import filters_line, more with context %}{% block body %}{{ filters_line(shown) }}
<p>{{ data.total }} stale cluster{{ 's' if data.total != 1 }}, by environment, type and name.</p>
<div class="scroll"><table class="stale-clusters"><tr><th>cluster</th><th>environment</th><th>type</th>
<th>last seen</th></tr>{% for s in data %}<tr data-cluster="{{ s.name }}"><td class="name title"><a href="/clusters/{{ s.name|q }}">{{ s.name }}</a></td>
<td data-label="environment"><a href="/environments/{{ s.environment|q }}">{{ s.environment }}</a></td><td data-label="type">{{ s.clusterType }}</td>
<td class="t stale" data-label="last seen">{% if s.lastSeen %}{{ s.lastSeen|ago }}{% else %}never (registered {{ s.registeredAt|ago }}){% endif %}</td></tr>{% else %}<tr><td colspan="4">No stale cluster.</td></tr>{% endfor %}
</table></div>{{ more(data|length, data.total, "The first " ~ data|length ~ " of " ~ data.total, data.environment) }}{% endblock %}""",
    "delivery": _DELIVERY,
}
