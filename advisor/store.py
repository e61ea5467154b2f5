"""The user's SQLite database: one file, shared by the price tables and the probe results.

Each component (``pricing``, ``probes``) owns its tables and versions them on its own with
``migrate()``: a list of steps, applied in order, each in one transaction, recorded in
``schema_versions``. The database runs in WAL mode, so a reader sees the last committed state
while a refresh writes (old prices or new, never a mix).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import sqlite_utils

from advisor import locations

Migration = Callable[[sqlite_utils.Database], None]

BUSY_TIMEOUT_MS = 10_000


def connect(path: Path | str | None = None) -> sqlite_utils.Database:
    """Open (creating if needed) the user's database, or the one at ``path``."""
    if path is None:
        locations.ensure_dirs()
        path = locations.database_path()
    else:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return sqlite_utils.Database(conn)


def schema_version(db: sqlite_utils.Database, component: str) -> int:
    if "schema_versions" not in db.table_names():
        return 0
    row = db.execute(
        "SELECT version FROM schema_versions WHERE component = ?", [component]
    ).fetchone()
    return int(row[0]) if row else 0


def migrate(db: sqlite_utils.Database, component: str, steps: Sequence[Migration]) -> int:
    """Bring ``component``'s tables up to ``len(steps)``; returns the version now in force."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
    )
    current = schema_version(db, component)
    if current > len(steps):
        raise RuntimeError(
            f"the database's {component} schema is version {current}, newer than this advisor "
            f"knows ({len(steps)}): upgrade advisor"
        )
    for version, step in enumerate(steps[current:], start=current + 1):
        with db.conn:  # one transaction a step: a failed step leaves the previous version
            db.conn.execute("BEGIN IMMEDIATE")
            step(db)
            db.conn.execute(
                "INSERT INTO schema_versions (component, version) VALUES (?, ?) "
                "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                [component, version],
            )
    return len(steps)
