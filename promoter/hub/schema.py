"""The hub's schema, as numbered migrations that run the same on SQLite and PostgreSQL.

Times are seconds since the epoch (``DOUBLE PRECISION``; Grafana reads them with
``to_timestamp(...)``). ``reports`` is the history of transitions: a report that changes
nothing a reader needs (same reconciler, state, revision and reason as its latest) moves that
reconciler's last-seen time instead of adding a row, and ``hub serve --retain`` prunes rows
older than the retention. ``reconcilers`` (each reconciler's latest report), the summary
columns of ``clusters`` and ``deployments`` (per reconciler and revision: first seen, first and
last success and failure) are kept in the same transaction, so reads need not scan history. Keys live in ``sender_keys`` alone, a table a
read-only dashboard user is not granted (docs/hub.md).

A migration is appended, never edited: a database records the versions it has run.
"""

from __future__ import annotations

_V1 = (
    "CREATE TABLE environments ("
    " name TEXT PRIMARY KEY, position INTEGER NOT NULL, branch TEXT NOT NULL DEFAULT '')",
    "CREATE TABLE clusters ("
    " name TEXT PRIMARY KEY, environment TEXT NOT NULL, cluster_type TEXT NOT NULL,"
    " created_at DOUBLE PRECISION NOT NULL, revoked_at DOUBLE PRECISION, last_seen DOUBLE PRECISION,"
    # The summary of the cluster's reconcilers, kept with each report (reads need not scan them):
    # the oldest recorded platform commit an applying reconciler is at, how many applying
    # reconcilers are at recorded platform commits and how many of those succeed, the newest
    # platform commit a failing reconciler is at, and when its newest current failure began.
    " platform_position BIGINT, platform_sha TEXT, platform_reconcilers INTEGER NOT NULL DEFAULT 0,"
    " platform_ok INTEGER NOT NULL DEFAULT 0, failing INTEGER NOT NULL DEFAULT 0,"
    " failing_position BIGINT, failing_since DOUBLE PRECISION)",
    "CREATE INDEX clusters_by_type ON clusters (environment, cluster_type)",
    "CREATE TABLE sender_keys ("
    " id {serial}, owner TEXT NOT NULL, role TEXT NOT NULL, digest TEXT NOT NULL UNIQUE,"
    " secret TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, revoked_at DOUBLE PRECISION)",
    "CREATE INDEX sender_keys_by_owner ON sender_keys (owner)",
    "CREATE TABLE reports ("
    " id {serial}, cluster TEXT NOT NULL, environment TEXT NOT NULL, cluster_type TEXT NOT NULL,"
    " source TEXT NOT NULL, reconciler TEXT NOT NULL, role TEXT NOT NULL, state TEXT NOT NULL,"
    " revision TEXT NOT NULL, branch TEXT NOT NULL, reason TEXT NOT NULL, message TEXT NOT NULL,"
    " event_time DOUBLE PRECISION, received_at DOUBLE PRECISION NOT NULL, digest TEXT NOT NULL UNIQUE)",
    "CREATE INDEX reports_by_cluster ON reports (cluster, received_at)",
    "CREATE INDEX reports_by_environment ON reports (environment, received_at)",
    "CREATE TABLE reconcilers ("
    " cluster TEXT NOT NULL, name TEXT NOT NULL, environment TEXT NOT NULL, role TEXT NOT NULL,"
    " source TEXT NOT NULL, state TEXT NOT NULL, revision TEXT NOT NULL, reason TEXT NOT NULL,"
    " message TEXT NOT NULL, event_time DOUBLE PRECISION, received_at DOUBLE PRECISION NOT NULL,"
    " failing_since DOUBLE PRECISION,"
    " last_report BIGINT NOT NULL, PRIMARY KEY (cluster, name))",
    "CREATE INDEX reconcilers_by_environment ON reconcilers (environment, revision)",
    "CREATE TABLE deployments ("
    " cluster TEXT NOT NULL, reconciler TEXT NOT NULL, revision TEXT NOT NULL,"
    " environment TEXT NOT NULL, first_seen DOUBLE PRECISION NOT NULL,"
    " first_success DOUBLE PRECISION, last_success DOUBLE PRECISION,"
    " first_failure DOUBLE PRECISION, last_failure DOUBLE PRECISION,"
    " PRIMARY KEY (cluster, reconciler, revision))",
    "CREATE INDEX deployments_by_revision ON deployments (environment, revision)",
    "CREATE TABLE platform_commits ("
    " environment TEXT NOT NULL, sha TEXT NOT NULL, parent TEXT, branch TEXT NOT NULL,"
    " main_commit TEXT, position BIGINT NOT NULL, committed_at DOUBLE PRECISION,"
    " recorded_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (environment, sha))",
    "CREATE INDEX platform_commits_by_position ON platform_commits (environment, position)",
    "CREATE TABLE assignments ("
    " environment TEXT NOT NULL, sha TEXT NOT NULL, cluster_type TEXT NOT NULL,"
    " deployment_target TEXT NOT NULL, PRIMARY KEY (environment, sha, cluster_type, deployment_target))",
)

_V2 = (
    # Whether a reconciler's sender reports at every reconcile (a heartbeat), and per cluster how
    # many of its reconcilers do: a cluster none of whose senders heartbeats is not stale by silence.
    "ALTER TABLE reconcilers ADD COLUMN heartbeat INTEGER NOT NULL DEFAULT 1",
    "ALTER TABLE clusters ADD COLUMN heartbeats INTEGER NOT NULL DEFAULT 1",
    # Applying reconcilers at no platform commit (a HelmRelease: its revision is a chart version)
    # whose latest report is progressing: the cluster is mid-change, not yet a success.
    "ALTER TABLE clusters ADD COLUMN busy INTEGER NOT NULL DEFAULT 0",
    # The platform repo's URL, to link commits on the pages.
    "ALTER TABLE environments ADD COLUMN repo_url TEXT NOT NULL DEFAULT ''",
    "CREATE INDEX reports_by_received ON reports (received_at)",
)

_V3 = (
    # The hub's own clock beside the cluster's: when the hub received a reconciler's first
    # success and failure at a revision, its latest success, and the first report of its current
    # failure. Cluster timestamps are compared only with the same cluster's; these are compared
    # only with the hub's own times (a commit's recording, now): one clock per comparison.
    "ALTER TABLE deployments ADD COLUMN first_success_received DOUBLE PRECISION",
    "ALTER TABLE deployments ADD COLUMN last_success_received DOUBLE PRECISION",
    "ALTER TABLE deployments ADD COLUMN first_failure_received DOUBLE PRECISION",
    "ALTER TABLE reconcilers ADD COLUMN failing_received DOUBLE PRECISION",
    "ALTER TABLE clusters ADD COLUMN failing_received DOUBLE PRECISION",
    # Waves: the wave whose landing made each platform commit, and per commit which wave (and
    # main commit) each cluster type's folder holds (the tree's provenance).
    "ALTER TABLE platform_commits ADD COLUMN wave TEXT NOT NULL DEFAULT ''",
    "CREATE TABLE commit_folders ("
    " environment TEXT NOT NULL, sha TEXT NOT NULL, cluster_type TEXT NOT NULL, wave TEXT NOT NULL,"
    " main_commit TEXT, PRIMARY KEY (environment, sha, cluster_type))",
    # Ingest and refusal counters for /metrics, shared by every hub process of the database.
    "CREATE TABLE counters (name TEXT NOT NULL, labels TEXT NOT NULL, value BIGINT NOT NULL DEFAULT 0,"
    " PRIMARY KEY (name, labels))",
)

_V4 = (
    # Holds, as the promoter last sent each environment's (order of arrival): wave '' is the
    # whole environment; held_at and held_until are the promoter's times, recorded_at the hub's.
    "CREATE TABLE holds ("
    " environment TEXT NOT NULL, wave TEXT NOT NULL, reason TEXT NOT NULL, held_by TEXT NOT NULL,"
    " held_at DOUBLE PRECISION NOT NULL, held_until DOUBLE PRECISION, origin TEXT NOT NULL, url TEXT NOT NULL,"
    " recorded_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (environment, wave))",
    # Environments as a graph: the environments each follows, as a JSON list (NULL: not said,
    # the one before it in the Pipeline's order, as a list Pipeline has it).
    "ALTER TABLE environments ADD COLUMN follows TEXT",
)

_V5 = (
    # A reconciler's environment never changes and its revision changes with each rollout: an
    # index on both moved an entry (two random pages written) at every transition, and on
    # PostgreSQL kept those updates from being HOT. The environment alone serves the reads that
    # filter on it; a commit's clusters are found through deployments (commits.py).
    "DROP INDEX reconcilers_by_environment",
    "CREATE INDEX reconcilers_in_environment ON reconcilers (environment)",
    # The revoked keys alone: the key cache's check (about once a second) counts them without
    # reading every key (ingest.py FINGERPRINT).
    "CREATE INDEX sender_keys_revoked ON sender_keys (revoked_at) WHERE revoked_at IS NOT NULL",
)

_V6 = (
    # The waker (wake.py, wakestore.py), one row per control plane it wakes: a lease (holder,
    # held_until) that one hub process holds at a time however many serve the database; 0 in
    # watching until the first waker learned the verdicts; the wake still to send (how many
    # changes, the newest one's environment, commit and verdict, when it is due, attempts made).
    "CREATE TABLE wakers ("
    " repo TEXT PRIMARY KEY, holder TEXT NOT NULL, held_until DOUBLE PRECISION NOT NULL,"
    " watching INTEGER NOT NULL DEFAULT 0, changes INTEGER NOT NULL DEFAULT 0,"
    " environment TEXT NOT NULL DEFAULT '', sha TEXT NOT NULL DEFAULT '', verdict TEXT NOT NULL DEFAULT '',"
    " due DOUBLE PRECISION, attempts INTEGER NOT NULL DEFAULT 0)",
    # The verdict the waker last saw of each commit it watches, per control plane.
    "CREATE TABLE wake_verdicts ("
    " repo TEXT NOT NULL, environment TEXT NOT NULL, sha TEXT NOT NULL, verdict TEXT NOT NULL,"
    " PRIMARY KEY (repo, environment, sha))",
)

_V7 = (
    # ``Database.migrate`` runs each version a database lacks, whatever the order they come in.
    #
    # Which clusters were registered when: the DORA figures judge a deployment against the
    # clusters registered at its moment (dora.py), so registering, revoking or re-registering a
    # cluster changes the present, never past figures. One row per registration (a revoked name
    # registered again starts a row of its own). first_report is the hub's receipt of the
    # cluster's first report of that registration: a cluster counts for deployments from it, so
    # one registered that never reports holds up none. The open registration's is kept in
    # clusters.first_report (set with last_seen on ingest) and copied here when it is revoked.
    "ALTER TABLE clusters ADD COLUMN first_report DOUBLE PRECISION",
    "UPDATE clusters SET first_report = (SELECT MIN(r.received_at) FROM reports r WHERE r.cluster = clusters.name)",
    # History pruned by retention: the cluster reported, no later than it was registered is known.
    "UPDATE clusters SET first_report = created_at WHERE first_report IS NULL AND last_seen IS NOT NULL",
    "CREATE TABLE cluster_registrations ("
    " cluster TEXT NOT NULL, environment TEXT NOT NULL, cluster_type TEXT NOT NULL,"
    " registered_at DOUBLE PRECISION NOT NULL, revoked_at DOUBLE PRECISION, first_report DOUBLE PRECISION,"
    " PRIMARY KEY (cluster, registered_at))",
    "CREATE INDEX cluster_registrations_by_environment ON cluster_registrations (environment)",
    # What the hub knew before: each cluster registered once, from created_at to revoked_at.
    "INSERT INTO cluster_registrations (cluster, environment, cluster_type, registered_at, revoked_at, first_report)"
    " SELECT name, environment, cluster_type, created_at, revoked_at, first_report FROM clusters",
)

_V9 = (
    # What the promoter said of the promotion that landed each commit (POST /v1/commits): its PR,
    # its run, what it does when its gates fail, and the gate's timeout (after which a rollout
    # that has not finished is stuck); and the control plane's web page (links to main commits).
    "ALTER TABLE platform_commits ADD COLUMN pull_request TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE platform_commits ADD COLUMN run_url TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE platform_commits ADD COLUMN on_failure TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE platform_commits ADD COLUMN gate_timeout DOUBLE PRECISION",
    "ALTER TABLE environments ADD COLUMN control_plane_url TEXT NOT NULL DEFAULT ''",
)

_V10 = (
    # The hub gate's failure budget for the commit (JSON: {"maxFailures": "2" or "10%",
    # "clusterTypes": {type: ...}}), so the pages say how much of it the rollout spent.
    "ALTER TABLE platform_commits ADD COLUMN failure_budget TEXT NOT NULL DEFAULT ''",
)

_V8 = (
    # A page says since when a head runs everywhere: the latest first success at it, received
    # of a cluster that runs it. Indexed by receipt after (environment, revision), that is the
    # last entries of the index, read without the rest; a rollout's per-cluster success times
    # and a commit's clusters (commits.py) are read from the index alone. It replaces the index
    # on (environment, revision), which it serves, and keeps its order of insertion: a rollout's
    # successes are appended at its end, not written at random places (IF EXISTS: it runs after
    # any migration that dropped that index).
    "DROP INDEX IF EXISTS deployments_by_revision",
    "CREATE INDEX deployments_by_receipt"
    " ON deployments (environment, revision, first_success_received, cluster, first_success)",
)

_V11 = (
    # When each cluster was heard, as coarse intervals (fleet.py ``heard``), so the DORA figures
    # tell, for any past moment, whether a cluster was lost then (silent for longer than 30m
    # while it heartbeats) and leave it out of that moment's fleet. The current interval runs
    # from clusters.seen_since to clusters.last_seen; a report after a longer silence closes it
    # into cluster_seen and starts another: a row per silence, not per heartbeat.
    "ALTER TABLE clusters ADD COLUMN seen_since DOUBLE PRECISION",
    "CREATE TABLE cluster_seen ("
    " cluster TEXT NOT NULL, seen_from DOUBLE PRECISION NOT NULL, seen_until DOUBLE PRECISION NOT NULL,"
    " PRIMARY KEY (cluster, seen_from))",
    # What the hub knew before: a cluster heard from its first report (of any registration) to
    # its last-seen, without a break. Its silences before now are not known (heartbeats moved
    # last_seen and left no row), so none is assumed; a silence that goes on now is.
    "UPDATE clusters SET seen_since = COALESCE((SELECT MIN(g.first_report) FROM cluster_registrations g"
    " WHERE g.cluster = clusters.name), first_report, created_at) WHERE last_seen IS NOT NULL",
)

_V12 = (
    # The DORA figures (GET /v1/delivery, /delivery, /metrics) read an environment's deployments
    # grouped by cluster and revision (history.py: when each cluster reached each commit, when it
    # first saw it): through deployments_by_receipt that was every row looked up in the table
    # and sorted in a temporary B-tree, most of the read's 1 s at 10,000 clusters x 30 commits.
    # In this order, with the columns they read, they are one scan of the index, in order.
    "CREATE INDEX deployments_by_cluster ON deployments"
    " (environment, cluster, revision, reconciler, first_seen, first_success_received, first_success)",
)

#: (version, name, statements), oldest first.
MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (1, "initial schema", _V1),
    (2, "heartbeats, busy reconcilers, platform repo URL, retention index", _V2),
    (3, "the hub's receipt times beside the clusters' own, waves, counters", _V3),
    (4, "holds, environments as a graph", _V4),
    (5, "reconcilers indexed by environment alone, revoked keys indexed", _V5),
    (6, "the waker's lease, the verdicts it saw and the wake it has to send", _V6),
    (7, "cluster registrations and each one's first report (DORA history)", _V7),
    (8, "deployments indexed by the receipt of their first success", _V8),
    (9, "the promotion of each commit: PR, run, failure policy, gate timeout", _V9),
    (10, "the hub gate's failure budget of each commit", _V10),
    (11, "when each cluster was heard, as intervals (a lost cluster in the DORA history)", _V11),
    (12, "deployments indexed by cluster and revision (the DORA figures)", _V12),
)
