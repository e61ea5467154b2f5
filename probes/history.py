"""Probe results in the user's SQLite database, keyed by workload, configuration and device.

One row per (workload configuration, device key); a newer probe of the same key replaces the
older one. Every probe saved is also kept as a run in ``probe_runs`` (its figures, not the whole
result): repeated probes of one workload on one device show how much this machine's answers move
from run to run (``run_log_sigma``), which the interval of a local prediction must hold. Imported results (from another machine) live in the same table with ``source`` set
to where they came from. Nothing here imports TensorFlow.

Only sane results are stored (``probes.validity``): ``save`` refuses any other. A row that is
not sane when read back (stored by an older version, or edited by hand) is skipped with one
warning line on stderr, as if it were absent.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from advisor.errors import AdvisorError
from advisor.store import migrate
from advisor.workloads.llm_job import PROBE_PREFIX as LLM_PREFIX
from probes.result import Architecture, Fingerprint, ProbeResult, WorkloadConfig
from probes.script import PREFIX as SCRIPT_PREFIX
from probes.validity import problem

_log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import sqlite_utils

TABLE = "probe_results"
_CONFIG_COLUMNS = (
    "workload TEXT NOT NULL, samples INTEGER NOT NULL, validation_samples INTEGER NOT NULL, "
    "epochs INTEGER NOT NULL, batch_size INTEGER NOT NULL, device_key TEXT NOT NULL"
)
"""The columns every probe table keys its rows by: a workload configuration on a device."""
_CONFIG_KEY = "workload, samples, validation_samples, epochs, batch_size, device_key"


def _create_results(db: sqlite_utils.Database) -> None:
    db.execute(
        f"""CREATE TABLE {TABLE} (
            {_CONFIG_COLUMNS},
            source TEXT NOT NULL DEFAULT 'local',
            created_at TEXT NOT NULL,
            result TEXT NOT NULL,
            PRIMARY KEY ({_CONFIG_KEY})
        )"""
    )
    db.execute(f"CREATE INDEX {TABLE}_by_workload ON {TABLE} (workload, created_at)")


RUNS = "probe_runs"


def _create_runs(db: sqlite_utils.Database) -> None:
    db.execute(
        f"""CREATE TABLE {RUNS} (
            {_CONFIG_COLUMNS},
            created_at TEXT NOT NULL,
            step_seconds REAL NOT NULL,
            predicted_seconds REAL NOT NULL,
            machine_drift REAL NOT NULL
        )"""
    )
    db.execute(f"CREATE INDEX {RUNS}_by_device ON {RUNS} (device_key, created_at)")


FALLBACKS = "probe_fallbacks"


def _create_fallbacks(db: sqlite_utils.Database) -> None:
    db.execute(
        f"""CREATE TABLE {FALLBACKS} (
            {_CONFIG_COLUMNS},
            reason TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY ({_CONFIG_KEY})
        )"""
    )


STEPS = [_create_results, _create_runs, _create_fallbacks]
RECENT_RUNS = 10
"""Runs of one workload configuration that count towards its spread: the newest ten (a machine
changes; last month's neighbours on a shared host say little about today's)."""


def ensure(db: sqlite_utils.Database, *, reading: bool = False) -> int:
    """Bring the probe tables up to date and return their version; ``reading``: a read-only
    database needs only the results table (version 1), not the runs added later."""
    return migrate(db, "probes", STEPS, readable_from=1 if reading else None)


def save(db: sqlite_utils.Database, result: ProbeResult, *, source: str = "local") -> None:
    """Store ``result`` (replacing an earlier one with the same configuration and device), or an
    ``AdvisorError`` saying what is wrong with it."""
    result = _floored(result)
    wrong = problem(result)
    if wrong is not None:
        raise AdvisorError(f"refusing to store the probe of {result.config.workload}: {wrong}")
    ensure(db)
    c = result.config
    sizes = [c.workload, c.samples, c.validation_samples, c.epochs, c.batch_size]
    with db.conn:
        db.conn.execute(
            f"INSERT OR REPLACE INTO {TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [*sizes, result.device.key, source, result.created_at, to_json(result)],
        )
        db.conn.execute(
            f"INSERT INTO {RUNS} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [*sizes, result.device.key, result.created_at, result.step_seconds,
             result.predicted_seconds, result.machine_drift],
        )  # fmt: skip
        db.conn.execute(f"DELETE FROM {FALLBACKS} WHERE {_KEY}", [*sizes, result.device.key])


_KEY = (
    "workload = ? AND samples = ? AND validation_samples = ? AND epochs = ? AND batch_size = ? "
    "AND device_key = ?"
)
"""A stored row's key: a workload configuration on a device."""


@dataclass(frozen=True)
class Fallback:
    """A probe that could not run on this device: why, and when it was tried. Stored so that
    the next call predicts without it at once rather than spending the same seconds to fail
    again (an LLM job's proxy: its prediction is the device model's either way)."""

    reason: str
    """The probe's one-line error."""
    created_at: str


MAX_REASON = 500
"""Characters of a fallback's reason kept: an error line, never a traceback."""


def save_fallback(
    db: sqlite_utils.Database, config: WorkloadConfig, device_key: str, reason: str
) -> Fallback:
    """Store that ``config`` could not be probed on ``device_key``, and why (replacing an earlier
    fallback; a probe stored later replaces it, ``save``)."""
    ensure(db)
    fallback = Fallback(" ".join(reason.split())[:MAX_REASON], _now())
    sizes = [config.workload, config.samples, config.validation_samples, config.epochs,
             config.batch_size]  # fmt: skip
    with db.conn:
        db.conn.execute(
            f"INSERT OR REPLACE INTO {FALLBACKS} VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [*sizes, device_key, fallback.reason, fallback.created_at],
        )
    return fallback


def find_fallback(
    db: sqlite_utils.Database, config: WorkloadConfig, device_key: str
) -> Fallback | None:
    """The stored fallback of exactly this configuration on this device, or None (also from a
    read-only database older than the fallbacks' table)."""
    if ensure(db, reading=True) < len(STEPS):
        return None
    row = db.execute(
        f"SELECT reason, created_at FROM {FALLBACKS} WHERE {_KEY}",
        [config.workload, config.samples, config.validation_samples, config.epochs,
         config.batch_size, device_key],
    ).fetchone()  # fmt: skip
    return Fallback(str(row[0]), str(row[1])) if row else None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def run_log_sigma(db: sqlite_utils.Database, device_key: str) -> tuple[float, int] | None:
    """How much repeated probes of the same workload on this device disagree: the pooled standard
    deviation of log(predicted seconds) within each configuration (its newest ``RECENT_RUNS``),
    and the number of runs it rests on; None with fewer than two degrees of freedom."""
    if ensure(db, reading=True) < 2:  # an older database, read-only here: no runs kept yet
        return None
    rows = db.execute(
        f"SELECT workload, samples, validation_samples, epochs, batch_size, predicted_seconds "
        f"FROM {RUNS} WHERE device_key = ? ORDER BY created_at DESC",
        [device_key],
    ).fetchall()
    groups: dict[tuple[object, ...], list[float]] = {}
    for *key, seconds in rows:
        runs = groups.setdefault(tuple(key), [])
        if len(runs) < RECENT_RUNS and seconds > 0:
            runs.append(math.log(seconds))
    squares, runs_used, freedom = 0.0, 0, 0
    for logs in groups.values():
        if len(logs) >= 2:
            mean = sum(logs) / len(logs)
            squares += sum((x - mean) ** 2 for x in logs)
            runs_used += len(logs)
            freedom += len(logs) - 1
    if freedom < 2:
        return None
    return math.sqrt(squares / freedom), runs_used


def _floored(result: ProbeResult) -> ProbeResult:
    """``result`` with its intervals' lower ends raised to 0 where a wide relative uncertainty
    (an extrapolated batch size) took them below: a time is never negative, and 0 says the same."""
    (step_low, step_high), (low, high) = result.step_interval, result.predicted_interval
    if step_low >= 0 and low >= 0:
        return result
    return replace(
        result,
        step_interval=(max(0.0, step_low), step_high),
        predicted_interval=(max(0.0, low), high),
    )


def find(db: sqlite_utils.Database, config: WorkloadConfig, device_key: str) -> ProbeResult | None:
    """The stored result for exactly this configuration on this device, or None."""
    ensure(db, reading=True)
    row = db.execute(
        f"SELECT result FROM {TABLE} WHERE workload = ? AND samples = ? AND validation_samples = ? "
        "AND epochs = ? AND batch_size = ? AND device_key = ?",
        [config.workload, config.samples, config.validation_samples, config.epochs,
         config.batch_size, device_key],
    ).fetchone()  # fmt: skip
    return _readable(row[0], config.workload) if row else None


def stored_at(db: sqlite_utils.Database, result: ProbeResult) -> str | None:
    """When the stored probe with ``result``'s configuration and device was measured (its
    ``created_at``), or None when there is none."""
    ensure(db, reading=True)
    c = result.config
    row = db.execute(
        f"SELECT created_at FROM {TABLE} WHERE workload = ? AND samples = ? "
        "AND validation_samples = ? AND epochs = ? AND batch_size = ? AND device_key = ?",
        [c.workload, c.samples, c.validation_samples, c.epochs, c.batch_size, result.device.key],
    ).fetchone()
    return str(row[0]) if row else None


def latest(db: sqlite_utils.Database, workload: str) -> list[ProbeResult]:
    """The newest result of ``workload`` per device (local and imported), newest first."""
    ensure(db, reading=True)
    rows = db.execute(
        f"SELECT device_key, result FROM {TABLE} WHERE workload = ? ORDER BY created_at DESC",
        [workload],
    ).fetchall()
    seen: set[str] = set()
    results = []
    for key, blob in rows:
        if key not in seen:
            result = _readable(blob, workload)
            if result is not None:
                seen.add(key)
                results.append(result)
    return results


def recent_probe_seconds(
    db: sqlite_utils.Database, device_key: str, count: int = 20, *, llm: bool = False
) -> list[float]:
    """How long this device's latest ``count`` probes of the zoo and of files took (their
    ``probe_seconds``; a command's probe, a script's own run, left out), newest first; ``llm``:
    those of LLM jobs' proxies instead, which their budget bounds apart."""
    ensure(db, reading=True)
    kind = "workload LIKE ?" if llm else "workload NOT LIKE ? AND workload NOT LIKE ?"
    like = [f"{LLM_PREFIX}%"] if llm else [f"{SCRIPT_PREFIX}%", f"{LLM_PREFIX}%"]
    rows = db.execute(
        f"SELECT workload, result FROM {TABLE} WHERE device_key = ? AND source = 'local' "
        f"AND {kind} ORDER BY created_at DESC LIMIT ?",
        [device_key, *like, count],
    ).fetchall()
    found = (_readable(blob, workload) for workload, blob in rows)
    return [r.probe_seconds for r in found if r is not None and 0 < r.probe_seconds < 86_400]


def _readable(blob: str, workload: str) -> ProbeResult | None:
    """The stored result in ``blob``, or None (with a warning) when it is unreadable or insane."""
    try:
        result = from_json(blob)
    except RecursionError:  # a hand-made or damaged row: JSON nested thousands deep
        wrong: str | None = "unreadable (nested too deeply)"
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        wrong = f"unreadable ({type(exc).__name__})"
    else:
        wrong = problem(result)
    if wrong is None:
        return result
    _log.warning("advisor: warning: skipping a stored probe of %s: %s", workload, wrong)
    return None


def to_json(result: ProbeResult) -> str:
    return json.dumps(asdict(result), sort_keys=True, allow_nan=False)


def from_json(blob: str) -> ProbeResult:
    """The inverse of ``to_json`` (JSON turns tuples into lists and int keys into strings)."""
    raw: dict[str, Any] = json.loads(blob)
    raw["config"] = WorkloadConfig(**raw["config"])
    raw["device"] = Fingerprint(**raw["device"])
    for name in ("step_interval", "predicted_interval", "reference_seconds"):
        if name in raw:
            raw[name] = tuple(raw[name])
    for name in ("thread_scaling", "batch_scaling"):
        raw[name] = {int(k): float(v) for k, v in raw[name].items()}
    if raw.get("architecture") is not None:
        raw["architecture"] = Architecture.from_dict(raw["architecture"])
    return ProbeResult(**raw)
