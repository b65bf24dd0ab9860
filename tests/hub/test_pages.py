"""The hub's pages in a real headless browser (Debian's chromium, driven by Selenium through
Debian's chromedriver): navigate, read the numbers a user reads, follow links, with JavaScript
switched off (the pages work without it); then at a glance, with JavaScript, at 1400 and 390
pixels wide: state badges, failing clusters named with since-when and why, links back, filters
said, no page wider than the screen, a refresh without a reload. One browser for the module."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.holds import holds_from_json, record_holds
from promoter.hub.ingest import ingest
from tests.support.hub_support import (
    LiveHub,
    chromium_session,
    flux_event,
    flux_stream_event,
    free_port,
    post_flux,
    register,
    rfc3339,
    sign,
)

M0, M = "0" * 40, "1" * 40


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from chromium_session()


def scripts(browser: Any, on: bool) -> None:
    """Switch the page's JavaScript on or off (it stays so across navigations)."""
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": not on})


def _world(db: Database, url: str) -> None:
    record_commit(
        db,
        CommitRecord(
            "dev",
            M0,
            "dev",
            None,
            "a" * 40,
            None,
            (("small", "hello-world-functional-test"),),
            ("dev", "prod"),
        ),
        1.0,
    )
    record_commit(
        db,
        CommitRecord("dev", M, "dev", M0, "b" * 40, None, (("small", "hello-world-functional-test"),)),
        2.0,
    )
    for name, cluster_type, revision, severity in (
        ("edge-1", "small", M, "info"),
        ("edge-2", "small", M, "info"),
        ("edge-3", "small", M0, "info"),
        ("edge-4", "small", M, "error"),
        ("east-1", "large", M, "info"),
    ):
        key = register(db, name, cluster_type=cluster_type)
        reason = "ReconciliationSucceeded" if severity == "info" else "HealthCheckFailed"
        post_flux(url, name, key, flux_event(f"dev@sha1:{revision}", severity=severity, reason=reason))
    register(db, "edge-5")  # never reports: stale
    register(db, "prod-1", environment="prod")


def _row(browser: Any, cluster_type: str) -> dict[str, str]:
    from selenium.webdriver.common.by import By

    row = browser.find_element(By.CSS_SELECTOR, f'table.rollout tr[data-cluster-type="{cluster_type}"]')
    cells = {
        name: row.find_element(By.CSS_SELECTOR, f"td.{name}").text
        for name in ("total", "success", "failed", "pending", "stale", "percent")
    }
    cells["bar"] = row.find_element(By.CSS_SELECTOR, "svg").get_attribute("aria-label") or ""
    return cells


def test_overview_environment_and_cluster_pages(browser: Any, live_hub: LiveHub) -> None:
    from selenium.webdriver.common.by import By

    scripts(browser, False)

    _world(live_hub.db, live_hub.url)
    browser.get(live_hub.url + "/")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Environments"
    sections = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "section h2")]
    assert sections == ["dev failed", "prod stale"]  # the Pipeline's order, each with its state
    assert _row(browser, "small") == {
        "total": "5",
        "success": "2",
        "failed": "1",
        "pending": "1",
        "stale": "1",
        "percent": "50.0%",
        "bar": "2 of 5 clusters succeeded",
    }
    assert _row(browser, "large")["success"] == "1"
    browser.find_element(By.LINK_TEXT, "dev").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Environment dev"
    target = browser.find_element(By.CSS_SELECTOR, "table.targets tr:nth-child(2)").text
    assert target == "small hello-world-functional-test 2 of 5"  # as the rollout counts: 2 run M, healthy
    browser.find_element(By.LINK_TEXT, "edge-3").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Cluster edge-3"
    summary = browser.find_element(By.CSS_SELECTOR, "main").text
    assert "1 commit behind the head" in summary and "reported by Flux" in summary
    assert browser.find_element(By.CSS_SELECTOR, "p.state .badge").text == "progressing"
    state = browser.find_element(By.CSS_SELECTOR, "table.reconcilers tr:nth-child(2) td:nth-child(3)").text
    assert state == "success"
    browser.find_element(By.LINK_TEXT, "dev").click()
    browser.find_element(By.LINK_TEXT, "Time to each percent").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Rollout in dev"
    headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "table.times th")]
    assert headers == ["cluster type", "25%", "50%", "75%", "90%", "100%"]


def test_list_pages_link_to_clusters(browser: Any, live_hub: LiveHub) -> None:
    from selenium.webdriver.common.by import By

    scripts(browser, False)

    _world(live_hub.db, live_hub.url)
    browser.get(live_hub.url + "/")
    browser.find_element(By.LINK_TEXT, "Stale").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Stale clusters"
    names = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.stale-clusters td:first-child a")]
    assert names == ["edge-5", "prod-1"]
    browser.find_element(By.LINK_TEXT, "Drift").click()
    drifted = {a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.drift td:first-child a")}
    assert drifted == {"edge-3", "edge-5", "prod-1"}
    browser.find_element(By.LINK_TEXT, "History").click()
    assert len(browser.find_elements(By.CSS_SELECTOR, "table.history tr")) == 6  # a header and 5 reports
    browser.find_element(By.LINK_TEXT, "edge-4").click()
    assert browser.find_element(By.CSS_SELECTOR, "table.reconcilers td.failure").text.startswith(
        "failure\nsince "
    )


def test_an_unknown_environment_is_a_page_that_says_so(browser: Any, live_hub: LiveHub) -> None:
    from selenium.webdriver.common.by import By

    scripts(browser, False)

    browser.get(live_hub.url + "/environments/nowhere")
    assert "environment nowhere is not known to the hub" in browser.find_element(By.TAG_NAME, "body").text


# --- At a glance, with JavaScript, at two widths ----------------------------------------------

GLANCE_M0, GLANCE_M = "c" * 40, "d" * 40
WIDTHS = (1400, 390)


@pytest.fixture(scope="module")
def glance(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveHub]:
    """One SQLite hub for the module: dev healthy but held; prod failed (edge-2's HelmRelease
    failed after it applied M), a stale cluster, a cluster still progressing, and its wave
    fleet held."""
    db = Database(str(tmp_path_factory.mktemp("glance") / "hub.sqlite3"))
    db.migrate()
    now = time.time()
    for env in ("dev", "prod"):
        record_commit(
            db,
            CommitRecord(env, GLANCE_M0, env, None, "a" * 40, None, (("small", "web"),), ("dev", "prod")),
            now - 7200,
        )
        folders = (("small", "canary", "b" * 40), ("large", "fleet", "a" * 40)) if env == "prod" else ()
        record_commit(
            db,
            CommitRecord(
                env, GLANCE_M, env, GLANCE_M0, "b" * 40, None, (("small", "web"), *((("large", "web"),) if folders else ())),
                wave="canary" if folders else "", folders=folders,
            ),
            now - 600,
        )  # fmt: skip
    _report(db, "dev-1", "dev", "Kustomization", "ReconciliationSucceeded", f"dev@sha1:{GLANCE_M}", now - 500)
    for name in ("edge-1", "edge-2"):
        _report(db, name, "prod", "Kustomization", "Progressing", f"prod@sha1:{GLANCE_M}", now - 400)
        _report(
            db, name, "prod", "Kustomization", "ReconciliationSucceeded", f"prod@sha1:{GLANCE_M}", now - 399
        )
    _report(db, "edge-2", "prod", "HelmRelease", "UpgradeFailed", "6.5.4", now - 330)
    _report(db, "edge-3", "prod", "Kustomization", "Progressing", f"prod@sha1:{GLANCE_M}", now - 200)
    register(db, "edge-4", environment="prod")  # never reports: stale
    hold = {"by": "alice", "reason": "incident 4711: payments degraded", "at": rfc3339(now - 900)}
    for env, extra in (("dev", {"until": rfc3339(now + 4 * 3600)}), ("prod", {"wave": "fleet"})):
        record_holds(db, *holds_from_json({"environment": env, "holds": [{**hold, **extra}]}), now)
    with LiveHub(db) as live:
        yield live
    db.close()


def _report(db: Database, cluster: str, env: str, kind: str, reason: str, revision: str, at: float) -> None:
    from promoter.hub import keys

    with db.transaction() as tx:
        known = keys.cluster(tx, cluster)
    key = keys.add_cluster_key(db, cluster, env, "small")[1] if known is None else None
    if key is None:
        with db.transaction() as tx:
            key = keys.cluster_with_secrets(tx, cluster, None)[1][0]
    name = "podinfo" if kind == "HelmRelease" else "platform"
    message = {
        "UpgradeFailed": "Helm upgrade failed for release apps/podinfo: context deadline exceeded",
        "Progressing": "Deployment/apps/web configured",
    }.get(reason, "Reconciliation finished in 2s, next run in 10m0s")
    body, extra = flux_stream_event(
        kind,
        name,
        reason,
        message,
        rfc3339(at),
        severity="error" if reason.endswith("Failed") else "info",
        revision=revision,
        alert_metadata={"cluster": cluster, "clusterType": "small", "environment": env},
    )
    headers = {"content-type": "application/json", "x-signature": sign(body, key), **extra}
    ingest(db, "flux", cluster, headers, body, at + 1)


def _open(browser: Any, url: str, width: int) -> None:
    scripts(browser, True)
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    browser.get(url)


def _fits(browser: Any, width: int) -> None:
    """Nothing makes the page wider than the screen (wide tables scroll in their own box)."""
    assert browser.execute_script("return document.documentElement.scrollWidth") <= width


def _visible(browser: Any, element: Any, width: int) -> bool:
    right = browser.execute_script("return arguments[0].getBoundingClientRect().right", element)
    return bool(element.is_displayed()) and right <= width + 0.5


@pytest.mark.parametrize("width", WIDTHS)
def test_the_overview_names_what_fails_at_a_glance(browser: Any, glance: LiveHub, width: int) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, glance.url + "/", width)
    _fits(browser, width)
    badges = {
        s.get_attribute("data-environment"): s.find_element(By.CSS_SELECTOR, "h2 .badge").text
        for s in browser.find_elements(By.CSS_SELECTOR, "section.env")
    }
    assert badges == {"dev": "held", "prod": "failed"}  # a failure is more urgent than a hold
    assert browser.find_element(By.CSS_SELECTOR, "p.graph").text == "dev held → prod failed"
    held = browser.find_element(By.CSS_SELECTOR, 'section[data-environment="dev"] ul.holds li')
    assert _visible(browser, held, width)
    assert held.text.startswith("held The whole environment held by alice since 15 min ago (")
    assert (
        re.search(r"until in (4 h|3 h 5\d min) \(", held.text)
        and ": incident 4711: payments degraded." in held.text
    )
    assert "promoter release dev lets it go." in held.text
    assert (
        "Running on" in browser.find_element(By.CSS_SELECTOR, 'section[data-environment="dev"] p.head').text
    )
    prod = browser.find_element(By.CSS_SELECTOR, 'section[data-environment="prod"]')
    head = prod.find_element(By.CSS_SELECTOR, "p.head").text
    assert "Failed: 1 of 4 clusters failed" in head and "Rolling out" not in head
    failing = prod.find_element(By.CSS_SELECTOR, 'ul.failing li[data-cluster="edge-2"]')
    assert _visible(browser, failing, width)
    text = failing.text
    assert text.startswith("failed edge-2 (small) failing since 5 min ago (")  # relative, then absolute
    assert (
        "UTC)" in text and "HelmRelease/flux-system/podinfo" in text and "context deadline exceeded" in text
    )
    stamp = failing.find_element(By.TAG_NAME, "time").get_attribute("title")
    assert stamp.startswith("20") and stamp.endswith(" UTC")
    types = prod.find_element(By.CSS_SELECTOR, 'tr[data-cluster-type="small"] td.state').text
    assert types == "failed"
    assert "1 cluster failing" in browser.find_element(By.CSS_SELECTOR, "main > p.failed").text


@pytest.mark.parametrize("width", WIDTHS)
def test_environment_cluster_and_failing_pages_link_back_and_say_their_filters(
    browser: Any, glance: LiveHub, width: int
) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, glance.url + "/failing", width)
    _fits(browser, width)
    rows = browser.find_elements(By.CSS_SELECTOR, "table.failing-clusters tr[data-cluster]")
    assert [r.get_attribute("data-cluster") for r in rows] == ["edge-2"]
    assert _visible(browser, rows[0].find_element(By.CSS_SELECTOR, "td.name a"), width)
    browser.find_element(By.LINK_TEXT, "prod").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Environment prod"
    _fits(browser, width)
    assert browser.find_element(By.CSS_SELECTOR, "p.state .badge").text == "failed"
    states = {
        r.get_attribute("data-cluster"): r.find_element(By.CSS_SELECTOR, "td.state").text
        for r in browser.find_elements(By.CSS_SELECTOR, "table.clusters tr[data-cluster]")
    }
    assert states == {"edge-1": "healthy", "edge-2": "failed", "edge-3": "progressing", "edge-4": "stale"}
    waves = [
        [c.text for c in r.find_elements(By.TAG_NAME, "td")]
        for r in browser.find_elements(By.CSS_SELECTOR, "table.waves tr[data-wave]")
    ]  # canary landed M on small (failed); fleet's large, no cluster yet, still holds the older main commit
    assert waves == [["canary", "failed", "small", "-", "b" * 12], ["fleet", "held", "large", "-", "a" * 12]]
    held = browser.find_element(By.CSS_SELECTOR, 'ul.holds li[data-wave="fleet"]').text
    assert held.startswith("held Wave fleet held by alice since") and "--wave fleet" in held
    browser.find_element(By.CSS_SELECTOR, 'table.clusters tr[data-cluster="edge-2"] a').click()
    assert browser.find_element(By.CSS_SELECTOR, "p.crumbs").text == "Environments › prod › Cluster edge-2"
    _fits(browser, width)
    browser.find_element(By.LINK_TEXT, "All of its history").click()
    assert browser.find_element(By.CSS_SELECTOR, "p.filters").text == "Only cluster edge-2. Show all"
    _fits(browser, width)
    browser.find_element(By.CSS_SELECTOR, "p.crumbs a").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Environments"
    browser.find_element(By.LINK_TEXT, "Discrepancies").click()
    failing = browser.find_elements(By.CSS_SELECTOR, "table.failing-clusters tr[data-cluster]")
    assert [r.get_attribute("data-cluster") for r in failing] == ["edge-2"]


def _live(browser: Any) -> dict[str, Any]:
    """The footer line, the banner and the count of refreshes, as the page has them now."""
    found: dict[str, Any] = browser.execute_script(
        "var l=document.getElementById('live'),b=document.getElementById('offline');"
        "return {live:l.textContent,cls:l.className,refreshes:+l.getAttribute('data-refreshes'),"
        "banner:b.hidden?null:b.textContent,attached:document.body.contains(l)}"
    )
    return found


def test_a_live_page_says_when_it_is_not_live_and_recovers(browser: Any, glance: LiveHub) -> None:
    """Across several refreshes, with its hub stopped for a while and started again: the page
    says at once that it is not live, how old what it shows is, and recovers by itself."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    port = free_port()
    hub = LiveHub(glance.db, port=port).__enter__()
    _open(browser, hub.url + "/failing?refresh=1", 1400)
    browser.execute_script("window.notReloaded = true")
    wait = WebDriverWait(browser, 15, poll_frequency=0.1)
    wait.until(lambda b: _live(b)["refreshes"] >= 3)
    now = _live(browser)
    assert now["live"] == "Live: refreshes every 1 s." and now["banner"] is None and now["attached"]
    _report(
        glance.db,
        "edge-1",
        "prod",
        "Kustomization",
        "HealthCheckFailed",
        f"prod@sha1:{GLANCE_M}",
        time.time(),
    )
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, 'table.failing-clusters tr[data-cluster="edge-1"]'))
    hub.__exit__(None, None, None)  # the hub stops
    wait.until(lambda b: _live(b)["banner"] is not None)
    down = _live(browser)
    assert down["cls"] == "failed" and down["banner"] == down["live"]
    assert down["live"].startswith(
        "Not live: the last refresh failed (the hub is unreachable). What is shown is "
    )
    assert down["live"].endswith(" s old; retrying every 1 s.")
    first_age = int(down["live"].split("What is shown is ")[1].split(" s old")[0])
    wait.until(
        lambda b: int(_live(b)["live"].split("What is shown is ")[1].split(" s old")[0]) >= first_age + 2
    )
    assert browser.find_element(By.ID, "offline").is_displayed()
    assert browser.find_elements(By.CSS_SELECTOR, 'table.failing-clusters tr[data-cluster="edge-1"]')  # kept
    before = _live(browser)["refreshes"]
    hub = LiveHub(glance.db, port=port).__enter__()  # started again, on the same address
    try:
        wait.until(lambda b: _live(b)["banner"] is None and _live(b)["refreshes"] > before)
        assert _live(browser)["live"] == "Live: refreshes every 1 s."
        assert not browser.find_element(By.ID, "offline").is_displayed()
        wait.until(lambda b: _live(b)["refreshes"] > before + 2)  # and it goes on refreshing
        assert _live(browser)["banner"] is None
    finally:
        hub.__exit__(None, None, None)
    assert browser.execute_script("return window.notReloaded") is True


ALL_PAGES = (
    "/",
    "/environments/prod",
    "/environments/dev",
    "/clusters/edge-2",
    "/clusters/edge-4",
    "/failing",
    "/history",
    "/discrepancies",
    "/drift",
    "/stale",
    "/delivery",
    f"/rollout?environment=prod&commit={GLANCE_M}",
)
_OVERFLOW = (
    "var w=arguments[0],out=[];document.querySelectorAll('.scroll, table, td, th, p, li, section').forEach("
    "function(e){var r=e.getBoundingClientRect();if(e.offsetParent!==null&&(r.right>w+0.5||e.scrollWidth>e.clientWidth+1))"
    "out.push(e.tagName+'.'+e.className+': '+(e.textContent||'').trim().slice(0,60))});return out"
)


_CARD = (
    "return Array.from(arguments[0].children).filter(function(td){return td.offsetParent!==null})"
    ".map(function(td){var b=getComputedStyle(td,'::before').content;"
    "return (b&&b!=='none'?JSON.parse(b):'')+td.innerText.replace(/\\s+/g,' ').trim()})"
)


@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_needs_a_sideways_scroll(browser: Any, glance: LiveHub, width: int) -> None:
    """At 390 px every table is stacked rows (each cell labelled), at 1400 px every table fits:
    no page, and nothing inside one, is wider than the window."""
    from selenium.webdriver.common.by import By

    for page in ALL_PAGES:
        _open(browser, glance.url + page + ("&" if "?" in page else "?") + "refresh=0", width)
        _fits(browser, width)
        assert browser.execute_script(_OVERFLOW, width) == [], page
    _open(browser, glance.url + "/environments/prod?refresh=0", width)
    row = browser.find_element(By.CSS_SELECTOR, 'table.clusters tr[data-cluster="edge-2"]')
    for label in ("state", "failing since", "failing"):
        cell = row.find_element(By.CSS_SELECTOR, f'td[data-label="{label}"]')
        assert _visible(browser, cell, width), label
    if width < 600:  # a card: what (the name), since when and why, each on its line, labelled
        lines = browser.execute_script(_CARD, row)
        assert lines[0] == "edge-2" and lines[2] == "state: failed"
        assert lines[3].startswith("failing since: 5 min ago (") and lines[4].startswith(
            "failing: HelmRelease/"
        )
    never = browser.find_element(
        By.CSS_SELECTOR, 'table.clusters tr[data-cluster="edge-4"] td[data-label="last seen"]'
    )
    assert never.text.startswith("never (registered ")
