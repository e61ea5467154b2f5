"""The user's SQLite database: one file, shared by the price tables and the probe results.

Each component (``pricing``, ``probes``) owns its tables and versions them on its own with
``migrate()``: a list of steps, applied in order, each in one transaction, recorded in
``schema_versions``. The database runs in WAL mode, so a reader sees the last committed state
while a refresh writes (old prices or new, never a mix).

``connect()`` returns a ``sqlite_utils.Database`` that imports sqlite-utils only when one of its
features is first used: importing sqlite-utils costs ~180 ms here (it loads numpy, dateutil and
its plugins), and the reads a recommendation makes need nothing but ``conn`` and ``execute``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from advisor import locations

if TYPE_CHECKING:
    import sqlite_utils

Migration = Callable[["sqlite_utils.Database"], None]

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
    return cast("sqlite_utils.Database", _LazyDatabase(conn))


class _LazyDatabase:
    """A ``sqlite_utils.Database`` over ``conn``, built on first use of anything but a query."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._db: sqlite_utils.Database | None = None

    def execute(self, sql: str, parameters: Sequence[Any] | dict[str, Any] | None = None) -> Any:
        return self.conn.execute(sql, parameters or [])

    def _real(self) -> sqlite_utils.Database:
        if self._db is None:
            import sqlite_utils

            self._db = sqlite_utils.Database(self.conn)
        return self._db

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real(), name)

    def __getitem__(self, table: str) -> Any:
        return self._real()[table]


def schema_version(db: sqlite_utils.Database, component: str) -> int:
    exists = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_versions'"
    ).fetchone()
    if not exists:
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
