"""Cluster keys at rest, on both engines: sealed with the server secret (PROMOTER_HUB_SECRET or
its _FILE), so the database holds no usable key; Flux signatures still check; one command
(keys reseal) seals keys kept in the clear and rotates the secret, all or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from promoter.cli.main import cli
from promoter.errors import UsageError
from promoter.hub import keys
from promoter.hub.db import Database
from promoter.hub.sealing import Sealer, SealError
from tests.support.hub_support import LiveHub, flux_event, free_port, post_flux

OLD, NEW = "an old server secret, 32 chars!!", "a new server secret, long enough"


def hub(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(
        cli, ["hub", *args], env={"PROMOTER_HUB_SECRET": "", "PROMOTER_HUB_NEW_SECRET": "", **(env or {})}
    )


def _kept(db: Database) -> list[tuple[str, str]]:
    with db.transaction(write=False) as tx:
        return [(str(r[0]), str(r[1])) for r in tx.rows("SELECT role, secret FROM sender_keys ORDER BY id")]


def test_seal_and_open() -> None:
    sealer = Sealer(OLD)
    sealed = sealer.seal("phk_abc", "digest-1")
    assert sealed.startswith("sealed1:") and "phk_abc" not in sealed
    assert sealer.open(sealed, "digest-1") == "phk_abc"
    with pytest.raises(SealError):
        Sealer(NEW).open(sealed, "digest-1")  # another secret
    with pytest.raises(SealError):
        sealer.open(sealed, "digest-2")  # moved to another key's row
    with pytest.raises(UsageError):
        Sealer("short")


def test_keys_are_sealed_at_rest_and_signatures_still_check(hub_db: Database, tmp_path: Path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text(OLD + "\n")
    env = {"PROMOTER_HUB_SECRET_FILE": str(secret_file)}
    added = hub(
        "keys", "add", "edge-1", "--env", "dev", "--cluster-type", "small", "--database", hub_db.url, env=env
    )
    assert added.exit_code == 0, added.output
    key = added.stdout.split()[-1]
    assert hub("keys", "add-promoter", "ci", "--database", hub_db.url).exit_code == 0
    kept = _kept(hub_db)
    assert [role for role, _ in kept] == ["cluster", "promoter"]
    assert kept[0][1].startswith("sealed1:") and kept[1][1] == ""  # a Bearer-only key is not kept
    assert all("phk_" not in secret for _, secret in kept)
    event = flux_event("dev@sha1:" + "1" * 40)
    with LiveHub(hub_db, sealer=Sealer(OLD)) as live:
        assert post_flux(live.url, "edge-1", key, event).status_code == 201
    with LiveHub(hub_db) as live:  # no secret: the sealed key cannot check a signature
        assert post_flux(live.url, "edge-1", key, flux_event("dev@sha1:" + "2" * 40)).status_code == 401
    unsealed = hub(
        "keys", "add", "edge-2", "--env", "dev", "--cluster-type", "small", "--database", hub_db.url
    )
    assert unsealed.exit_code == 2 and "keys are sealed" in unsealed.output


def test_reseal_seals_clear_keys_and_rotates_the_secret(hub_db: Database) -> None:
    clear_key = keys.add_cluster_key(hub_db, "edge-1", "dev", "small")[1]
    assert _kept(hub_db)[0][1] == clear_key  # kept in the clear (no secret yet)
    sealed = hub("keys", "reseal", "--database", hub_db.url, env={"PROMOTER_HUB_NEW_SECRET": OLD})
    assert (
        sealed.exit_code == 0
        and "sealed 1 cluster key(s)" in sealed.output
        and "1 were kept in the clear" in sealed.output
    )
    assert _kept(hub_db)[0][1].startswith("sealed1:")
    wrong = hub(
        "keys",
        "reseal",
        "--database",
        hub_db.url,
        env={"PROMOTER_HUB_SECRET": NEW, "PROMOTER_HUB_NEW_SECRET": OLD},
    )
    assert wrong.exit_code == 2 and "sealed with another secret" in wrong.output
    before = _kept(hub_db)
    rotated = hub(
        "keys",
        "reseal",
        "--database",
        hub_db.url,
        env={"PROMOTER_HUB_SECRET": OLD, "PROMOTER_HUB_NEW_SECRET": NEW},
    )
    assert rotated.exit_code == 0, rotated.output
    after = _kept(hub_db)
    assert after != before and Sealer(NEW).open(after[0][1], keys.digest(clear_key)) == clear_key
    with pytest.raises(UsageError, match="does not open"):
        keys.check_sealer(hub_db, Sealer(OLD))
    with LiveHub(hub_db, sealer=Sealer(NEW)) as live:
        assert post_flux(live.url, "edge-1", clear_key, flux_event("dev@sha1:" + "1" * 40)).status_code == 201


def test_serve_refuses_sealed_keys_without_their_secret(tmp_path: Path) -> None:
    url = str(tmp_path / "hub.sqlite3")
    db = Database(url)
    db.migrate()
    keys.add_cluster_key(db, "edge-1", "dev", "small", Sealer(OLD))
    db.close()
    listen = f"127.0.0.1:{free_port()}"
    for env, words in (({}, "keys are sealed"), ({"PROMOTER_HUB_SECRET": NEW}, "does not open")):
        answer = hub("serve", "--database", url, "--listen", listen, env=env)
        assert answer.exit_code == 2 and words in answer.output and answer.output.count("\n") == 1
