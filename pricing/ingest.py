"""Store one source's observations for one provider: offerings, history, current prices.

Runs inside the caller's transaction (``pricing.refresh`` opens one per source and cloud), so a
failure or a kill anywhere leaves the previous prices in place. A price is added to the history
when it is new or changed; an unchanged price only moves its ``fetched_at`` forward. Suspect
prices (see ``observations.price_problem`` and ``observations.implausible``) are skipped and
counted, never stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sized
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pricing import families, materialise
from pricing.observations import Observation, implausible, price_problem, shape_problem

if TYPE_CHECKING:
    import sqlite3

    import sqlite_utils

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` while rows are written."""

_OFFERING_COLUMNS = (
    "provider, region, zone, instance_type, vcpus, memory_gib, arch, cpu_family, accelerator, "
    "accelerator_count, accelerator_memory_gib, attachable"
)


@dataclass(frozen=True)
class Counts:
    """What one write did."""

    added: int = 0
    """Prices seen for the first time."""
    changed: int = 0
    """Prices that differ from the last observation."""
    unchanged: int = 0
    skipped: int = 0
    """Rows held back by validation."""
    removed: int = 0
    """Current prices the source no longer lists (history keeps them)."""
    rentables: int = 0
    replaceable: int = 0
    """Current prices this write could retire, before it ran (what ``removed`` is out of)."""


BATCH = 8_192
"""Rows decided and written at a time: what a write holds in memory, whatever the catalog's size."""

_STAGED = (
    "seq INTEGER PRIMARY KEY, provider TEXT, region TEXT, zone TEXT, instance_type TEXT, "
    "vcpus REAL, memory_gib REAL, accelerator TEXT, accelerator_count INTEGER, "
    "accelerator_memory_gib REAL, attachable INTEGER, pricing TEXT, usd_per_hour REAL, "
    "arch TEXT, cpu_family TEXT"
)
_SAME_OFFERING = (
    "o.provider = s.provider AND o.region = s.region AND o.zone = s.zone AND "
    "o.instance_type = s.instance_type AND o.accelerator = s.accelerator AND "
    "o.accelerator_count = s.accelerator_count"
)


def write(
    db: sqlite_utils.Database,
    provider: str,
    observations: Iterable[Observation],
    *,
    source: str,
    fetched_at: str,
    run_id: int | None,
    skipped: int = 0,
    retire: tuple[str, ...] = (),
    progress: Progress | None = None,
) -> Counts:
    """Store ``observations`` (all of ``provider``), ``BATCH`` rows at a time: each batch is
    staged in a temporary table, joined with the offerings and current prices it touches, and
    decided row by row; what was seen is kept in a temporary table, not in memory.

    ``retire``: source-name prefixes whose current prices this batch replaces as a whole; those
    it no longer lists are retired (the history keeps them).
    """
    conn = db.conn
    total = len(observations) if isinstance(observations, Sized) else None
    mine = f"offering_id IN (SELECT id FROM offerings WHERE provider = ?) AND {_retired(retire)}"
    replaceable = conn.execute(
        f"SELECT COUNT(*) FROM current_prices WHERE {mine}", [provider, *retire]
    ).fetchone()[0]
    for table, columns in (
        ("ingest_staged", _STAGED),
        (
            "ingest_seen",
            "offering_id INTEGER, pricing TEXT, held INTEGER, PRIMARY KEY (offering_id, pricing)",
        ),
    ):
        conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {table} ({columns})")
        conn.execute(f"DELETE FROM temp.{table}")
    state = _State(source, fetched_at, run_id, bool(retire) and source.startswith(retire))
    batch: list[Observation] = []
    done = 0
    for row in observations:
        if shape_problem(row) is not None:  # numbers bounded where stored
            state.skipped += 1
            continue
        batch.append(row)
        if len(batch) >= BATCH:
            done += _write_batch(conn, batch, state)
            batch = []
            if progress:
                progress(done, total or done)
    done += _write_batch(conn, batch, state)
    gone = 0
    if retire:  # what this source listed before and no longer lists
        gone = conn.execute(
            f"DELETE FROM current_prices WHERE {mine} AND NOT EXISTS (SELECT 1 FROM "
            "temp.ingest_seen s WHERE s.offering_id = current_prices.offering_id "
            "AND s.pricing = current_prices.pricing)",
            [provider, *retire],
        ).rowcount
    if state.bulk_confirm:  # every other current price of this source was seen unchanged
        conn.execute(
            "UPDATE current_prices SET fetched_at = ? WHERE source = ? AND fetched_at != ? "
            "AND offering_id IN (SELECT id FROM offerings WHERE provider = ?) AND NOT EXISTS "
            "(SELECT 1 FROM temp.ingest_seen s WHERE s.held AND "
            "s.offering_id = current_prices.offering_id AND s.pricing = current_prices.pricing)",
            [fetched_at, source, fetched_at, provider],
        )
    for table in ("ingest_staged", "ingest_seen"):
        conn.execute(f"DELETE FROM temp.{table}")
    count = materialise.rebuild(db, provider)
    if progress:
        progress(done, total or done)
    return Counts(
        state.added, state.changed, state.unchanged, state.skipped + skipped, gone, count,
        replaceable,
    )  # fmt: skip


def _retired(retire: tuple[str, ...]) -> str:
    """SQL true for a ``current_prices.source`` that starts with one of ``retire`` (each a
    parameter); false when there is none."""
    if not retire:
        return "0"
    return "(" + " OR ".join("instr(source, ?) = 1" for _ in retire) + ")"


@dataclass
class _State:
    """What one write has decided so far."""

    source: str
    fetched_at: str
    run_id: int | None
    bulk_confirm: bool
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    skipped: int = 0


def _write_batch(conn: sqlite3.Connection, rows: list[Observation], state: _State) -> int:
    """Decide and write one batch: offerings first, then each row against the current price
    it would replace (a suspect one is held back, the previous price stays, unconfirmed)."""
    if not rows:
        return 0
    conn.execute("DELETE FROM temp.ingest_staged")
    conn.executemany(
        "INSERT INTO temp.ingest_staged VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(n, *row, *families.cpu_info(row.provider, row.instance_type)[::-1])
         for n, row in enumerate(rows)],
    )  # fmt: skip
    _ensure_offerings(conn)
    decided = conn.execute(
        "SELECT s.seq, o.id, c.usd_per_hour, c.source, seen.held FROM temp.ingest_staged s "
        f"CROSS JOIN offerings o ON {_SAME_OFFERING} "  # the batch first, offerings by key
        "LEFT JOIN current_prices c ON c.offering_id = o.id AND c.pricing = s.pricing "
        "LEFT JOIN temp.ingest_seen seen ON seen.offering_id = o.id AND seen.pricing = s.pricing "
        "ORDER BY s.seq"
    ).fetchall()
    history: list[tuple] = []
    writes: list[tuple] = []
    seen: dict[tuple[int, str], int] = {}  # held (1) or not (0), this batch
    fetched_at, source = state.fetched_at, state.source
    for seq, offering_id, previous, previous_source, held_before in decided:
        row = rows[seq]
        key = (offering_id, row.pricing)
        duplicate = held_before is not None or key in seen
        if duplicate or price_problem(row.usd_per_hour, previous) or implausible(row):
            state.skipped += 1
            seen[key] = 1
            continue
        seen[key] = 0
        if previous is None:
            state.added += 1
        elif previous != row.usd_per_hour:
            state.changed += 1
        else:
            state.unchanged += 1
            if not (state.bulk_confirm and previous_source == source):
                writes.append((offering_id, row.pricing, row.usd_per_hour, fetched_at, source))
            continue  # an unchanged price of this source is confirmed in one statement
        writes.append((offering_id, row.pricing, row.usd_per_hour, fetched_at, source))
        history.append((offering_id, row.pricing, row.usd_per_hour, fetched_at, source,
                        state.run_id))  # fmt: skip
    conn.executemany(
        "INSERT INTO temp.ingest_seen VALUES (?, ?, ?) ON CONFLICT (offering_id, pricing) "
        "DO UPDATE SET held = MAX(held, excluded.held)",
        [(*key, held) for key, held in seen.items()],
    )
    conn.executemany(
        "INSERT INTO prices (offering_id, pricing, usd_per_hour, fetched_at, source, run_id) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        history,
    )
    conn.executemany(
        "INSERT INTO current_prices (offering_id, pricing, usd_per_hour, fetched_at, source) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (offering_id, pricing) DO UPDATE SET "
        "usd_per_hour = excluded.usd_per_hour, fetched_at = excluded.fetched_at, "
        "source = excluded.source",
        writes,
    )
    return len(rows)


def _ensure_offerings(conn: sqlite3.Connection) -> None:
    """Insert the staged batch's new offerings (the first row of each names its facts) and fill
    the vCPUs, memory and device memory of known ones that lack them."""
    conn.execute(
        f"INSERT OR IGNORE INTO offerings ({_OFFERING_COLUMNS}) SELECT provider, region, zone, "
        "instance_type, vcpus, memory_gib, arch, cpu_family, accelerator, accelerator_count, "
        "accelerator_memory_gib, attachable FROM temp.ingest_staged ORDER BY seq"
    )
    missing = conn.execute(
        "SELECT s.vcpus, s.memory_gib, s.accelerator_memory_gib, o.id FROM temp.ingest_staged s "
        f"CROSS JOIN offerings o ON {_SAME_OFFERING} "
        "WHERE o.vcpus IS NULL AND s.vcpus IS NOT NULL ORDER BY s.seq"
    ).fetchall()
    conn.executemany(
        "UPDATE offerings SET vcpus = ?, memory_gib = ?, "
        "accelerator_memory_gib = COALESCE(accelerator_memory_gib, ?) WHERE id = ?",
        missing,
    )
