"""Probe results in the user's SQLite database, keyed by workload, configuration and device.

One row per (workload configuration, device key); a newer probe of the same key replaces the
older one. Imported results (from another machine) live in the same table with ``source`` set
to where they came from. Nothing here imports TensorFlow.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from advisor.store import migrate
from probes.result import Fingerprint, ProbeResult, WorkloadConfig

if TYPE_CHECKING:
    import sqlite_utils

TABLE = "probe_results"


def _create_results(db: sqlite_utils.Database) -> None:
    db.execute(
        f"""CREATE TABLE {TABLE} (
            workload TEXT NOT NULL,
            samples INTEGER NOT NULL,
            validation_samples INTEGER NOT NULL,
            epochs INTEGER NOT NULL,
            batch_size INTEGER NOT NULL,
            device_key TEXT NOT NULL,
            source TEXT NOT NULL DEFAULT 'local',
            created_at TEXT NOT NULL,
            result TEXT NOT NULL,
            PRIMARY KEY (workload, samples, validation_samples, epochs, batch_size, device_key)
        )"""
    )
    db.execute(f"CREATE INDEX {TABLE}_by_workload ON {TABLE} (workload, created_at)")


STEPS = [_create_results]


def ensure(db: sqlite_utils.Database) -> None:
    migrate(db, "probes", STEPS)


def save(db: sqlite_utils.Database, result: ProbeResult, *, source: str = "local") -> None:
    """Store ``result`` (replacing an earlier one with the same configuration and device)."""
    ensure(db)
    c = result.config
    with db.conn:
        db.conn.execute(
            f"INSERT OR REPLACE INTO {TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [c.workload, c.samples, c.validation_samples, c.epochs, c.batch_size,
             result.device.key, source, result.created_at, to_json(result)],
        )  # fmt: skip


def find(db: sqlite_utils.Database, config: WorkloadConfig, device_key: str) -> ProbeResult | None:
    """The stored result for exactly this configuration on this device, or None."""
    ensure(db)
    row = db.execute(
        f"SELECT result FROM {TABLE} WHERE workload = ? AND samples = ? AND validation_samples = ? "
        "AND epochs = ? AND batch_size = ? AND device_key = ?",
        [config.workload, config.samples, config.validation_samples, config.epochs,
         config.batch_size, device_key],
    ).fetchone()  # fmt: skip
    return from_json(row[0]) if row else None


def latest(db: sqlite_utils.Database, workload: str) -> list[ProbeResult]:
    """The newest result of ``workload`` per device (local and imported), newest first."""
    ensure(db)
    rows = db.execute(
        f"SELECT device_key, result FROM {TABLE} WHERE workload = ? ORDER BY created_at DESC",
        [workload],
    ).fetchall()
    seen: set[str] = set()
    results = []
    for key, blob in rows:
        if key not in seen:
            seen.add(key)
            results.append(from_json(blob))
    return results


def to_json(result: ProbeResult) -> str:
    return json.dumps(asdict(result), sort_keys=True)


def from_json(blob: str) -> ProbeResult:
    """The inverse of ``to_json`` (JSON turns tuples into lists and int keys into strings)."""
    raw: dict[str, Any] = json.loads(blob)
    raw["config"] = WorkloadConfig(**raw["config"])
    raw["device"] = Fingerprint(**raw["device"])
    for name in ("step_interval", "predicted_interval"):
        raw[name] = tuple(raw[name])
    for name in ("thread_scaling", "batch_scaling"):
        raw[name] = {int(k): float(v) for k, v in raw[name].items()}
    return ProbeResult(**raw)
