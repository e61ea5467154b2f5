"""The price tables and their migrations (``advisor.store.migrate(db, "pricing", STEPS)``).

- ``offerings``: what can be rented or attached; one row per provider, region, zone, instance
  type and accelerator. Empty strings, not NULLs, in the identity columns, so UNIQUE holds.
- ``prices``: the history, one row each time a price is first seen or changes.
- ``current_prices``: the latest price of each offering and pricing model (what queries read).
- ``rentables`` and ``rentable_groups``: the materialised answer of ``pricing.query`` (GCP
  accelerators composed with their host), rebuilt in the same transaction as the prices; the
  groups are the recommender's form (``pricing.materialise``; each version's change: its step).
- ``billing_rules``, ``spot_risk``: how providers bill, how often spot machines are taken back.
- ``refresh_runs``: every refresh of a source and cloud, with its counts and error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils


_V1 = """
CREATE TABLE offerings (
    id INTEGER PRIMARY KEY,
    provider TEXT NOT NULL,
    region TEXT NOT NULL,
    zone TEXT NOT NULL DEFAULT '',
    instance_type TEXT NOT NULL DEFAULT '',
    vcpus REAL,
    memory_gib REAL,
    arch TEXT,
    cpu_family TEXT,
    accelerator TEXT NOT NULL DEFAULT '',
    accelerator_count INTEGER NOT NULL DEFAULT 0,
    accelerator_memory_gib REAL,
    attachable INTEGER NOT NULL DEFAULT 0 CHECK (attachable IN (0, 1)),
    UNIQUE (provider, region, zone, instance_type, accelerator, accelerator_count)
);
CREATE TABLE prices (
    id INTEGER PRIMARY KEY,
    offering_id INTEGER NOT NULL REFERENCES offerings(id),
    pricing TEXT NOT NULL CHECK (pricing IN ('on_demand', 'spot')),
    usd_per_hour REAL NOT NULL CHECK (usd_per_hour > 0),
    fetched_at TEXT NOT NULL,
    source TEXT NOT NULL,
    run_id INTEGER
);
CREATE INDEX prices_by_offering ON prices (offering_id, pricing, fetched_at);
CREATE TABLE current_prices (
    offering_id INTEGER NOT NULL REFERENCES offerings(id),
    pricing TEXT NOT NULL CHECK (pricing IN ('on_demand', 'spot')),
    usd_per_hour REAL NOT NULL CHECK (usd_per_hour > 0),
    fetched_at TEXT NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (offering_id, pricing)
) WITHOUT ROWID;
CREATE TABLE billing_rules (
    provider TEXT NOT NULL,
    pricing TEXT NOT NULL CHECK (pricing IN ('on_demand', 'spot')),
    increment_seconds INTEGER NOT NULL,
    minimum_seconds INTEGER NOT NULL,
    max_runtime_seconds INTEGER,
    preemption_notice_seconds INTEGER,
    interruptions_per_hour REAL NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (provider, pricing)
);
CREATE TABLE spot_risk (
    provider TEXT NOT NULL,
    region TEXT NOT NULL,
    instance_type TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    label TEXT NOT NULL,
    savings_pct REAL,
    interruptions_per_hour REAL NOT NULL,
    fetched_at TEXT NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (provider, region, instance_type)
);
CREATE TABLE gcp_hosts (
    accelerator TEXT NOT NULL,
    accelerator_count INTEGER NOT NULL,
    host_instance_type TEXT NOT NULL,
    rank INTEGER NOT NULL,
    bundled INTEGER NOT NULL,
    PRIMARY KEY (accelerator, accelerator_count, rank)
);
CREATE TABLE rentables (
    provider TEXT NOT NULL COLLATE NOCASE,
    region TEXT NOT NULL COLLATE NOCASE,
    zone TEXT,
    instance_type TEXT NOT NULL COLLATE NOCASE,
    vcpus REAL,
    memory_gib REAL,
    cpu_family TEXT,
    accelerator TEXT COLLATE NOCASE,
    accelerator_count INTEGER NOT NULL,
    accelerator_memory_gib REAL,
    pricing TEXT NOT NULL,
    usd_per_hour REAL NOT NULL,
    host_usd_per_hour REAL NOT NULL,
    accelerator_usd_per_hour REAL NOT NULL,
    interruptions_per_hour REAL NOT NULL,
    fetched_at TEXT NOT NULL,
    source TEXT NOT NULL
);
CREATE INDEX rentables_by_accelerator ON rentables (accelerator, pricing, usd_per_hour);
CREATE INDEX rentables_by_provider ON rentables (provider, region, pricing, usd_per_hour);
CREATE INDEX rentables_by_instance ON rentables (instance_type);
CREATE INDEX rentables_by_region ON rentables (region);
CREATE TABLE rentable_blobs (
    provider TEXT PRIMARY KEY,
    row_count INTEGER NOT NULL,
    rows BLOB NOT NULL
);
CREATE TABLE refresh_runs (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    unit TEXT NOT NULL,
    url TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed')),
    added INTEGER NOT NULL DEFAULT 0,
    changed INTEGER NOT NULL DEFAULT 0,
    unchanged INTEGER NOT NULL DEFAULT 0,
    skipped INTEGER NOT NULL DEFAULT 0,
    error TEXT
);
CREATE INDEX refresh_runs_by_source ON refresh_runs (source, unit, status, finished_at);
"""


def _v1(db: sqlite_utils.Database) -> None:
    for statement in _V1.split(";"):
        if statement.strip():
            db.conn.execute(statement)


def _v2(db: sqlite_utils.Database) -> None:
    """Offer groups replace ``rentable_blobs``, every row of a provider in one blob that the
    recommender had to decode whole (version 3 rebuilds them: it changed their form, and a step
    must not write a form its table no longer has)."""
    conn = db.conn
    conn.execute("DROP TABLE rentable_blobs")
    conn.execute(
        "CREATE TABLE rentable_groups (provider TEXT PRIMARY KEY, row_count INTEGER NOT NULL, "
        "groups BLOB NOT NULL)"
    )


def _v3(db: sqlite_utils.Database) -> None:
    """Offer groups in chunks of packed columns (``pricing.packing``), rebuilt from
    ``rentables``, where version 2 held one marshalled blob of groups per provider that a refresh
    built in memory whole; offerings found by instance type (Azure sizes, looked up a row at a
    time)."""
    from pricing import materialise

    conn = db.conn
    conn.execute("DROP TABLE rentable_groups")
    conn.execute(
        "CREATE TABLE rentable_groups (provider TEXT NOT NULL, chunk INTEGER NOT NULL, "
        "row_count INTEGER NOT NULL, groups BLOB NOT NULL, PRIMARY KEY (provider, chunk))"
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS offerings_by_instance ON offerings (provider, instance_type)"
    )
    for (provider,) in conn.execute("SELECT DISTINCT provider FROM rentables").fetchall():
        materialise.write_groups(db, provider)


STEPS = [_v1, _v2, _v3]
"""One function a schema version; append, never edit a released step."""
