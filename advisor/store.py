"""The user's SQLite database: one file, shared by the price tables and the probe results.

Each component (``pricing``, ``probes``) owns its tables and versions them with ``migrate()``:
steps applied in order, each in one transaction, recorded in ``schema_versions``. In WAL mode a
reader sees the last committed state while a refresh writes (old prices or new, never a mix).
``connect()`` imports sqlite-utils only when one of its features is first used: reads need only
``conn`` and ``execute`` (its import cost: docs/BENCHMARKS-ARCHIVE.md, "Start-up"). A database
the user cannot write is opened read-only and left as it is (no WAL switch, no migration); every
way the file can be unusable becomes one ``StorageError`` line that says what to do (``explain``)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from advisor import display, locations
from advisor.disk import RECOVERY, explain, full, is_full
from advisor.errors import AdvisorError

if TYPE_CHECKING:
    import sqlite_utils

Migration = Callable[["sqlite_utils.Database"], None]

BUSY_TIMEOUT_MS = 10_000


class StorageError(AdvisorError):
    """The database cannot be used as asked; the message says why and what to do."""


def connect(path: Path | str | None = None) -> sqlite_utils.Database:
    """Open (creating if needed) the user's database, or the one at ``path``; read-only when
    the user cannot write it."""
    users = path is None
    path = Path(path) if path is not None else locations.database_path()
    try:
        writable = _writable(path)
    except RuntimeError as exc:  # pathlib's "Symlink loop from ..."
        raise StorageError(f"cannot open {display.cut(path, 200)}: {exc}") from None
    except OSError as exc:  # a path too long, a loop the OS found first
        raise StorageError(f"cannot open {display.cut(path, 200)}: {exc.strerror or exc}") from None
    try:
        if writable:
            if users:
                locations.ensure_dirs()
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
        elif not path.exists():
            raise StorageError(f"cannot create {path}: its folder is not writable")
        else:
            conn = sqlite3.connect(
                _read_only_uri(path),
                uri=True,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
            )
            conn.execute("PRAGMA query_only=1")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # is it a database?
    except OSError as exc:
        raise StorageError(
            f"cannot create {display.cut(path, 200)}: {exc.strerror or exc}"
        ) from exc
    except sqlite3.Error as exc:
        if not (writable and is_full(path) and _readable_whole(path)):
            raise StorageError(explain(exc, path)) from exc
        conn = _open_on_full_disk(path, exc)
    return cast("sqlite_utils.Database", _LazyDatabase(conn))


def _readable_whole(path: Path) -> bool:
    """Whether the file alone holds every commit: no ``-wal`` file with frames beside it."""
    wal = path.with_name(path.name + "-wal")
    try:
        return path.is_file() and (not wal.exists() or wal.stat().st_size == 0)
    except OSError:
        return False


def _open_on_full_disk(path: Path, failure: sqlite3.Error) -> sqlite3.Connection:
    """``path`` read-only without the ``-shm`` file a full disk cannot hold: opened
    ``immutable`` (it holds every commit, and nothing can write to a full disk), with one
    warning line; a write then fails naming the full disk."""
    import warnings

    try:
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True, isolation_level=None
        )
        conn.execute("PRAGMA query_only=1")
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        raise StorageError(explain(failure, path)) from failure
    warnings.warn(
        f"the disk holding {display.cut(path.parent, 120)} is full: reading only (free space on "
        "it to refresh prices or store probes)",
        DiskFull,
        stacklevel=3,
    )
    return conn


class DiskFull(UserWarning):
    """The user's database was opened read-only because its disk is full."""


def read_only(db: sqlite_utils.Database) -> bool:
    """True when ``db`` was opened read-only (``connect`` found it not writable)."""
    return bool(db.execute("PRAGMA query_only").fetchone()[0])


def path_of(db: sqlite_utils.Database) -> Path:
    """The file ``db`` was opened on."""
    return Path(db.execute("PRAGMA database_list").fetchone()[2])


def check_can_store(db: sqlite_utils.Database, what: str) -> None:
    """Refuse, before long work starts, work whose result could not be stored in ``db``: a
    read-only database, or one on a full disk (``what`` says what would be lost)."""
    path = path_of(db)
    if is_full(path):
        raise StorageError(f"{what} could not be stored: {full(path)}")
    if read_only(db):
        raise StorageError(
            f"{what} could not be stored: {display.cut(path, 200)} is read-only here; make its "
            "folder writable or set ADVISOR_HOME to a writable folder"
        )


def _writable(path: Path) -> bool:
    """Whether advisor may write ``path``: never the shipped data; else as the OS says."""
    try:
        if path.resolve().is_relative_to(locations.shipped_data_dir().resolve()):
            return False
    except FileNotFoundError:
        pass  # no shipped data folder: nothing to protect
    if path.exists():
        return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the nearest folder that exists will hold the new ones
    return os.access(folder, os.W_OK)


def _read_only_uri(path: Path) -> str:
    """A read-only URI for ``path``. A WAL database needs its ``-shm`` file even to read; in a
    folder we cannot write, that file cannot be made, so the file is opened ``immutable``
    (nobody can change it there) unless a ``-wal`` file holds commits not yet in it."""
    wal = path.with_name(path.name + "-wal")
    folder_writable = os.access(path.parent, os.W_OK)
    immutable = "" if folder_writable or wal.exists() else "&immutable=1"
    return f"{path.resolve().as_uri()}?mode=ro{immutable}"


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
    if row is None:
        return 0
    if isinstance(row[0], bool) or not isinstance(row[0], int) or row[0] < 0:
        path = path_of(db)
        raise StorageError(
            f"{display.cut(path, 200)} is not as advisor left it (its {component} schema version "
            f"reads {display.quoted(row[0])}): {RECOVERY}"
        )
    return row[0]


def migrate(
    db: sqlite_utils.Database,
    component: str,
    steps: Sequence[Migration],
    *,
    readable_from: int | None = None,
) -> int:
    """Bring ``component``'s tables up to ``len(steps)``; returns the version now in force.

    A read-only database is only checked: it must already be at ``len(steps)``, or at
    ``readable_from`` when the caller only reads tables that version already has (a newer
    advisor then still reads an older database in a folder it may not write).
    """
    current = schema_version(db, component)
    path = db.execute("PRAGMA database_list").fetchone()[2]
    if current > len(steps):
        raise StorageError(
            f"{path}: its {component} tables are version {current}, newer than this advisor "
            f"knows ({len(steps)}): upgrade advisor, or set ADVISOR_HOME to use another folder"
        )
    if read_only(db):
        if current < (len(steps) if readable_from is None else readable_from):
            raise StorageError(
                f"{path} is read-only here and its {component} tables need an upgrade "
                f"(version {current} to {len(steps)}): make its folder writable once"
            )
        return current
    db.execute(
        "CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
    )
    for version, step in enumerate(steps[current:], start=current + 1):
        try:
            with db.conn:  # one transaction a step: a failed step leaves the previous version
                db.conn.execute("BEGIN IMMEDIATE")
                step(db)
                db.conn.execute(
                    "INSERT INTO schema_versions (component, version) VALUES (?, ?) "
                    "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                    [component, version],
                )
        except sqlite3.OperationalError as exc:  # tables not as their version says
            if "exists" not in str(exc) and "no such" not in str(exc):
                raise  # a full disk, a busy file: explained as such by the caller
            raise StorageError(
                f"{display.cut(path, 200)} is not as advisor left it (its {component} tables do "
                f"not match their schema version {current}): {RECOVERY}"
            ) from exc
    return len(steps)
