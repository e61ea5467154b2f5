"""Rebuild the materialised rentables of one provider from its current prices.

``pricing.query.rentables()`` must hand 100,000 machines to the recommender in well under a
second, so the join (offerings x current prices x GCP host x spot risk x billing rules) is done
once per refresh, in the refresh's own transaction, into two forms:

- the ``rentables`` table, indexed, for filtered queries (``advisor prices list``);
- ``rentable_groups``: the same rows in offer groups of identical machines (``pricing.offers.
  OfferGroup``), in chunks of at most ``CHUNK_ROWS`` rows (``pricing.packing``): per group its
  ``HEAD_ROWS`` cheapest rows, every member's price (a packed array) and the other rows in a block
  of their own, decoded only when asked for. The recommender reads this: the few rows it ranks,
  not all 100,000. Both are written from SQL as streams, so a refresh of a million rows holds one
  chunk in memory, not a million rows.

GCP attachable GPUs get the first host of ``data/gcp-hosts.csv`` (by rank) that has a price in
the same region and pricing model; without one they are not rentable there. TPU VMs are rentable
as they are. Host machine types that come only with their GPUs (A2, A3, A4, G2) are never
offered CPU-only. A machine whose shape is unknown (an Azure Retail size that the SkyPilot Azure
catalog does not list: no vCPUs, no GPU facts) keeps its prices but is not rentable, since it
could be a GPU machine taken for a CPU one.
"""

from __future__ import annotations

import csv
from typing import TYPE_CHECKING

from advisor import locations
from pricing import packing
from pricing.offers import STORED_FIELDS, machine_key

if TYPE_CHECKING:
    import sqlite3

    import sqlite_utils

HOSTS_FILE = "gcp-hosts.csv"

_RISK = """CASE WHEN c.pricing = 'on_demand' THEN 0.0
    ELSE COALESCE(r.interruptions_per_hour, b.interruptions_per_hour, 0.0) END"""

_WHOLE = f"""
INSERT INTO rentables
SELECT o.provider, o.region, NULLIF(o.zone, ''), o.instance_type, o.vcpus, o.memory_gib,
       o.cpu_family, NULLIF(o.accelerator, ''), o.accelerator_count, o.accelerator_memory_gib,
       c.pricing, c.usd_per_hour, c.usd_per_hour, 0.0, {_RISK}, c.fetched_at, c.source
FROM offerings o
JOIN current_prices c ON c.offering_id = o.id
LEFT JOIN spot_risk r ON c.pricing = 'spot' AND r.provider = o.provider
    AND r.region = o.region AND r.instance_type = o.instance_type
LEFT JOIN billing_rules b ON b.provider = o.provider AND b.pricing = c.pricing
WHERE o.provider = :provider AND o.attachable = 0
  AND (o.vcpus IS NOT NULL OR o.accelerator != '')
  AND NOT (o.provider = 'gcp'
      AND o.instance_type IN (SELECT host_instance_type FROM gcp_hosts WHERE bundled = 1))
"""

_TPU = f"""
INSERT INTO rentables
SELECT o.provider, o.region, NULLIF(o.zone, ''), o.accelerator, o.vcpus, o.memory_gib,
       o.cpu_family, o.accelerator, o.accelerator_count, o.accelerator_memory_gib,
       c.pricing, c.usd_per_hour, 0.0, c.usd_per_hour, {_RISK}, c.fetched_at, c.source
FROM offerings o
JOIN current_prices c ON c.offering_id = o.id
LEFT JOIN spot_risk r ON 0
LEFT JOIN billing_rules b ON b.provider = o.provider AND b.pricing = c.pricing
WHERE o.provider = :provider AND o.attachable = 1 AND o.accelerator LIKE 'tpu-%'
"""

_HOSTED = f"""
INSERT INTO rentables
SELECT provider, region, zone, instance_type, vcpus, memory_gib, cpu_family, accelerator,
       accelerator_count, accelerator_memory_gib, pricing, ROUND(host + accel, 6), host, accel, risk,
       fetched_at, source
FROM (
    SELECT a.provider, a.region, NULLIF(a.zone, '') AS zone, h.instance_type, h.vcpus,
           h.memory_gib, h.cpu_family, a.accelerator, a.accelerator_count,
           a.accelerator_memory_gib, c.pricing, hc.usd_per_hour AS host,
           c.usd_per_hour AS accel, {_RISK} AS risk,
           MIN(c.fetched_at, hc.fetched_at) AS fetched_at, c.source,
           ROW_NUMBER() OVER (PARTITION BY a.id, c.pricing ORDER BY m.rank) AS choice
    FROM offerings a
    JOIN current_prices c ON c.offering_id = a.id
    JOIN gcp_hosts m ON m.accelerator = a.accelerator
        AND m.accelerator_count = a.accelerator_count
    JOIN offerings h ON h.provider = a.provider AND h.region = a.region AND h.zone = a.zone
        AND h.instance_type = m.host_instance_type AND h.accelerator = '' AND h.attachable = 0
    JOIN current_prices hc ON hc.offering_id = h.id AND hc.pricing = c.pricing
    LEFT JOIN spot_risk r ON 0
    LEFT JOIN billing_rules b ON b.provider = a.provider AND b.pricing = c.pricing
    WHERE a.provider = :provider AND a.attachable = 1 AND a.accelerator NOT LIKE 'tpu-%'
)
WHERE choice = 1
"""


def load_hosts(db: sqlite_utils.Database) -> None:
    """Replace ``gcp_hosts`` with the shipped mapping (call inside a write transaction)."""
    with locations.shipped(HOSTS_FILE).open(newline="", encoding="utf-8") as handle:
        rows = [
            (
                row["accelerator"],
                int(row["accelerator_count"]),
                row["host_instance_type"],
                int(row["rank"]),
                int(row["bundled"]),
            )
            for row in csv.DictReader(handle)
        ]
    db.conn.execute("DELETE FROM gcp_hosts")
    db.conn.executemany("INSERT INTO gcp_hosts VALUES (?, ?, ?, ?, ?)", rows)


def rebuild(db: sqlite_utils.Database, provider: str) -> int:
    """Recompute ``provider``'s rentables (inside the caller's transaction); returns how many."""
    conn = db.conn
    conn.execute("DELETE FROM rentables WHERE provider = ?", [provider])
    for statement in (_WHOLE, _TPU, _HOSTED):
        conn.execute(statement, {"provider": provider})
    return write_groups(db, provider)


HEAD_ROWS = 32
"""Rows of each group decoded with the group: the recommender ranks the ``--top`` cheapest."""
CHUNK_ROWS = 16_384
"""Rows of one stored chunk: what a refresh holds in memory while it writes the groups."""

_MACHINE = (
    "accelerator COLLATE BINARY, accelerator_count, vcpus, cpu_family COLLATE BINARY, pricing, "
    "interruptions_per_hour"
)
_GROUPED = f"""
SELECT {", ".join(STORED_FIELDS)} FROM (
    SELECT *, MIN(usd_per_hour) OVER (PARTITION BY {_MACHINE}) AS cheapest
    FROM rentables WHERE provider = ?
) ORDER BY cheapest, {_MACHINE}, usd_per_hour
"""
"""A provider's rentables group by group (``MACHINE_FIELDS``), the group with the cheapest
member first, each group cheapest first: the order the recommender reads them in."""


def write_groups(db: sqlite_utils.Database, provider: str) -> int:
    """Rewrite ``provider``'s offer groups from its ``rentables`` rows, in chunks of at most
    ``CHUNK_ROWS`` rows read as a stream (SQLite sorts them on disk): memory stays the same
    whatever the provider's row count. Returns how many rows they hold."""
    conn = db.conn
    conn.execute("DELETE FROM rentable_groups WHERE provider = ?", [provider])
    chunks = _Chunks(conn, provider)
    cursor = conn.execute(_GROUPED, [provider])
    while batch := cursor.fetchmany(1024):
        for row in batch:
            chunks.add(machine_key(row), row)
    chunks.flush()
    return chunks.total


class _Chunks:
    """Groups of rows gathered into chunks of ``CHUNK_ROWS`` rows, each written when full (a
    group that does not fit goes on in the next chunk)."""

    def __init__(self, conn: sqlite3.Connection, provider: str) -> None:
        self.conn, self.provider = conn, provider
        self.groups: list[tuple[list[tuple], bool]] = []  # rows, continues the last chunk's
        self.key: object = None
        self.rows = self.total = self.number = 0

    def add(self, key: object, row: tuple) -> None:
        if self.rows >= CHUNK_ROWS:
            self.flush()
            self.groups.append(([], True))  # the same group goes on in the new chunk
        if key != self.key or not self.groups:
            self.groups.append(([], False))
            self.key = key
        self.groups[-1][0].append(row)
        self.rows += 1
        self.total += 1

    def flush(self) -> None:
        if not self.rows:
            return
        split = [
            ([], rows, True) if continues else (rows[:HEAD_ROWS], rows[HEAD_ROWS:], False)
            for rows, continues in self.groups
            if rows
        ]
        self.conn.execute(
            "INSERT INTO rentable_groups (provider, chunk, row_count, groups) VALUES (?, ?, ?, ?)",
            [self.provider, self.number, self.rows, packing.encode_chunk(split)],
        )
        self.groups, self.rows, self.number = [], 0, self.number + 1
