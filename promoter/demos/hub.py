"""The demo's deployment observability hub: a real hub (SQLite, the HTTP server on loopback),
simulated clusters of every cluster type of every environment that report as Flux and Argo CD
would (signed Flux events, Argo CD notifications with a Bearer key) each time their
environment's platform branch moves, and a ``hub`` gate on every environment of the demo's
Pipeline. Runs only when the ``hub`` extra is installed."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import random
import shutil
import socket
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests
import yaml

from promoter.gates.hubapi import TOKEN_ENV, URL_ENV
from promoter.gitcmd import Git
from promoter.hub import keys
from promoter.hub.db import Database

CLUSTERS_PER_TYPE = 2
HEARTBEAT_EVERY = 60.0


@dataclass(frozen=True)
class SimulatedCluster:
    name: str
    environment: str
    cluster_type: str
    reconciler: str  # flux | argocd
    key: str


def available() -> bool:
    try:
        import starlette  # noqa: F401  # optional: the hub extra
        import uvicorn  # noqa: F401  # optional: the hub extra
    except ImportError:
        return False
    return True


def cluster_types(folder: Path) -> list[tuple[str, str]]:
    """(name, reconciler) of each ClusterType in an environment's folder."""
    found = []
    for path in sorted(folder.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "ClusterType":
                found.append(
                    (str(doc["metadata"]["name"]), str((doc.get("spec") or {}).get("reconciler", "flux")))
                )
    return found


def gated_control_plane(source: Path, target: Path, url: str) -> None:
    """A copy of the sample control plane whose every environment is also gated on the hub."""
    shutil.copytree(source, target)
    pipeline_path = target / "promoter.yaml"
    pipeline = yaml.safe_load(pipeline_path.read_text())
    for env in pipeline["spec"]["environments"]:
        env.setdefault("gates", []).insert(
            0, {"hub": {"url": url, "minPercent": 100, "interval": "1s", "bake": "1s"}}
        )
    header = "# The sample Pipeline, every environment also gated on the demo's hub.\n"
    pipeline_path.write_text(header + yaml.safe_dump(pipeline, sort_keys=False))


class DemoHub:
    """The hub server and the simulated clusters, in threads of this process."""

    def __init__(self, root: Path, environments: Path, platform: Path) -> None:
        import uvicorn  # optional: the hub extra

        from promoter.hub.app import build_app  # optional: needs starlette

        self.db = Database(str(root / "hub.sqlite3"))
        self.db.migrate()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        config = uvicorn.Config(build_app(self.db), host="127.0.0.1", port=port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.platform = Git(platform)
        self.clusters = self._register(environments)
        self._saved = {name: os.environ.get(name) for name in (TOKEN_ENV, URL_ENV)}
        os.environ[TOKEN_ENV] = keys.add_promoter_key(self.db, "demo")[1]
        os.environ[URL_ENV] = self.url  # runs record what they merge, with the Pipeline's order and graph
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self.server.run, daemon=True),
            threading.Thread(target=self._simulate, daemon=True),
        ]

    def _register(self, environments: Path) -> list[SimulatedCluster]:
        clusters = []
        for env_folder in sorted(p for p in environments.iterdir() if p.is_dir()):
            for cluster_type, reconciler in cluster_types(env_folder):
                for i in range(1, CLUSTERS_PER_TYPE + 1):
                    name = f"{env_folder.name}-{cluster_type}-{i}"
                    key = keys.add_cluster_key(self.db, name, env_folder.name, cluster_type)[1]
                    clusters.append(SimulatedCluster(name, env_folder.name, cluster_type, reconciler, key))
        return clusters

    def __enter__(self) -> DemoHub:
        for thread in self._threads:
            thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.server.should_exit = True
        for thread in self._threads:
            thread.join(5)
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    def _simulate(self) -> None:
        """Each cluster reconciles its environment's branch head, a moment after it moves."""
        seen: dict[str, str] = {}
        rng = random.Random(7)
        session = requests.Session()
        while not self._stop.wait(0.3):
            for env in sorted({c.environment for c in self.clusters}):
                head = self.platform.rev_parse(f"refs/heads/{env}")
                if not head or seen.get(env) == head:
                    continue
                seen[env] = head
                for cluster in (c for c in self.clusters if c.environment == env):
                    time.sleep(rng.uniform(0.0, 0.05))
                    self._report(session, cluster, env, head)

    def _report(self, session: requests.Session, cluster: SimulatedCluster, branch: str, sha: str) -> None:
        _post(session, self.url, cluster, branch, sha)


def _post(session: requests.Session, url: str, cluster: SimulatedCluster, branch: str, sha: str) -> int:
    """Post one report as the cluster's controller would; 1 when the hub took it, else 0."""
    if cluster.reconciler == "argocd":
        body = json.dumps({"app": _application(cluster, branch, sha)}).encode()
        headers = {"Authorization": f"Bearer {cluster.key}"}
        path = f"/v1/ingest/argocd/{cluster.name}"
    else:
        body = json.dumps(_flux_event(cluster, branch, sha)).encode()
        signature = hmac.new(cluster.key.encode(), body, hashlib.sha256).hexdigest()
        headers = {"X-Signature": f"sha256={signature}"}
        path = f"/v1/ingest/flux/{cluster.name}"
    # A failed post is dropped: the hub is stopping (a notification-controller would retry).
    with contextlib.suppress(requests.RequestException):
        answer = session.post(
            url + path, data=body, headers={**headers, "Content-Type": "application/json"}, timeout=10
        )
        return 1 if answer.ok else 0
    return 0


def _flux_event(cluster: SimulatedCluster, branch: str, sha: str) -> dict[str, Any]:
    took = random.uniform(0.8, 3.0)  # the message changes each time, as kustomize-controller's does
    return {
        "involvedObject": {
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "name": f"platform-{cluster.cluster_type}",
            "namespace": "flux-system",
        },
        "severity": "info",
        "timestamp": _now(),
        "message": f"Reconciliation finished in {took:.1f}s, next run in 1m0s",
        "reason": "ReconciliationSucceeded",
        "metadata": {
            "revision": f"{branch}@sha1:{sha}",
            "cluster": cluster.name,
            "clusterType": cluster.cluster_type,
        },
        "reportingController": "kustomize-controller",
        "reportingInstance": "kustomize-controller-demo",
    }


def _application(cluster: SimulatedCluster, branch: str, sha: str) -> dict[str, Any]:
    return {
        "metadata": {"name": f"platform-{cluster.cluster_type}", "namespace": "argocd"},
        "spec": {
            "source": {"repoURL": "platform.git", "targetRevision": branch, "path": cluster.cluster_type}
        },
        "status": {
            "sync": {"status": "Synced", "revision": sha},
            "health": {"status": "Healthy"},
            "operationState": {"phase": "Succeeded", "syncResult": {"revision": sha}},
            "reconciledAt": _now(),  # the documented template's heartbeat
        },
    }


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Heartbeats:
    """What keeps ``make demo-hub`` honest: while it serves the demo's database, each simulated
    cluster reports again every ``every`` seconds at the commit it last reported, as Flux's
    Kustomizations and Argo CD's documented trigger do while nothing changes; and when ``make
    demo`` replaces the database (a new run), the server starts again on the new one rather than
    serve a deleted file."""

    def __init__(self, database: Path, url: str, every: float = HEARTBEAT_EVERY) -> None:
        self.database, self.url, self.every = database, url.rstrip("/"), every
        # Held open, so that its inode number cannot be given to the next run's file.
        self._fd = os.open(database, os.O_RDONLY)
        self._stop = threading.Event()

    def start(self) -> Heartbeats:
        threading.Thread(target=self._loop, name="demo-heartbeats", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        os.close(self._fd)

    def replaced(self) -> bool:
        """Whether the file at the database's path is no longer the one this process opened."""
        opened = os.fstat(self._fd)
        try:
            return opened.st_nlink == 0 or self.database.stat().st_ino != opened.st_ino
        except FileNotFoundError:
            return True

    def beat(self) -> int:
        """Each simulated cluster's reports, again; how many the hub took."""
        db = Database(str(self.database))
        try:
            with db.transaction(write=False) as tx:
                rows = tx.rows(
                    "SELECT DISTINCT c.name, c.environment, c.cluster_type, r.source, r.revision FROM clusters c"
                    " JOIN reconcilers r ON r.cluster = c.name WHERE c.revoked_at IS NULL AND r.role = 'apply'"
                    " ORDER BY c.name"
                )
                secrets = {str(r[0]): keys.cluster_with_secrets(tx, str(r[0]))[1] for r in rows}
        finally:
            db.close()
        taken = 0
        with requests.Session() as session:
            for name, env, cluster_type, source, revision in rows:
                if not secrets.get(name):
                    continue
                cluster = SimulatedCluster(name, env, cluster_type, source, secrets[name][0])
                taken += _post(session, self.url, cluster, env, revision)
        return taken

    def _loop(self) -> None:
        due = time.monotonic() + 2.0  # the server's first moments
        while not self._stop.wait(1.0):
            if self.replaced():
                self._restart()
                return
            if time.monotonic() >= due:
                self.beat()
                due = time.monotonic() + self.every

    def _restart(self) -> None:
        """Wait for the new run's database, then serve it: this process, started again."""
        while not self.database.exists() and not self._stop.wait(0.5):
            pass
        if not self._stop.is_set():
            print(
                f"demo: {self.database} was replaced (a new demo run): serving the new one", file=sys.stderr
            )
            os.execv(sys.executable, [sys.executable, "-m", "promoter", *sys.argv[1:]])
