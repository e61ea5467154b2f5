"""Refresh prices from the public sources: one transaction per source and cloud.

For each (source, cloud) a ``refresh_runs`` row is committed as ``running``; the download and
parsing happen outside any transaction; the prices, the materialised rentables and the run's
``ok`` are then written in one ``BEGIN IMMEDIATE`` transaction. So a failure, a Ctrl-C or a
SIGKILL leaves the previous prices exactly as they were (a killed run stays ``running``), and a
reader (WAL) sees the old prices or the new ones, never a mix.

A batch that would retire most of a source's prices, or whose rows are mostly invalid, is
refused inside that transaction (``pricing.shrink``): it rolls back, the run is recorded as
failed with the reason, and the report says ``refused``; ``allow_shrink`` accepts it. Each
source's downloads share one deadline and stay on its configured origin (``pricing.fetch``);
the whole command has one deadline too, so stalled sources do not add their deadlines up.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from advisor import store
from advisor.disk import explain
from advisor.errors import AdvisorError, Cancelled, UsageError
from pricing import database, fetch, ingest, materialise, shrink
from pricing.sources import (
    PriceBatch,
    RiskBatch,
    aws_spot_advisor,
    azure_retail,
    gcp_billing,
    skypilot_catalog,
)
from pricing.spool import Spool

if TYPE_CHECKING:
    import sqlite_utils

SOURCES: dict[str, ModuleType] = {
    module.NAME: module
    for module in (skypilot_catalog, azure_retail, aws_spot_advisor, gcp_billing)
}
DEFAULT_SOURCES = ("skypilot", "aws-spot-advisor", "azure-retail")
"""What ``refresh`` does by default; ``gcp-billing`` joins them when its API key is set."""
REFRESH_CACHE_KIB = 32 * 1024
"""SQLite's page cache while a refresh writes: the index pages of a 100,000-row catalog stay in
memory (the default 2 MB spills and re-reads them). SQLite's sorts (the offer groups, written in
order) keep up to this much in memory each, then go on on disk: so a catalog of millions of rows
costs about three times this, not its size."""
SIZES_KEPT = 4_096


@dataclass(frozen=True)
class RefreshProgress:
    """One step of a refresh, for a progress bar."""

    source: str
    unit: str
    phase: str
    """``download``, ``write``, ``done`` or ``failed``."""
    done: int
    total: int | None
    """None while the size is unknown."""
    what: str = ""
    """What ``done`` counts: ``bytes``, ``pages`` or ``rows``."""


@dataclass(frozen=True)
class RunReport:
    """The outcome of refreshing one source for one cloud."""

    source: str
    unit: str
    url: str
    status: str
    """``ok``, ``failed`` or ``refused`` (a shrinking catalog, see ``pricing.shrink``)."""
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    skipped: int = 0
    removed: int = 0
    error: str | None = None
    started_at: str = ""
    finished_at: str = ""
    unmapped: tuple[tuple[str, int], ...] = ()
    """Accelerator names the device catalog lacks, with their offerings (no time prediction)."""


def source_url(name: str, urls: dict[str, str] | None = None) -> str | None:
    """The URL of source ``name``: ``urls``, then ``ADVISOR_<NAME>_URL``, else its default."""
    if urls and urls.get(name):
        return urls[name]
    env = f"ADVISOR_{name.upper().replace('-', '_')}_URL"
    if name == "skypilot":
        env = "ADVISOR_SKYPILOT_CATALOG_URL"
    return os.environ.get(env) or None


def plan(sources: list[str] | None) -> list[tuple[str, str]]:
    """(source, cloud) pairs to refresh; a source may be named ``name`` or ``name/cloud``."""
    pairs: list[tuple[str, str]] = []
    defaults = [*DEFAULT_SOURCES, *([gcp_billing.NAME] if gcp_billing.api_key() else [])]
    for entry in sources or defaults:
        name, _, unit = entry.partition("/")
        module = SOURCES.get(name)
        if module is None:
            raise UsageError(f"unknown price source {name!r}: use one of {sorted(SOURCES)}")
        if unit and unit not in module.UNITS:
            raise UsageError(f"source {name!r} covers {list(module.UNITS)}, not {unit!r}")
        pairs.extend((name, u) for u in ([unit] if unit else module.UNITS))
    return list(dict.fromkeys(pairs))


def refresh(
    db: sqlite_utils.Database,
    sources: list[str] | None,
    *,
    urls: dict[str, str] | None = None,
    progress: Callable[[RefreshProgress], None] | None = None,
    policy: fetch.RetryPolicy | None = None,
    allow_shrink: bool = False,
) -> list[RunReport]:
    """Refresh ``sources`` (default: all that need no key); one report per source and cloud.

    ``allow_shrink`` stores a catalog even when it would retire most of a source's prices.
    """
    pairs = plan(sources)
    store.check_can_store(db, "refreshed prices")  # before anything is downloaded
    policy = (policy or fetch.RetryPolicy()).for_command()
    report = progress or (lambda event: None)
    reports = []
    cache_size = db.conn.execute("PRAGMA cache_size").fetchone()[0]
    db.conn.execute(f"PRAGMA cache_size = -{REFRESH_CACHE_KIB}")
    try:
        with fetch.client(policy.timeout_seconds) as http:
            for name, unit in pairs:
                one = _refresh_one(db, http, name, unit, urls, policy, report, allow_shrink)
                reports.append(one)
    finally:
        db.conn.execute(f"PRAGMA cache_size = {int(cache_size)}")
    return reports


def _refresh_one(
    db: sqlite_utils.Database,
    http: object,
    name: str,
    unit: str,
    urls: dict[str, str] | None,
    policy: fetch.RetryPolicy,
    report: Callable[[RefreshProgress], None],
    allow_shrink: bool = False,
) -> RunReport:
    """Refresh source ``name`` for cloud ``unit``: its run recorded as ``running``, the
    download outside any transaction, the prices and the run's ``ok`` in one. A refused batch
    or a failure is recorded and reported (the other sources still run); a Ctrl-C cancels the
    refresh, and a storage error stops it."""
    module = SOURCES[name]
    base = source_url(name, urls)
    url = (
        skypilot_catalog.url_for(base, unit)
        if module is skypilot_catalog
        else base or module.DEFAULT_URL
    )
    started = database.now()
    run_id = _start(db, name, unit, url, started)
    if policy.command_left() <= 0:  # an earlier source used the whole command's time
        message = (
            f"not tried: the {policy.command_deadline_seconds:g} s deadline of the whole "
            "refresh passed ([refresh] command_deadline_seconds in config.toml); prices unchanged"
        )
        finished = _fail(db, run_id, message)
        report(RefreshProgress(name, unit, "failed", 0, None))
        return RunReport(
            name, unit, url, "failed", error=message, started_at=started, finished_at=finished
        )
    step = _progress(name, unit, report)
    try:
        batch = _download(http, module, base, unit, url, policy, step)
        counts, finished = _commit(db, batch, run_id, started, step, allow_shrink)
    except shrink.Refused as exc:
        finished = _fail(db, run_id, f"refused: {exc}; prices unchanged")
        step("failed", 0, None)
        return RunReport(
            name, unit, url, "refused", error=str(exc), started_at=started, finished_at=finished
        )
    except KeyboardInterrupt:
        _fail(db, run_id, "cancelled")
        raise Cancelled(f"refresh of {name}/{unit} cancelled; previous prices kept") from None
    except sqlite3.Error as exc:  # the disk filled up, the file broke: say so, and stop
        raise store.StorageError(explain(exc, store.path_of(db))) from exc
    except Exception as exc:  # recorded, reported, and the other sources still run
        message = str(exc) if isinstance(exc, AdvisorError) else f"{type(exc).__name__}: {exc}"
        finished = _fail(db, run_id, message)
        step("failed", 0, None)
        return RunReport(
            name, unit, url, "failed", error=message, started_at=started, finished_at=finished
        )
    step("done", 1, 1)
    return RunReport(
        name,
        unit,
        url,
        "ok",
        counts.added,
        counts.changed,
        counts.unchanged,
        counts.skipped,
        counts.removed,
        None,
        started,
        finished,
        tuple(batch.unmapped.items()) if isinstance(batch, PriceBatch) else (),
    )


def _progress(
    name: str, unit: str, report: Callable[[RefreshProgress], None]
) -> Callable[[str, int, int | None], None]:
    """``report`` of source ``name``'s refresh for ``unit``, a phase at a time: what the
    download counts (pages of a paged API, else bytes) and the write (rows)."""
    paged = name in (azure_retail.NAME, gcp_billing.NAME)

    def step(phase: str, done: int, total: int | None) -> None:
        what = {"download": "pages" if paged else "bytes", "write": "rows"}.get(phase, "")
        report(RefreshProgress(name, unit, phase, done, total, what))

    return step


def _download(
    http: object,
    module: ModuleType,
    base: str | None,
    unit: str,
    url: str,
    policy: fetch.RetryPolicy,
    step: Callable[[str, int, int | None], None],
) -> PriceBatch | RiskBatch | gcp_billing.Rates:
    """Download and parse source ``module``'s batch for ``unit`` from ``base`` (None: its
    default) within the source's deadline, outside any transaction."""
    step("download", 0, None)
    return module.collect(
        http,
        base,
        unit,
        policy=policy.started(url),
        on_bytes=lambda n, t: step("download", n, t),
    )


def _commit(
    db: sqlite_utils.Database,
    batch: PriceBatch | RiskBatch | gcp_billing.Rates,
    run_id: int,
    started: str,
    step: Callable[[str, int, int | None], None],
    allow_shrink: bool,
) -> tuple[ingest.Counts, str]:
    """Store ``batch`` and mark run ``run_id`` ``ok`` in one ``BEGIN IMMEDIATE`` transaction;
    a batch that shrinks the catalog too far (``pricing.shrink``), unless ``allow_shrink``,
    raises ``shrink.Refused`` and rolls it back. The counts written, and when the run ended."""
    with db.conn:
        db.conn.execute("BEGIN IMMEDIATE")
        counts = _store(db, batch, run_id, started, step)
        refused = None if allow_shrink else shrink.refusal(counts)
        if refused:
            raise shrink.Refused(refused)  # rolls the transaction back
        finished = database.now()
        db.conn.execute(
            "UPDATE refresh_runs SET status = 'ok', finished_at = ?, added = ?, changed = ?, "
            "unchanged = ?, skipped = ? WHERE id = ?",
            [finished, counts.added, counts.changed, counts.unchanged, counts.skipped, run_id],
        )
    return counts, finished


def _store(
    db: sqlite_utils.Database,
    batch: PriceBatch | RiskBatch | gcp_billing.Rates,
    run_id: int,
    fetched_at: str,
    step: Callable[[str, int, int | None], None],
) -> ingest.Counts:
    database.load_billing_rules(db)
    materialise.load_hosts(db)
    if isinstance(batch, RiskBatch):
        return _store_risk(db, batch, fetched_at)
    if isinstance(batch, gcp_billing.Rates):
        batch = gcp_billing.compose(batch, gcp_billing.shapes(db.conn))
    observations = batch.observations
    if batch.provider == "azure":
        observations = _with_azure_sizes(db, observations)
    try:
        return ingest.write(
            db,
            batch.provider,
            observations,
            source=batch.source,
            fetched_at=fetched_at,
            run_id=run_id,
            skipped=batch.skipped,
            retire=batch.retire,
            progress=lambda done, total: step("write", done, total),
        )
    finally:
        if isinstance(batch.observations, Spool):
            batch.observations.close()


def _store_risk(db: sqlite_utils.Database, batch: RiskBatch, fetched_at: str) -> ingest.Counts:
    conn = db.conn
    before = conn.execute(
        "SELECT region, instance_type FROM spot_risk WHERE provider = ?", [batch.provider]
    )
    known = set(before.fetchall())
    previous = len(known)
    gone = known - {(r.region, r.instance_type) for r in batch.risks}
    conn.execute("DELETE FROM spot_risk WHERE provider = ?", [batch.provider])
    conn.executemany(
        "INSERT INTO spot_risk VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                batch.provider,
                r.region,
                r.instance_type,
                r.bucket,
                r.label,
                r.savings_pct,
                r.interruptions_per_hour,
                fetched_at,
                batch.source,
            )
            for r in batch.risks
        ],
    )
    count = materialise.rebuild(db, batch.provider)
    added = max(len(batch.risks) - previous, 0)
    return ingest.Counts(
        added, len(batch.risks) - added, 0, batch.skipped, len(gone), count, previous
    )


def _with_azure_sizes(db: sqlite_utils.Database, observations: Iterable) -> Iterator:
    """Azure Retail rows with the vCPUs, memory and GPUs the SkyPilot Azure catalog knows, read
    a size at a time (the last ``SIZES_KEPT`` found are kept for the rows that follow)."""
    select = (
        "SELECT vcpus, memory_gib, accelerator, accelerator_count, accelerator_memory_gib "
        "FROM offerings WHERE provider = 'azure' AND instance_type = ? AND vcpus IS NOT NULL "
        "ORDER BY region = ? DESC LIMIT 1"  # a size is the same in every region
    )

    @functools.lru_cache(maxsize=SIZES_KEPT)
    def facts(region: str, size: str) -> tuple | None:
        return db.conn.execute(select, [size, region]).fetchone()

    for row in observations:
        found = facts(row.region, row.instance_type)
        if found:
            row = row._replace(
                vcpus=found[0],
                memory_gib=found[1],
                accelerator=found[2],
                accelerator_count=found[3],
                accelerator_memory_gib=found[4],
            )
        yield row


def _start(db: sqlite_utils.Database, name: str, unit: str, url: str, started: str) -> int:
    """Record a run as ``running``; an older run still ``running`` was killed before it
    committed (its prices never reached the database): say so."""
    with db.conn:
        db.conn.execute(
            "UPDATE refresh_runs SET status = 'failed', error = 'interrupted before it "
            "committed; its prices were not stored' WHERE source = ? AND unit = ? "
            "AND status = 'running'",
            [name, unit],
        )
        cursor = db.conn.execute(
            "INSERT INTO refresh_runs (source, unit, url, started_at, status) "
            "VALUES (?, ?, ?, ?, 'running')",
            [name, unit, url, started],
        )
    return int(cursor.lastrowid or 0)


def _fail(db: sqlite_utils.Database, run_id: int, message: str) -> str:
    finished = database.now()
    with db.conn:
        db.conn.execute(
            "UPDATE refresh_runs SET status = 'failed', finished_at = ?, error = ? WHERE id = ?",
            [finished, message, run_id],
        )
    return finished
