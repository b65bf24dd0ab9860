"""``promoter hub ...``: run the deployment observability hub, manage its senders' keys,
report to it, record platform commits in it (docs/hub.md). The reads are in ``hub_reads``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from promoter.cli.commands.completion import complete_environment_list
from promoter.cli.commands.hub_reads import DATABASE, OUTPUT, URL, env_option, read_commands
from promoter.clock import parse_duration
from promoter.errors import ForgeError, UsageError
from promoter.gates.http import HttpProblem
from promoter.gates.hubapi import TOKEN_ENV, HubClient, secret_from_env
from promoter.ghactions import runner
from promoter.hub import keys as hub_keys
from promoter.hub.commits import record_commit
from promoter.hub.db import Database, existing
from promoter.hub.ingest import DEFAULT_MAX_AGE, Limits, commit_from_json
from promoter.hub.payloads import STATES, IngestError
from promoter.hub.sealing import NEW_SECRET_ENV, SECRET_ENV, Sealer
from promoter.hub.sync import DEFAULT_MAX_COMMITS, describe_commit
from promoter.hub.sync import sync as sync_history

KEY_ENV = "PROMOTER_HUB_KEY"


@click.group()
def hub() -> None:
    """The deployment observability hub: clusters report what they run, pipelines gate on it.

    \b
    Examples:
      promoter hub serve --database /var/lib/promoter/hub.sqlite3 --listen 0.0.0.0:8080
      promoter hub keys add east-1 --environment prod --cluster-type east-large
      promoter hub rollout --url http://hub:8080 --env prod --commit 4f0e7ab -o json
    """


@hub.command()
@DATABASE
@click.option("--listen", default="127.0.0.1:8080", show_default=True, help="HOST:PORT to serve on.")
@click.option("--max-body", default=1024 * 1024, show_default=True, help="Largest accepted body, in bytes.")
@click.option(
    "--max-age", default=DEFAULT_MAX_AGE, show_default=True, help="Oldest accepted event, in seconds."
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    help="Processes serving the same port (PostgreSQL, or a busy SQLite).",
)
@click.option(
    "--retain",
    default=None,
    help="Delete history older than this, in the background (e.g. 90d; default: keep it).",
)
@click.option(
    "--require-read-key",
    is_flag=True,
    help="The API and pages answer only a reader's or a promoter's key (keys add-reader).",
)
@click.option(
    "--demo-clusters",
    is_flag=True,
    help="The demo's database only (make demo-hub): its simulated clusters keep reporting, and a new"
    " demo run's database is served once it replaces this one.",
)
@click.option(
    "--wake-repo",
    default=None,
    metavar="OWNER/NAME",
    help="Send this control plane promoter-wake when a recorded commit's verdict changes "
    "(a GitHub token or App in the environment; docs/hub.md#waking-the-promotion).",
)
@click.option(
    "--wake-stale-after",
    default=None,
    metavar="DURATION",
    help="With --wake-repo: a cluster silent this long is stale in the verdict; give your hub gates'"
    " staleAfter (default 30m, theirs).",
)
def serve(
    database: str | None,
    listen: str,
    max_body: int,
    max_age: float,
    workers: int,
    retain: str | None,
    require_read_key: bool,
    demo_clusters: bool,
    wake_repo: str | None,
    wake_stale_after: str | None,
) -> None:
    """Serve the ingest endpoints, the JSON API and the pages (migrating the schema first)."""
    # Deferred: the hub extra (starlette) may not be installed, and loading it adds about 120 ms
    # to every other hub command's start (measured after promoter.cli.commands.hub: 118-123 ms).
    try:
        from promoter.hub import server, wake  # optional: needs the hub extra
    except ImportError as err:
        raise UsageError(f"the hub needs its extra: pip install 'promoter[hub]' ({err})") from err
    seconds = server.parse_retention(retain) if retain else None
    limits = Limits(max_body=max_body, max_age=max_age)
    db = Database.from_option(database)
    if demo_clusters:
        # Deferred: the simulated clusters load requests, about 135 ms of every hub command's start.
        from promoter.demos.hub import Heartbeats  # only when serving the demo's database

        db.migrate()
        Heartbeats(Path(db.path), f"http://{listen}").start()
    if wake_stale_after and not wake_repo:
        raise UsageError("--wake-stale-after is the waker's: give it with --wake-repo")
    if wake_repo:  # the hub wakes the promotion (promoter/hub/wake.py), on a database of its own
        stale_after = _duration("--wake-stale-after", wake_stale_after or "30m")
        wake.start_waking(Database.from_option(database), wake_repo, stale_after=stale_after)
    server.serve(db, listen, limits, workers, seconds, require_read_key)


@hub.command()
@DATABASE
def migrate(database: str | None) -> None:
    """Bring the database's schema up to date (serve does this too)."""
    db = Database.from_option(database)
    applied = db.migrate()
    click.echo(f"{db.describe()}: " + (f"applied {applied}" if applied else "up to date"))


@hub.group()
def keys() -> None:
    """Senders' keys: one per cluster, and one per promoter that records commits."""


@keys.command("add")
@click.argument("cluster")
@env_option(required=True, help="The environment the cluster belongs to.")
@click.option("--cluster-type", required=True, help="The cluster's cluster type (a ClusterType's name).")
@DATABASE
def keys_add(cluster: str, environment: str, cluster_type: str, database: str | None) -> None:
    """Register CLUSTER and print a new key for it (shown this once)."""
    db = Database.from_option(database)
    db.migrate()
    sealer = Sealer.from_env()
    hub_keys.check_sealer(db, sealer)  # every key sealed with one secret
    key_id, key = hub_keys.add_cluster_key(db, cluster, environment, cluster_type, sealer)
    _mask_in_actions(key)
    click.echo(
        f"# key {key_id} of cluster {cluster} ({environment}/{cluster_type}); it is not shown again", err=True
    )
    click.echo(key)


@keys.command("add-promoter")
@click.argument("name")
@DATABASE
def keys_add_promoter(name: str, database: str | None) -> None:
    """Print a new key for the promoter NAME, with which its runs record platform commits (PROMOTER_HUB_TOKEN)."""
    _print_new_key(database, name, "promoter", hub_keys.add_promoter_key)


@keys.command("add-reader")
@click.argument("name")
@DATABASE
def keys_add_reader(name: str, database: str | None) -> None:
    """Print a new key for the reader NAME, which may read the API and pages of a hub served with
    --require-read-key (PROMOTER_HUB_READ_KEY for the read commands; a browser asks for it as a
    password)."""
    _print_new_key(database, name, "reader", hub_keys.add_reader_key)


def _print_new_key(
    database: str | None, name: str, kind: str, add: Callable[[Database, str], tuple[int, str]]
) -> None:
    db = Database.from_option(database)
    db.migrate()
    key_id, key = add(db, name)
    _mask_in_actions(key)
    click.echo(f"# {kind} key {key_id} ({name}); it is not shown again", err=True)
    click.echo(key)


@keys.command("reseal")
@DATABASE
def keys_reseal(database: str | None) -> None:
    """Seal every cluster key with the secret in PROMOTER_HUB_NEW_SECRET (or its _FILE),
    opening it with PROMOTER_HUB_SECRET (none for keys kept in the clear): all or nothing.
    Then restart the hub with the new secret as PROMOTER_HUB_SECRET."""
    db = existing(database)
    db.migrate()
    new = Sealer.from_env(NEW_SECRET_ENV)
    if new is None:
        raise UsageError(f"{NEW_SECRET_ENV} is not set: the secret to seal the keys with")
    resealed, clear = hub_keys.reseal(db, Sealer.from_env(), new)
    click.echo(
        f"sealed {resealed} cluster key(s) with {NEW_SECRET_ENV} ({clear} were kept in the clear);"
        f" serve with it as {SECRET_ENV} from now on"
    )


def _duration(option: str, text: str) -> float:
    """Seconds of a duration option (30m, 1h); more than zero."""
    try:
        seconds = parse_duration(text)
    except ValueError as err:
        raise UsageError(f"{option} {text!r}: {err}") from err
    if seconds <= 0:
        raise UsageError(f"{option} {text!r}: must be more than zero")
    return seconds


def _mask_in_actions(key: str) -> None:
    """In GitHub Actions, the log shows the new key as *** (a captured stdout still has it)."""
    if runner.active():
        for line in runner.mask_commands([key]):
            runner.emit(line)


@keys.command("list")
@DATABASE
@OUTPUT
def keys_list(database: str | None, output: str) -> None:
    """Every key's id, owner and dates (never the key)."""
    db = existing(database)
    db.migrate()
    rows = hub_keys.list_keys(db)
    if output == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        state = "revoked" if r["revokedAt"] else "active"
        where = f" {r['environment']}/{r['clusterType']}" if r["environment"] else ""
        click.echo(f"{r['id']:>5}  {r['owner']:<30} {r['role']:<9} {state:<8}{where}")


@keys.command("revoke")
@click.argument("name")
@click.option(
    "--key", "key_id", type=int, default=None, help="Revoke only this key id (default: all of NAME's)."
)
@DATABASE
def keys_revoke(name: str, key_id: int | None, database: str | None) -> None:
    """Revoke NAME's keys; a cluster with none left is no longer counted."""
    count = hub_keys.revoke(Database.from_option(database), name, key_id)
    click.echo(f"revoked {count} key{'s' if count != 1 else ''} of {name}")


@hub.command()
@click.option("--url", required=True, envvar="PROMOTER_HUB_URL", help="The hub's base URL.")
@click.option("--reconciler", required=True, help="What reconciled, e.g. Kustomization/flux-system/apps.")
@click.option("--state", required=True, type=click.Choice(STATES), help="How the reconciliation went.")
@click.option("--revision", default="", help="The revision applied: <branch>@sha1:<sha> or a sha.")
@click.option("--reason", default="", help="A one-word reason, as Flux's (ReconciliationSucceeded).")
@click.option("--message", default="", help="What the reconciler said.")
def report(url: str, reconciler: str, state: str, revision: str, reason: str, message: str) -> None:
    """Send one native report, with this cluster's key from PROMOTER_HUB_KEY (or the file
    PROMOTER_HUB_KEY_FILE names)."""
    key = secret_from_env(KEY_ENV)
    if not key:
        raise UsageError(f"{KEY_ENV} is not set: the cluster's key (promoter hub keys add)")
    body = {
        "reconciler": reconciler,
        "state": state,
        "revision": revision,
        "reason": reason,
        "message": message,
        "timestamp": datetime.now(UTC).isoformat(),
    }
    client = HubClient(url, key)
    try:
        answer = client.post("/v1/reports", body)
    except HttpProblem as err:
        raise _problem(err) from err
    click.echo(f"report {answer.get('id')} stored for cluster {answer.get('cluster')}")


def _problem(err: HttpProblem) -> Exception:
    if err.status is not None and 400 <= err.status < 500:
        return UsageError(str(err))
    return ForgeError(str(err))


def _sink(url: str | None, database: str | None) -> Any:
    """Where commits are recorded: the hub's API (with PROMOTER_HUB_TOKEN) or its database."""
    if url:
        client = HubClient.from_env(url)
        if not client.token:
            raise UsageError(f"{TOKEN_ENV} is not set: a promoter key (promoter hub keys add-promoter)")
        return client.record
    db = Database.from_option(database)
    db.migrate()

    def direct(body: dict[str, Any]) -> bool:
        try:
            return record_commit(db, commit_from_json(body), time.time())
        except IngestError as err:
            raise UsageError(err.message) from err

    return direct


@hub.command()
@click.option("--platform-repo", required=True, help="The platform repo: a path or git URL.")
@env_option(required=True, help="The environment whose platform branch this is.")
@click.option("--branch", default=None, help="The environment's platform branch (default: the environment).")
@click.option("--path", "root", default="", help="The environment's folder in the branch (gitops.path).")
@click.option(
    "--environments",
    default="",
    shell_complete=complete_environment_list,
    help="All environments in the Pipeline's order, comma-separated.",
)
@click.option(
    "--max-commits", default=DEFAULT_MAX_COMMITS, show_default=True, help="The most commits to read back."
)
@URL
@DATABASE
def sync(
    platform_repo: str,
    environment: str,
    branch: str | None,
    root: str,
    environments: str,
    max_commits: int,
    url: str | None,
    database: str | None,
) -> None:
    """Record a platform branch's history at the hub (for a hub that started late)."""
    order = tuple(e.strip() for e in environments.split(",") if e.strip())
    try:
        new, known = sync_history(
            platform_repo,
            environment,
            branch or environment,
            root.strip("/"),
            _sink(url, database),
            order,
            max_commits,
        )
    except HttpProblem as err:
        raise _problem(err) from err
    click.echo(f"{environment}: recorded {new} platform commit(s), {known} already known")


@hub.command()
@click.option("--platform-repo", required=True, help="The platform repo: a path or git URL.")
@env_option(required=True, help="The environment the commit was merged into.")
@click.option("--commit", required=True, help="The merged platform commit.")
@click.option("--branch", default=None, help="The environment's platform branch (default: the environment).")
@click.option("--path", "root", default="", help="The environment's folder in the branch (gitops.path).")
@click.option("--main-commit", default=None, help="The main commit it carries (default: its provenance's).")
@click.option(
    "--environments",
    default="",
    shell_complete=complete_environment_list,
    help="All environments in the Pipeline's order, comma-separated.",
)
@URL
@DATABASE
def record(
    platform_repo: str,
    environment: str,
    commit: str,
    branch: str | None,
    root: str,
    main_commit: str | None,
    environments: str,
    url: str | None,
    database: str | None,
) -> None:
    """Record one merged platform commit (what a promotion run does with PROMOTER_HUB_URL)."""
    order = tuple(e.strip() for e in environments.split(",") if e.strip())
    sink = _sink(url, database)
    try:
        body = describe_commit(
            platform_repo, commit, root.strip("/"), environment, branch or environment, main_commit, order
        )
        new = sink(body)
    except HttpProblem as err:
        raise _problem(err) from err
    click.echo(f"{environment}: {body['sha'][:12]} " + ("recorded" if new else "was recorded already"))


for command in read_commands():
    hub.add_command(command)
