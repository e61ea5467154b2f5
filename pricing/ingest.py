"""Store one source's observations for one provider: offerings, history, current prices.

Runs inside the caller's transaction (``pricing.refresh`` opens one per source and cloud), so a
failure or a kill anywhere leaves the previous prices in place. A price is added to the history
when it is new or changed; an unchanged price only moves its ``fetched_at`` forward. Suspect
prices (see ``observations.price_problem`` and ``observations.implausible``) are skipped and
counted, never stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pricing import families, materialise
from pricing.observations import Observation, implausible, price_problem, shape_problem

if TYPE_CHECKING:
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
    """Store ``observations`` (all of ``provider``).

    ``retire``: source-name prefixes whose current prices this batch replaces as a whole; those
    it no longer lists are retired (the history keeps them).
    """
    conn = db.conn
    given = list(observations)
    rows = [row for row in given if shape_problem(row) is None]  # numbers bounded where stored
    skipped += len(given) - len(rows)
    offering_ids = _ensure_offerings(db, provider, rows)
    current = {
        (offering_id, pricing): (price, previous_source)
        for offering_id, pricing, price, previous_source in conn.execute(
            "SELECT c.offering_id, c.pricing, c.usd_per_hour, c.source FROM current_prices c "
            "JOIN offerings o ON o.id = c.offering_id WHERE o.provider = ?",
            [provider],
        )
    }
    added = changed = unchanged = 0
    history: list[tuple] = []
    writes: list[tuple] = []
    seen: set[tuple[int, str]] = set()
    held: list[str] = []  # suspect prices: the previous price stays, unconfirmed
    bulk_confirm = bool(retire) and source.startswith(retire)
    for row in rows:
        key = (offering_ids[row.key], row.pricing)
        before = current.get(key)
        previous = before[0] if before else None
        if price_problem(row.usd_per_hour, previous) or implausible(row) or key in seen:
            skipped += 1
            held.append(f"{key[0]}/{key[1]}")
            seen.add(key)
            continue
        seen.add(key)
        if before is None:
            added += 1
        elif before[0] != row.usd_per_hour:
            changed += 1
        else:
            unchanged += 1
            if bulk_confirm and before[1] == source:
                continue  # confirmed below in one statement
            writes.append((key[0], key[1], row.usd_per_hour, fetched_at, source))
            continue
        writes.append((key[0], key[1], row.usd_per_hour, fetched_at, source))
        history.append((key[0], key[1], row.usd_per_hour, fetched_at, source, run_id))
    if progress:
        progress(len(rows) // 2, len(rows))
    gone = [
        key
        for key, (_, previous_source) in current.items()
        if key not in seen and retire and previous_source.startswith(retire)
    ]
    conn.executemany("DELETE FROM current_prices WHERE offering_id = ? AND pricing = ?", gone)
    if bulk_confirm:  # every other current price of this source was seen unchanged
        conn.execute(
            "UPDATE current_prices SET fetched_at = ? WHERE source = ? AND fetched_at != ? "
            "AND offering_id IN (SELECT id FROM offerings WHERE provider = ?) "
            "AND offering_id || '/' || pricing NOT IN (SELECT value FROM json_each(?))",
            [fetched_at, source, fetched_at, provider, json.dumps(held)],
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
    count = materialise.rebuild(db, provider)
    if progress:
        progress(len(rows), len(rows))
    replaceable = sum(
        1 for _, previous in current.values() if retire and previous.startswith(retire)
    )
    return Counts(added, changed, unchanged, skipped, len(gone), count, replaceable)


def _ensure_offerings(
    db: sqlite_utils.Database, provider: str, rows: list[Observation]
) -> dict[tuple, int]:
    """Ids of every offering in ``rows``, inserting the new ones and filling missing facts."""
    conn = db.conn
    select = (
        "SELECT id, provider, region, zone, instance_type, accelerator, accelerator_count, "
        "vcpus FROM offerings WHERE provider = ?"
    )
    known = {tuple(found[1:7]): (found[0], found[7]) for found in conn.execute(select, [provider])}
    new: dict[tuple, tuple] = {}
    filled: list[tuple] = []
    for row in rows:
        have = known.get(row.key)
        if have is None and row.key not in new:
            new[row.key] = _offering(row)
        elif have is not None and have[1] is None and row.vcpus is not None:
            filled.append((row.vcpus, row.memory_gib, row.accelerator_memory_gib, have[0]))
    conn.executemany(
        f"INSERT INTO offerings ({_OFFERING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        new.values(),
    )
    conn.executemany(
        "UPDATE offerings SET vcpus = ?, memory_gib = ?, "
        "accelerator_memory_gib = COALESCE(accelerator_memory_gib, ?) WHERE id = ?",
        filled,
    )
    if not new:
        return {key: value[0] for key, value in known.items()}
    return {tuple(found[1:7]): found[0] for found in conn.execute(select, [provider])}


def _offering(row: Observation) -> tuple:
    cpu = families.cpu_info(row.provider, row.instance_type)
    return (
        row.provider,
        row.region,
        row.zone,
        row.instance_type,
        row.vcpus,
        row.memory_gib,
        cpu.arch,
        cpu.cpu_family,
        row.accelerator,
        row.accelerator_count,
        row.accelerator_memory_gib,
        int(row.attachable),
    )
