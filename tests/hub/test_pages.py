"""The hub's pages in a real headless browser (Debian's chromium, driven by Selenium through
Debian's chromedriver): navigate, read the numbers a user reads, follow links. The pages work
with JavaScript switched off."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from promoter.hub.db import Database
from promoter.hub.store import CommitRecord, record_commit
from tests.support.hub_support import LiveHub, flux_event, missing, post_flux, register

M0, M = "0" * 40, "1" * 40


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        missing("Debian's chromium and chromium-driver are not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(chromium)
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(service=Service(executable_path=str(driver_path)), options=options)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()


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

    _world(live_hub.db, live_hub.url)
    browser.get(live_hub.url + "/")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Environments"
    sections = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "section h2")]
    assert sections == ["dev", "prod"]  # the Pipeline's order
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
    summary = browser.find_element(By.TAG_NAME, "p").text
    assert "1 commit behind the head" in summary and "reported by Flux" in summary and "pending" in summary
    state = browser.find_element(By.CSS_SELECTOR, "table.reconcilers tr:nth-child(2) td:nth-child(3)").text
    assert state == "success"
    browser.find_element(By.LINK_TEXT, "dev").click()
    browser.find_element(By.LINK_TEXT, "Time to each percent").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Rollout in dev"
    headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "table.times th")]
    assert headers == ["cluster type", "25%", "50%", "75%", "90%", "100%"]


def test_list_pages_link_to_clusters(browser: Any, live_hub: LiveHub) -> None:
    from selenium.webdriver.common.by import By

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

    browser.get(live_hub.url + "/environments/nowhere")
    assert "environment nowhere is not known to the hub" in browser.find_element(By.TAG_NAME, "body").text
