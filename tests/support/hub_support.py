"""Fixtures of the hub's tests: a real PostgreSQL (started once per session, as user postgres,
on 127.0.0.1 with a socket dir of its own), a fresh database per test on both engines, and the
real HTTP server on loopback. Payloads are built from Flux's and Argo CD's documented shapes
(tests/fixtures/hub/).

Without PostgreSQL's binaries the PostgreSQL half skips, saying so, unless CI is set: then it fails.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from promoter.hub import keys
from promoter.hub.db import Database
from promoter.platform.lock import cache_lock
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "hub"
_counter = itertools.count()


def missing(what: str) -> None:
    """Skip, or fail under CI, when a tool the test needs is not installed."""
    message = f"{what} (run scripts/deps/*.sh, or make deps)"
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(f"CI is set and {message}")
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pg_bin() -> Path | None:
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").exists() and (candidate / "pg_ctl").exists():
            return candidate
    found = shutil.which("pg_ctl")
    return Path(found).parent if found else None


def _as_postgres(argv: list[str]) -> list[str]:
    # pg_ctl and initdb refuse to run as root.
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


def _initdb(bin_dir: Path, data: Path) -> None:
    initdb = [
        str(bin_dir / "initdb"),
        "-D",
        str(data),
        "-U",
        "postgres",
        "--auth=trust",
        "-E",
        "UTF8",
        "--locale=C",
    ]
    subprocess.run(_as_postgres(initdb), check=True, capture_output=True, timeout=120)


def _cluster_template(bin_dir: Path) -> Path | None:
    """A data folder made by one initdb, for every server to copy (each pytest worker starts a
    server of its own, and initdb was 1.5 CPU-seconds of each): in the temporary folder, the
    run's own under ``make`` (deleted with it), else kept for the next run. None where the
    postgres user cannot write there (then each server runs its own initdb)."""
    key = hashlib.sha256(str(bin_dir.resolve()).encode()).hexdigest()[:12]
    shared = Path(tempfile.gettempdir()) / f"promoter-pg-template-{key}"
    with cache_lock(Path(f"{shared}.lock"), "the PostgreSQL template", 300.0):  # initdb: 120 s at most
        if (shared / "data" / "PG_VERSION").exists():
            return shared / "data"
        if shared.exists():
            return None  # an earlier try failed
        shared.mkdir(mode=0o755)
        if os.geteuid() == 0:
            shutil.chown(shared, "postgres")
        try:
            _initdb(bin_dir, shared / "building")
        except subprocess.CalledProcessError:
            return None
        (shared / "building").rename(shared / "data")  # whole, or not there
        return shared / "data"


@contextmanager
def postgres_server(bin_dir: Path) -> Iterator[str]:
    """A PostgreSQL server of its own (as user postgres when run as root), on 127.0.0.1 and a
    free port, with a socket dir of its own; its admin URL. Stopped and removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="promoter-hub-pg-", dir="/tmp"))
    root.chmod(0o755)
    data, sockets = root / "data", root / "run"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    port = free_port()
    run: dict[str, Any] = {"check": True, "capture_output": True, "timeout": 120}
    template = _cluster_template(bin_dir)
    if template is None:
        _initdb(bin_dir, data)
    else:  # a copy keeps the owner (postgres) when made as root, and the 0700 of a data folder
        subprocess.run(["cp", "-a", str(template), str(data)], **run)
    options = f"-h 127.0.0.1 -p {port} -k {sockets} -c fsync=on -c max_connections=200"
    pg_ctl = str(bin_dir / "pg_ctl")
    subprocess.run(
        _as_postgres([pg_ctl, "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"]), **run
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_postgres([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]), capture_output=True
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """The admin URL of a PostgreSQL server of this test session."""
    bin_dir = pg_bin()
    if bin_dir is None:
        missing("PostgreSQL's binaries (initdb, pg_ctl) are not installed")
    assert bin_dir is not None
    with postgres_server(bin_dir) as url:
        yield url


# Databases that tests have finished with, emptied, by admin URL: the next test takes one rather
# than a new database (CREATE DATABASE copies template1, about 0.3 CPU-seconds of the server's
# each time).
_emptied: dict[str, list[str]] = {}


def new_pg_database(admin: str) -> tuple[str, str]:
    """An empty database on the server of ``admin`` (a new one, or one that a test before gave
    back with ``give_back_pg_database``, emptied): its URL and name."""
    import psycopg

    base = admin.rsplit("/", 1)[0]
    if _emptied.get(admin):
        name = _emptied[admin].pop()
        return f"{base}/{name}", name
    name = f"hub_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{base}/{name}", name


def give_back_pg_database(admin: str, name: str) -> None:
    """Give ``name`` back, emptied as new: every other session ended, every schema dropped and
    ``public`` made anew; dropped outright when that fails."""
    import psycopg

    base = admin.rsplit("/", 1)[0]
    try:
        with psycopg.connect(f"{base}/{name}", autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            schemas = conn.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'"
            ).fetchall()
            for (schema,) in schemas:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
            conn.execute("CREATE SCHEMA public")
    except psycopg.Error:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        return
    _emptied.setdefault(admin, []).append(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def hub_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty hub database URL on each engine."""
    if request.param == "sqlite":
        yield str(tmp_path / "hub.sqlite3")
        return
    admin = request.getfixturevalue("postgres")
    url, name = new_pg_database(admin)
    try:
        yield url
    finally:
        give_back_pg_database(admin, name)


@pytest.fixture
def hub_db(hub_url: str) -> Iterator[Database]:
    db = Database(hub_url)
    db.migrate()
    yield db
    db.close()


class LiveHub:
    """The real server (uvicorn + the app) on a loopback port, in a thread of this process."""

    def __init__(
        self,
        db: Database,
        require_read_key: bool = False,
        sealer: Any = None,
        clock: Any = time.time,
        port: int | None = None,
        **limits: Any,
    ) -> None:
        import uvicorn

        from promoter.hub.app import build_app
        from promoter.hub.ingest import Limits

        self.db = db
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            build_app(db, Limits(**limits), clock, require_read_key=require_read_key, sealer=sealer),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="off",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveHub:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the hub did not start in 10s")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def live_hub(hub_db: Database) -> Iterator[LiveHub]:
    with LiveHub(hub_db) as live:
        yield live


def chromium_session(javascript: bool = True) -> Iterator[Any]:
    """Debian's headless chromium through Debian's chromedriver (Selenium), for one test module;
    skipped (failed under CI) without them."""
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
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(service=Service(executable_path=str(driver_path)), options=options)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()


@contextmanager
def served(
    url: str, *args: str, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``promoter hub serve --database URL ARGS...`` as a process of its own on a loopback port,
    once its ``/healthz`` answers (20 s at most): the process and its base URL; killed after."""
    import requests

    port = free_port()
    command = [sys.executable, "-m", "promoter", "hub", "serve", "--database", url]
    proc = subprocess.Popen(
        [*command, "--listen", f"127.0.0.1:{port}", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            if requests.get(f"{base}/healthz", timeout=1).status_code == 200:
                break
        except requests.ConnectionError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise AssertionError(f"the hub did not start: {proc.stderr.read() if proc.stderr else b''!r}")
        time.sleep(0.05)
    try:
        yield proc, base
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def register(
    db: Database, name: str, environment: str = "dev", cluster_type: str = "small", now: float | None = None
) -> str:
    """Register cluster ``name`` (at ``now`` on the hub's clock, else the real time); its key."""
    return keys.add_cluster_key(db, name, environment, cluster_type, now=now)[1]


def now_rfc3339(offset: float = 0.0) -> str:
    return datetime.fromtimestamp(time.time() + offset, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def flux_event(
    revision: str | None,
    *,
    severity: str = "info",
    reason: str = "ReconciliationSucceeded",
    name: str = "platform",
    kind: str = "Kustomization",
    metadata: dict[str, str] | None = None,
    revision_key: str = "revision",
    offset: float = 0.0,
) -> dict[str, Any]:
    """A notification-controller event, from tests/fixtures/hub/flux-event.json."""
    event: dict[str, Any] = copy.deepcopy(json.loads((FIXTURES / "flux-event.json").read_text()))
    event["involvedObject"].update({"kind": kind, "name": name})
    event.update({"severity": severity, "reason": reason, "timestamp": now_rfc3339(offset)})
    meta = dict(metadata or {})
    if revision is not None:
        meta[revision_key] = revision
    event["metadata"] = meta
    return event


def argocd_body(
    revision: str, *, sync: str = "Synced", health: str = "Healthy", phase: str = "Succeeded"
) -> dict[str, Any]:
    """What the documented Argo CD template sends, from tests/fixtures/hub/argocd-app.json."""
    app: dict[str, Any] = copy.deepcopy(json.loads((FIXTURES / "argocd-app.json").read_text()))
    app["status"]["sync"].update({"status": sync, "revision": revision})
    app["status"]["health"]["status"] = health
    app["status"]["operationState"].update({"phase": phase})
    app["status"]["operationState"]["syncResult"]["revision"] = revision
    return {"app": app}


def sign(body: bytes, key: str) -> str:
    return "sha256=" + hmac.new(key.encode(), body, hashlib.sha256).hexdigest()


def post_flux(url: str, cluster: str, key: str, event: dict[str, Any], **kwargs: Any) -> Any:
    import requests

    body = json.dumps(event).encode()
    headers = {
        "Content-Type": "application/json",
        "X-Signature": sign(body, key),
        "Gotk-Component": "kustomize-controller",
    }
    headers.update(kwargs.pop("headers", {}))
    return requests.post(f"{url}/v1/ingest/flux/{cluster}", data=body, headers=headers, timeout=10, **kwargs)


def report_count(db: Database) -> int:
    with db.transaction() as tx:
        row = tx.one("SELECT COUNT(*) FROM reports")
    return int(row[0]) if row else 0


def platform_repo(root: Path, commits: int = 2, branch: str = "dev") -> tuple[str, list[str]]:
    """A platform repo whose ``branch`` has ``commits`` renders as the promoter lays them out
    (cluster-type folders, provenance); its path and the commits' shas, oldest first."""
    repo = root / "platform"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "--quiet", f"--initial-branch={branch}")
    shas = []
    for i in range(commits):
        for cluster_type in ("small", "large"):
            folder = repo / cluster_type / "hello-world-functional-test"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "reconciler.yaml").write_text(f"# render {i}\n")
        if i:
            folder = repo / "small" / "observability-metrics"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "reconciler.yaml").write_text("# metrics\n")
        (repo / ".promoter").mkdir(exist_ok=True)
        (repo / ".promoter" / "promotion.yaml").write_text(
            f"apiVersion: promoter.dev/v1alpha1\nkind: Promotion\nenvironment: {branch}\nmainCommit: {str(i) * 40}\n"
        )
        git("add", "-A")
        git("commit", "--quiet", "-m", f"render {i}")
        shas.append(git("rev-parse", "HEAD"))
    return str(repo), shas


# --- Event streams as the controllers produce them ------------------------------------------

#: The API group each Flux kind's controller prefixes its metadata keys with.
FLUX_GROUPS = {
    "Kustomization": "kustomize.toolkit.fluxcd.io",
    "HelmRelease": "helm.toolkit.fluxcd.io",
    "GitRepository": "source.toolkit.fluxcd.io",
    "OCIRepository": "source.toolkit.fluxcd.io",
}
FLUX_CONTROLLERS = {
    "kustomize.toolkit.fluxcd.io": "kustomize-controller",
    "helm.toolkit.fluxcd.io": "helm-controller",
    "source.toolkit.fluxcd.io": "source-controller",
}


def go_json(value: Any) -> bytes:
    """``value`` as Go's ``json.Marshal`` writes it: compact, dicts in the order given (a struct's
    field order; build map-valued fields with ``sorted`` keys, as Go sorts map keys), ``<``, ``>``
    and ``&`` escaped as ``\\u003c``, ``\\u003e``, ``\\u0026``, and U+2028/U+2029 escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text.encode()


def flux_stream_event(
    kind: str,
    name: str,
    reason: str,
    message: str,
    when: str,
    *,
    severity: str = "info",
    revision: str = "",
    origin_revision: str = "",
    extra: dict[str, str] | None = None,
    alert_metadata: dict[str, str] | None = None,
    legacy: bool = False,
) -> tuple[bytes, dict[str, str]]:
    """The body and the Flux-specific header of one event as notification-controller's
    ``generic-hmac`` provider posts it: the controller writes metadata keys prefixed with its API
    group (``kustomize.toolkit.fluxcd.io/revision``); notification-controller keeps only the
    keys of the object's group, drops ``checksum``, ``digest`` and ``token``, strips the prefix
    (``legacy`` keeps it, as before RFC 0008), and adds the Alert's ``eventMetadata``."""
    group = FLUX_GROUPS[kind]
    written = {
        f"{group}/{k}": v for k, v in (("revision", revision), ("originRevision", origin_revision)) if v
    }
    written.update({f"{group}/{k}": v for k, v in (extra or {}).items()})
    metadata: dict[str, str] = {}
    for key, value in written.items():
        short = key.removeprefix(f"{group}/")
        if key.startswith(group + "/") and short not in ("checksum", "digest", "token"):
            metadata[key if legacy else short] = value
    metadata.update(alert_metadata or {})
    controller = FLUX_CONTROLLERS[group]
    event: dict[str, Any] = {
        "involvedObject": {
            "kind": kind,
            "namespace": "flux-system",
            "name": name,
            "uid": f"{hashlib.sha1(name.encode()).hexdigest()[:8]}-0000-4000-8000-000000000000",
            "apiVersion": f"{group}/v1",
            "resourceVersion": "8815",
        },
        "severity": severity,
        "timestamp": when,
        "message": message,
        "reason": reason,
    }
    if metadata:
        event["metadata"] = dict(sorted(metadata.items()))
    event["reportingController"] = controller
    event["reportingInstance"] = f"{controller}-7f5d9c8d4-x2x9q"
    return go_json(event), {"gotk-component": controller}


def post_flux_body(url: str, cluster: str, key: str, body: bytes, extra: dict[str, str]) -> Any:
    """POST ``body`` as notification-controller does: its header names and Go's User-Agent."""
    import requests

    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Go-http-client/1.1",
        "X-Signature": sign(body, key),
        **extra,
    }
    return requests.post(f"{url}/v1/ingest/flux/{cluster}", data=body, headers=headers, timeout=10)


def rfc3339(at: float) -> str:
    """A Flux timestamp: RFC 3339 in UTC, whole seconds."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def argocd_app(
    revision: str,
    *,
    sync: str = "Synced",
    health: str = "Healthy",
    phase: str | None = "Succeeded",
    reconciled_at: str | None = None,
    resources: list[dict[str, Any]] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    operation_message: str = "successfully synced (all tasks run)",
) -> dict[str, Any]:
    """An Argo CD 3 Application as notifications-engine hands it to a template (``.app``):
    ``status.health`` carries the status only; reasons are in ``resources`` and ``conditions``."""
    app: dict[str, Any] = copy.deepcopy(json.loads((FIXTURES / "argocd-app.json").read_text()))
    status = app["status"]
    status["sync"].update({"status": sync, "revision": revision})
    status["health"] = {"status": health}
    if phase is None:
        del status["operationState"]
    else:
        status["operationState"].update({"phase": phase, "message": operation_message})
        status["operationState"]["syncResult"]["revision"] = revision
    if reconciled_at is not None:
        status["reconciledAt"] = reconciled_at
    status["resources"] = resources or []
    if conditions is not None:
        status["conditions"] = conditions
    return app


def argocd_template_body(app: dict[str, Any]) -> bytes:
    """What the documented ``template.promoter-hub`` renders for ``app``: the template text with
    each ``{{toJson ...}}`` replaced by Go's JSON of that field (map keys sorted; ``null`` for a
    missing one). The text around them is kept as the template writes it."""
    status = app.get("status", {})

    def to_json(value: Any) -> str:
        return go_json(_sorted(value)).decode()

    return (
        '{"app": {"metadata": '
        + to_json(app.get("metadata"))
        + ', "spec": '
        + to_json(app.get("spec"))
        + ",\n"
        ' "status": {"sync": '
        + to_json(status.get("sync"))
        + ', "health": '
        + to_json(status.get("health"))
        + ",\n"
        '            "operationState": ' + to_json(status.get("operationState")) + ",\n"
        '            "reconciledAt": ' + to_json(status.get("reconciledAt")) + ",\n"
        '            "conditions": ' + to_json(status.get("conditions")) + ",\n"
        '            "resources": ' + to_json(status.get("resources")) + "}}}\n"
    ).encode()


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def post_argocd_body(url: str, cluster: str, key: str, body: bytes) -> Any:
    """POST ``body`` as notifications-engine's webhook service does with the documented headers."""
    import requests

    headers = {
        "Content-Type": "application/json",
        "Authorization": f"Bearer {key}",
        "User-Agent": "Go-http-client/1.1",
    }
    return requests.post(f"{url}/v1/ingest/argocd/{cluster}", data=body, headers=headers, timeout=10)
