"""A source's observations spooled to a private SQLite file while it parses: bounded memory.

A catalog names an offering once per zone (SkyPilot) or once per meter (Azure), and a source
keeps one price of each offering and pricing model: the cheapest, or the best ranked. Kept in a
dict, that costs memory for every distinct row (a 1,000,000-row catalog took 2.85 GB); here
each row is merged into a temporary on-disk database (``sqlite3.connect("")``: private,
deleted when closed) in batches, and read back in the order first seen, a batch at a time. The
source still writes nothing of the user's: the spool is its own scratch file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from advisor import disk
from advisor.errors import AdvisorError
from pricing.observations import Observation

BATCH = 4_096
"""Rows held in memory before they are merged into the file."""
CACHE_KIB = 16 * 1024
"""SQLite's page cache for the spool: the rest waits on disk."""

_KEY = "provider, region, zone, instance_type, accelerator, accelerator_count, pricing"
_COLUMNS = ", ".join(Observation._fields)


class Spool:
    """Observations merged by offering and pricing model, read back in first-seen order.

    ``keep="cheapest"``: the cheapest price of a rank wins (and the facts of its row); a higher
    ``rank`` always wins. ``keep="first"``: the first row of the highest rank wins.
    """

    def __init__(self, keep: str = "cheapest") -> None:
        if keep not in ("cheapest", "first"):
            raise ValueError(keep)
        with _named_failures():
            self._conn = sqlite3.connect("", isolation_level=None)  # one transaction, below
            self._start()
        self._cheapest = keep == "cheapest"
        self._pending: dict[tuple, tuple] = {}  # merged here first: zones come together
        better = "excluded.rank > rank"
        if keep == "cheapest":
            better += " OR (excluded.rank = rank AND excluded.usd_per_hour < usd_per_hour)"
        updates = ", ".join(f"{name} = excluded.{name}" for name in (*Observation._fields, "rank"))
        self._merge = (
            f"INSERT INTO spool ({_COLUMNS}, rank) VALUES ({', '.join('?' * 13)}) "
            f"ON CONFLICT ({_KEY}) DO UPDATE SET {updates} WHERE {better}"
        )

    def _start(self) -> None:
        for pragma in (f"cache_size = -{CACHE_KIB}", "journal_mode = OFF", "synchronous = OFF"):
            self._conn.execute(f"PRAGMA {pragma}")
        self._conn.execute(
            f"CREATE TABLE spool (seq INTEGER PRIMARY KEY, {_COLUMNS}, rank INTEGER NOT NULL, "
            f"UNIQUE ({_KEY}))"
        )
        self._conn.execute("BEGIN")

    def add(self, observation: Observation, rank: int = 0) -> None:
        key = (*observation.key, observation.pricing)
        held = self._pending.get(key)
        if (
            held is None
            or rank > held[-1]
            or (rank == held[-1] and self._cheapest and observation.usd_per_hour < held[-2])
        ):
            self._pending[key] = (*observation, rank)
        if len(self._pending) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            with _named_failures():
                self._conn.executemany(self._merge, self._pending.values())
            self._pending = {}

    def __iter__(self) -> Iterator[Observation]:
        self._flush()
        with _named_failures():
            cursor = self._conn.execute(f"SELECT {_COLUMNS} FROM spool ORDER BY seq")
            while rows := cursor.fetchmany(BATCH):
                for row in rows:
                    yield Observation._make((*row[:9], bool(row[9]), *row[10:]))

    def __len__(self) -> int:
        self._flush()
        return int(self._conn.execute("SELECT COUNT(*) FROM spool").fetchone()[0])

    def offerings_by_accelerator(self) -> dict[str, int]:
        """Distinct offerings of each accelerator name (CPU-only machines left out)."""
        self._flush()
        return dict(
            self._conn.execute(
                "SELECT accelerator, COUNT(*) FROM (SELECT DISTINCT provider, region, zone, "
                "instance_type, accelerator, accelerator_count FROM spool WHERE accelerator != '') "
                "GROUP BY accelerator ORDER BY accelerator"
            ).fetchall()
        )

    def close(self) -> None:
        """Delete the file (reading it afterwards is an error)."""
        self._conn.close()


@contextmanager
def _named_failures() -> Iterator[None]:
    """A failure of the scratch file (its disk full) as one line that names the disk."""
    try:
        yield
    except sqlite3.Error as exc:
        raise AdvisorError(
            disk.scratch_full() if disk.is_full(disk.scratch_folder())
            else f"the scratch file of a price source failed ({disk.explain(exc, 'it')})"
        ) from None  # fmt: skip
