"""The shipped seed: real public prices, so a fresh install answers without any network.

``data/prices-seed.sqlite`` is built from ``data/prices-reference.csv`` (285 rows taken from
skypilot-org/skypilot-catalog at pinned commits; provenance in docs/SOURCES.md and
data/prices-SOURCES.md) by ``python -m pricing.seed``. It is opened read-only
and copied into the user's database on first use, through the same validation and storage path
as a refresh. It is never written to after it is built.
"""

from __future__ import annotations

import csv
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path

from advisor import locations
from pricing.observations import Observation

SEED_FILE = "prices-seed.sqlite"
REFERENCE_FILE = "prices-reference.csv"
SOURCE = "seed"

_COLUMNS = (
    "provider, region, zone, instance_type, vcpus, memory_gib, accelerator, accelerator_count, "
    "accelerator_memory_gib, attachable, pricing, usd_per_hour, origin"
)


def _number(text: str) -> float | None:
    return float(text) if text.strip() else None


def read_reference(path: Path) -> list[tuple]:
    """Rows of the reference CSV as seed rows (Observation fields + where they came from)."""
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            (
                row["provider"],
                row["region"],
                "",
                row["instance_type"],
                _number(row["vcpus"]),
                _number(row["memory_gib"]),
                row["accelerator"],
                int(row["accelerator_count"] or 0),
                _number(row["accelerator_memory_gib"]),
                int(row["attachable"]),
                row["pricing"],
                float(row["usd_per_hour"]),
                f"skypilot-catalog {row['source_path']}@{row['source_commit'][:8]}",
            )
            for row in csv.DictReader(handle)
        ]


def build(reference: Path, target: Path) -> int:
    """Write the seed database at ``target`` from ``reference``; returns the row count."""
    rows = read_reference(reference)
    target.unlink(missing_ok=True)
    conn = sqlite3.connect(target)
    with conn:
        conn.execute(
            "CREATE TABLE seed_prices (provider TEXT, region TEXT, zone TEXT, instance_type TEXT, "
            "vcpus REAL, memory_gib REAL, accelerator TEXT, accelerator_count INTEGER, "
            "accelerator_memory_gib REAL, attachable INTEGER, pricing TEXT, usd_per_hour REAL, "
            "origin TEXT)"
        )
        conn.execute("CREATE TABLE seed_meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.executemany(
            f"INSERT INTO seed_prices ({_COLUMNS}) VALUES ({','.join('?' * 13)})", rows
        )
        built = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        conn.executemany(
            "INSERT INTO seed_meta VALUES (?, ?)",
            [("built_at", built), ("reference", reference.name), ("rows", str(len(rows)))],
        )
    conn.execute("VACUUM")
    conn.close()
    return len(rows)


def read_seed() -> tuple[str, dict[str, list[tuple[Observation, str]]]]:
    """The seed's build time and its observations by provider (opened read-only)."""
    path = locations.shipped(SEED_FILE)
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        built_at = conn.execute("SELECT value FROM seed_meta WHERE key = 'built_at'").fetchone()[0]
        by_provider: dict[str, list[tuple[Observation, str]]] = {}
        for row in conn.execute(f"SELECT {_COLUMNS} FROM seed_prices"):
            observation = Observation._make((*row[:9], bool(row[9]), row[10], row[11]))
            by_provider.setdefault(observation.provider, []).append((observation, row[12]))
    finally:
        conn.close()
    return built_at, by_provider


if __name__ == "__main__":
    data = Path(__file__).resolve().parent.parent / "data"
    count = build(data / REFERENCE_FILE, data / SEED_FILE)
    print(f"wrote {count} seed prices to {data / SEED_FILE}", file=sys.stderr)
