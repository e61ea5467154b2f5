"""Rebuild the materialised rentables of one provider from its current prices.

``pricing.query.rentables()`` must hand 100,000 machines to the recommender in well under a
second, so the join (offerings x current prices x GCP host x spot risk x billing rules) is done
once per refresh, in the refresh's own transaction, into two forms:

- the ``rentables`` table, indexed, for filtered queries (``advisor prices list``);
- ``rentable_groups``: the same rows in offer groups of identical machines (``pricing.offers.
  OfferGroup``), one marshalled blob per provider: per group its ``HEAD_ROWS`` cheapest rows, every
  member's price (a packed array) and the other rows as a blob of their own, decoded only when
  asked for. The recommender reads this: the few rows it ranks, not all 100,000.

GCP attachable GPUs get the first host of ``data/gcp-hosts.csv`` (by rank) that has a price in
the same region and pricing model; without one they are not rentable there. TPU VMs are rentable
as they are. Host machine types that come only with their GPUs (A2, A3, A4, G2) are never
offered CPU-only. A machine whose shape is unknown (an Azure Retail size that the SkyPilot Azure
catalog does not list: no vCPUs, no GPU facts) keeps its prices but is not rentable, since it
could be a GPU machine taken for a CPU one.
"""

from __future__ import annotations

import csv
import marshal
from array import array
from typing import TYPE_CHECKING

from advisor import locations
from pricing.offers import PRICE_INDEX, machine_key

if TYPE_CHECKING:
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


def write_groups(db: sqlite_utils.Database, provider: str) -> int:
    """Rewrite ``provider``'s blob of offer groups from its ``rentables`` rows; returns how many
    rows it holds."""
    conn = db.conn
    rows = conn.execute(  # cheapest first, so every group comes out sorted
        "SELECT * FROM rentables WHERE provider = ? ORDER BY usd_per_hour", [provider]
    ).fetchall()
    conn.execute("DELETE FROM rentable_groups WHERE provider = ?", [provider])
    if not rows:
        return 0
    groups: dict[tuple[object, ...], list[tuple]] = {}
    for row in _shared(rows):
        groups.setdefault(machine_key(row), []).append(row)
    encoded = [
        (
            members[:HEAD_ROWS],
            array("d", [row[PRICE_INDEX] for row in members]).tobytes(),
            marshal.dumps(members[HEAD_ROWS:]) if len(members) > HEAD_ROWS else b"",
        )
        for members in groups.values()
    ]
    conn.execute(
        "INSERT INTO rentable_groups (provider, row_count, groups) VALUES (?, ?, ?)",
        [provider, len(rows), marshal.dumps(encoded)],
    )
    return len(rows)


_REPEATED = (0, 1, 2, 3, 6, 7, 10, 15, 16)
"""Columns whose values repeat (provider, region, ..., source): stored once in the blob."""


def _shared(rows: list[tuple]) -> list[tuple]:
    """Make equal repeated strings one object, so marshal writes each once (smaller, faster load)."""
    if not rows:
        return rows
    columns = list(zip(*rows, strict=True))
    seen: dict = {}
    for index in _REPEATED:
        columns[index] = tuple(map(seen.setdefault, columns[index], columns[index]))
    return list(zip(*columns, strict=True))
