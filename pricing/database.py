"""The user's price database: migrated, seeded from the shipped table on first use.

``connect()`` is what every other part calls. On first use it copies the shipped seed (real
public prices, see ``pricing.seed``) and the billing rules into the user's database in one
transaction, so a fresh install answers without any network.
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from advisor import locations, store
from pricing import ingest, materialise, seed
from pricing.schema import STEPS

if TYPE_CHECKING:
    import sqlite_utils

COMPONENT = "pricing"
BILLING_FILE = "billing-rules.csv"


def now() -> str:
    """The current UTC time as stored in the database (ISO 8601, seconds, ``Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def connect(path: Path | str | None = None) -> sqlite_utils.Database:
    """The user's database (or the one at ``path``), migrated and seeded; a database the user
    cannot write is opened read-only and must already be both (see ``advisor.store``)."""
    db = store.connect(path)
    store.migrate(db, COMPONENT, STEPS)
    if not _seeded(db):
        if store.read_only(db):
            where = db.execute("PRAGMA database_list").fetchone()[2]
            raise store.StorageError(f"{where} is read-only here and holds no prices yet")
        _seed(db)
    return db


def _seeded(db: sqlite_utils.Database) -> bool:
    found = db.conn.execute(
        "SELECT 1 FROM refresh_runs WHERE source = ? AND status = 'ok' LIMIT 1", [seed.SOURCE]
    ).fetchone()
    return found is not None


def load_billing_rules(db: sqlite_utils.Database) -> None:
    """Replace the billing rules with the shipped ones (inside a write transaction)."""
    with locations.shipped(BILLING_FILE).open(newline="", encoding="utf-8") as handle:
        rows = [
            (
                row["provider"],
                row["pricing"],
                int(row["increment_seconds"]),
                int(row["minimum_seconds"]),
                int(row["max_runtime_seconds"]) if row["max_runtime_seconds"] else None,
                int(row["preemption_notice_seconds"]) if row["preemption_notice_seconds"] else None,
                float(row["interruptions_per_hour"]),
                row["source"],
            )
            for row in csv.DictReader(handle)
        ]
    db.conn.execute("DELETE FROM billing_rules")
    db.conn.executemany("INSERT INTO billing_rules VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)


def _seed(db: sqlite_utils.Database) -> None:
    built_at, by_provider = seed.read_seed()
    conn = db.conn
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        if _seeded(db):  # another process seeded it while we waited for the lock
            return
        load_billing_rules(db)
        materialise.load_hosts(db)
        total = 0
        for provider, rows in sorted(by_provider.items()):
            counts = ingest.write(
                db,
                provider,
                [observation for observation, _ in rows],
                source=f"{seed.SOURCE}: {rows[0][1]}",
                fetched_at=built_at,
                run_id=None,
            )
            total += counts.added
        conn.execute(  # dated by the snapshot, not by this install: its age is the prices'
            "INSERT INTO refresh_runs (source, unit, started_at, finished_at, status, added) "
            "VALUES (?, 'all', ?, ?, 'ok', ?)",
            [seed.SOURCE, built_at, built_at, total],
        )
