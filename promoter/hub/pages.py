"""The hub's web pages: server-rendered HTML (templates in ``page_templates``), the rollout drawn
as inline SVG bars. Rendered with jinja2, autoescaped: every value a cluster sent is text,
never markup.

Every table has one header row and its own columns; every cell is formatted for a reader (a
time relative to the hub's now, with the absolute time and its zone beside it; a short commit
linked to the platform repo when its URL is a web page; a state badge), never a raw value of
Python's. Times shown are the hub's own (receipts, records), never a cluster's clock."""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import parse_qs, quote

from jinja2 import DictLoader, Environment, pass_context, select_autoescape
from jinja2.runtime import Context
from markupsafe import Markup

from promoter.hub.durations import duration
from promoter.hub.graph import tiers
from promoter.hub.page_templates import BASE, MACROS, SCRIPT, STYLE, TEMPLATES

_COLORS = {"success": "#2e9d4d", "failed": "#d64541", "pending": "#b0b0b0", "stale": "#e0b020"}
_SENDERS = {"flux": "Flux", "argocd": "Argo CD", "native": "native"}
_MEASURES = (
    ("deploymentFrequencyPerDay", "Deployment frequency", "perday"),
    ("leadTimeSeconds", "Lead time for changes", "seconds"),
    ("changeFailureRate", "Change failure rate", "ratio"),
    ("timeToRestoreSeconds", "Time to restore", "seconds"),
)
_FILTERS = {
    "environment": "environment {}",
    "cluster": "cluster {}",
    "clusterType": "cluster type {}",
    "limit": "the newest {}",
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


def ago(value: Any, now: float, never: str = "never") -> Markup:
    """A time relative to ``now`` ("7 min ago"), with the absolute time and zone beside it (the
    time of day when it is today, UTC) and in full in its title."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return Markup("{}").format(never)
    delta = now - float(value)
    relative = (
        "just now" if abs(delta) < 1 else f"{duration(delta)} ago" if delta > 0 else f"in {duration(delta)}"
    )
    same_day = time.gmtime(value)[:3] == time.gmtime(now)[:3]
    short = time.strftime("%H:%M:%S UTC" if same_day else "%Y-%m-%d %H:%M UTC", time.gmtime(value))
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(value))
    return Markup('<time datetime="{}" title="{}">{} <span class="abs">({})</span></time>').format(
        iso, _when(value), relative, short
    )


@pass_context
def _ago(context: Context, value: Any, never: str = "never") -> Markup:
    return ago(value, float(context["now"]), never)


def _figure(value: Any, unit: str) -> str:
    """A DORA figure for a table cell; a dash when there is none."""
    if not isinstance(value, int | float):
        return "-"
    if unit == "perday":
        return f"{value:.2f}/day" if value < 1 else f"{value:.1f}/day"
    if unit == "ratio":
        return f"{100 * value:.0f}%"
    return duration(value)


def _spark(values: list[Any], unit: str, width: int = 96, height: int = 18) -> Markup:
    """The trend of a figure as an inline SVG line, its values in its title."""
    points = [(i, float(v)) for i, v in enumerate(values) if isinstance(v, int | float)]
    label = ", ".join(_figure(v, unit) for v in values)
    if len(points) < 2:
        return Markup('<span title="{}">-</span>').format(label)
    top = max(v for _, v in points) or 1.0
    step = width / max(len(values) - 1, 1)
    coords = " ".join(f"{i * step:.1f},{height - 1 - (height - 2) * v / top:.1f}" for i, v in points)
    return Markup(
        '<svg width="{}" height="{}" role="img" aria-label="{}"><title>{}</title>'
        '<polyline points="{}" fill="none" stroke="#1565c0" stroke-width="1.5"/></svg>'
    ).format(width, height, label, label, coords)


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
    loader_map = {"base": BASE, "_macros": MACROS, **TEMPLATES}
    env = Environment(
        loader=DictLoader(loader_map), autoescape=select_autoescape(default=True, default_for_string=True)
    )
    env.filters.update(
        {
            "bar": lambda c: Markup(_bar(c)),
            "when": _when,
            "ago": _ago,
            "figure": _figure,
            "spark": _spark,
            "seconds": _seconds,
            "q": lambda v: quote(str(v), safe=""),
            "commit": _commit,
            "senders": _senders,
            "successes": lambda r: _count(r, "success"),
            "count": _count,
            "duration": duration,
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
    "failing": "Failing now",
    "delivery": "Delivery figures",
}


def _crumbs(name: str, data: Any) -> list[tuple[str, str]]:
    """The links back up from a page: Environments, then the environment of a cluster or rollout."""
    if name == "environments":
        return []
    env = data.get("environment") if isinstance(data, dict) and name in ("cluster", "rollout") else None
    return [("/", "Environments")] + (
        [(f"/environments/{quote(str(env), safe='')}", str(env))] if env else []
    )


def _shown(filters: dict[str, str]) -> list[str]:
    """The filters a list page applies, in words ("environment prod", "the newest 20")."""
    merged = dict(filters)
    if merged.get("env") and not merged.get("environment"):
        merged["environment"] = merged["env"]
    return [text.format(merged[key]) for key, text in _FILTERS.items() if merged.get(key)]


#: The query parameters of how a page is read, which every link of the page keeps.
KEPT = ("staleAfter", "stuckAfter", "refresh")
_LINK = re.compile(r'href="([/?][^"]*)"')


def keep_query(page: str, params: dict[str, str]) -> str:
    """``page`` with ``params``' ``KEPT`` parameters added to each of its own links (a path or a
    query) that does not set them itself: a page read with ``?staleAfter=2h`` links to pages
    read the same way."""
    kept = [(k, params[k]) for k in KEPT if params.get(k)]
    if not kept:
        return page

    def add(match: re.Match[str]) -> str:
        link = match.group(1)
        if link.startswith("//"):
            return match.group(0)
        target, hash_, fragment = link.partition("#")
        query = target.partition("?")[2].replace("&amp;", "&")
        extra = "&amp;".join(f"{k}={quote(v, safe='')}" for k, v in kept if k not in parse_qs(query))
        if not extra:
            return match.group(0)
        joiner = "" if target.endswith(("?", "&amp;")) else "&amp;" if "?" in target else "?"
        return f'href="{target}{joiner}{extra}{hash_}{fragment}"'

    return _LINK.sub(add, page)


def render(
    name: str,
    data: Any,
    now: float,
    repos: dict[str, str] | None = None,
    filters: dict[str, str] | None = None,
    stale_after: float = 1800.0,
) -> str:
    """The page of read ``name``; ``repos`` maps an environment to its platform repo's web page,
    ``filters`` are the page's query parameters (said on the page)."""
    filters = filters or {}
    graph, states = _environments_graph(data) if name == "environments" else ([], {})
    html = (
        _templates()
        .get_template(name)
        .render(
            graph=graph,
            states=states,
            data=data,
            title=_TITLES[name].format(_subject(name, data)),
            now=now,
            style=Markup(STYLE),
            script=Markup(SCRIPT),
            repos=repos or {},
            crumbs=_crumbs(name, data),
            shown=_shown(filters),
            stale_after=stale_after,
            measures=_MEASURES,
        )
    )
    return keep_query(html, filters)


def _templates() -> Environment:
    """The pages' templates, compiled at the first page."""
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    return _ENV


def _subject(name: str, data: Any) -> str:
    """What a page is about, for its title: its environment, or its own name."""
    if not isinstance(data, dict):
        return ""
    return str(data.get("environment" if name in ("environment", "rollout") else "name", ""))


def _environments_graph(data: list[dict[str, Any]]) -> tuple[list[list[str]], dict[str, str]]:
    """The environments page's graph (its tiers, drawn when there are two or more) and states."""
    graph = tiers({e["environment"]: e["follows"] for e in data})
    return graph if len(graph) > 1 else [], {e["environment"]: e["state"] for e in data}


def not_found(message: str, title: str = "Not found") -> str:
    env = _ENV or _environment()
    page = env.from_string("{% extends 'base' %}{% block body %}<p>{{ message }}</p>{% endblock %}")
    return page.render(
        title=title,
        message=message,
        now=time.time(),
        style=Markup(STYLE),
        script=Markup(SCRIPT),
        crumbs=[("/", "Environments")],
        stale_after=1800.0,
    )
