"""Read the price database: rentable machines, billing rules, source freshness, history.

``offer_groups()`` loads the materialised offer groups (see ``pricing.materialise``) once per
database version and filters them by machine (the recommender's read: a few hundred groups whose
cheapest rows are decoded, not 100,000 rows); ``rentables()`` flattens them into rows;
``rentable_rows()`` runs the same filters as indexed SQL, cheapest first, for commands that
print a few rows. Names are matched case-insensitively; a name that matches
nothing in the database raises ``UsageError`` with the closest known names.
"""

from __future__ import annotations

import operator
import weakref
from array import array
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from advisor import display
from advisor.errors import UsageError, did_you_mean
from pricing import packing, seed
from pricing.offers import (
    PRICING_MODELS,
    STORED_FIELDS,
    BillingRule,
    Filters,
    OfferGroup,
    Rentable,
    group_offers,
    rentable,
)

if TYPE_CHECKING:
    import sqlite_utils

ANY = Filters()
_COLUMNS = ", ".join(STORED_FIELDS)
"""Named, not ``*``: a table changed by hand is a SQLite error the CLI explains, not a row of
the wrong width."""
_NAMED = {"provider": "provider", "region": "region", "accelerator": "accelerator"}


def offer_groups(db: sqlite_utils.Database, filters: Filters = ANY) -> list[OfferGroup]:
    """The latest price of every rentable machine matching ``filters``, in groups of identical
    machines, each cheapest first (what the recommender ranks)."""
    wanted = resolve(db, filters)
    if wanted.region is not None or wanted.max_price is not None:  # filters that split groups
        return group_offers(rentable_rows(db, wanted))
    by_provider = _all_groups(db)
    chosen = [by_provider.get(wanted.provider, [])] if wanted.provider else by_provider.values()
    tests = _tests(wanted)
    return [
        group for groups in chosen for group in groups if all(test(group.first) for test in tests)
    ]


def rentables(
    db: sqlite_utils.Database,
    *,
    provider: str | None = None,
    region: str | None = None,
    accelerator: str | None = None,
    pricing: str | None = None,
    cpu_only: bool = False,
    min_count: int | None = None,
    max_count: int | None = None,
    max_price: float | None = None,
) -> list[Rentable]:
    """The latest price of every rentable machine matching the filters, one row each."""
    wanted = Filters(
        provider, region, accelerator, pricing, cpu_only, min_count, max_count, max_price
    )
    return [r for group in offer_groups(db, wanted) for r in group.members()]


_LOADED: weakref.WeakKeyDictionary[sqlite_utils.Database, tuple[tuple[int, int], dict]] = (
    weakref.WeakKeyDictionary()
)
"""Per database object: the offer groups decoded at one database version, by provider."""


def _all_groups(db: sqlite_utils.Database) -> dict[str, list[OfferGroup]]:
    """Every offer group by provider, decoded once per database version.

    ``PRAGMA data_version`` changes when another connection commits and ``total_changes`` when
    this one writes, so a refresh anywhere is seen at the next call. All chunks are read in one
    statement: one snapshot, never a mix of two refreshes. Only each group's head rows are
    decoded here; the others when a caller reaches past them.
    """
    version = (db.conn.execute("PRAGMA data_version").fetchone()[0], db.conn.total_changes)
    cached = _LOADED.get(db)
    if cached is not None and cached[0] == version:
        return cached[1]
    blobs: dict[str, list[object]] = {}
    for provider, blob in db.conn.execute(
        "SELECT provider, groups FROM rentable_groups ORDER BY provider, chunk"
    ):
        blobs.setdefault(str(provider), []).append(blob)
    by_provider = {provider: _decode_groups(provider, chunks) for provider, chunks in blobs.items()}
    _LOADED[db] = (version, by_provider)
    return by_provider


class DamagedRow(UserWarning):
    """A stored row that cannot be decoded: skipped, the rest of the database still serves."""


def _decode_groups(provider: str, blobs: list[object]) -> list[OfferGroup]:
    """A provider's offer groups from its chunks, or none (with a ``DamagedRow`` warning naming
    the row) when a chunk is not what ``pricing.materialise`` writes: a damaged file must not
    stop every later command, and costs no more than its bytes to refuse (``pricing.packing``
    checks every count it reads against the bytes present)."""
    groups: list[OfferGroup] = []
    try:
        parts: list[tuple[list[tuple], list, list]] = []  # head, prices, rest ranges
        for blob in blobs:
            if not isinstance(blob, bytes):
                raise packing.Damaged(f"a chunk of {type(blob).__name__}, not bytes")
            chunk = packing.Chunk(blob)
            at = start = 0
            for head, members in zip(chunk.heads_rows, chunk.members, strict=True):
                prices = chunk.prices[start : start + members]
                rest = (chunk, at, at + members - len(head))
                if not head:  # the previous chunk's last group goes on
                    if not parts:
                        raise packing.Damaged("the first chunk continues a group")
                    parts[-1][1].append(prices)
                    parts[-1][2].append(rest)
                else:
                    parts.append((head, [prices], [rest]))
                at, start = rest[2], start + members
        for head, pieces, ranges in parts:
            whole = pieces[0]
            if len(pieces) > 1:
                whole = array("d")
                for piece in pieces:
                    whole.extend(piece)
            more = [r for r in ranges if r[2] > r[1]]
            groups.append(OfferGroup(head, whole, partial(_rest, provider, more) if more else None))
    except packing.Damaged as exc:
        _warn_damaged(provider, exc)
        return []
    return groups


def _rest(provider: str, ranges: list[tuple[packing.Chunk, int, int]]) -> list[tuple]:
    try:
        return [row for chunk, start, stop in ranges for row in chunk.rest()[start:stop]]
    except packing.Damaged as exc:
        _warn_damaged(provider, exc)
        return []


def _warn_damaged(provider: object, exc: BaseException) -> None:
    import warnings

    warnings.warn(
        f"rentable_groups row {str(provider)[:40]!r} of the price database is damaged "
        f"({str(exc)[:80]}); its offers are skipped ('advisor prices refresh' rewrites it)",
        DamagedRow,
        stacklevel=2,
    )


def rentable_rows(
    db: sqlite_utils.Database, filters: Filters, *, limit: int | None = None
) -> list[Rentable]:
    """The same as ``rentables()`` through indexed SQL, cheapest first (for a few rows)."""
    wanted = resolve(db, filters)
    clauses, params = _where(wanted)
    sql = f"SELECT {_COLUMNS} FROM rentables"
    if clauses:
        sql += " WHERE " + " AND ".join(clauses)
    sql += " ORDER BY usd_per_hour"  # the indexes end in usd_per_hour: no sort step
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [rentable(row) for row in db.conn.execute(sql, params)]


def resolve(db: sqlite_utils.Database, filters: Filters) -> Filters:
    """``filters`` with names spelled as the database spells them; UsageError for unknowns."""
    if filters.pricing is not None and filters.pricing not in PRICING_MODELS:
        raise UsageError(
            f"unknown pricing {display.quoted(filters.pricing)}: use one of {PRICING_MODELS}"
        )
    if filters.cpu_only and filters.accelerator is not None:
        raise UsageError("--cpu-only and --accelerator exclude each other")
    for name in ("min_count", "max_count", "max_price"):
        value = getattr(filters, name)
        if value is not None and value < 0:
            raise UsageError(f"{name.replace('_', '-')} must not be negative, not {value}")
    canonical = {
        column: _canonical(db, column, getattr(filters, column))
        for column in _NAMED
        if getattr(filters, column) is not None
    }
    return Filters(**{**filters.__dict__, **canonical})


def _canonical(db: sqlite_utils.Database, column: str, name: str) -> str:
    found = db.conn.execute(
        f"SELECT {column} FROM rentables WHERE {column} = ? COLLATE NOCASE LIMIT 1", [name]
    ).fetchone()
    if found is None:  # known to the database but not rentable (a GPU without a host)
        found = db.conn.execute(
            f"SELECT {column} FROM offerings WHERE {column} = ? COLLATE NOCASE LIMIT 1", [name]
        ).fetchone()
    if found is not None:
        return str(found[0])
    known = known_names(db, column)
    hint = did_you_mean(name, known, cutoff=0.5)
    if hint:
        raise UsageError(f"unknown {column} {display.quoted(name)}{hint}")
    shown = _listed(known[:8]) + (f" and {len(known) - 8} more" if len(known) > 8 else "")
    raise UsageError(
        f"unknown {column} {display.quoted(name)}: the price database knows {shown}; "
        "'advisor prices refresh' fetches the full catalogs"
    )


def _listed(names: list[str]) -> str:
    return ", ".join(repr(name) for name in names)


def known_names(db: sqlite_utils.Database, column: str) -> list[str]:
    """Every distinct provider, region or accelerator that has a rentable machine."""
    if column not in _NAMED:
        raise ValueError(column)
    sql = f"SELECT DISTINCT {column} FROM rentables WHERE {column} IS NOT NULL ORDER BY 1"
    return [row[0] for row in db.conn.execute(sql)]


def _where(f: Filters) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for column in ("provider", "region", "accelerator", "pricing"):
        value = getattr(f, column)
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if f.cpu_only:
        clauses.append("accelerator IS NULL")
    if f.min_count is not None:
        clauses.append("accelerator_count >= ?")
        params.append(f.min_count)
    if f.max_count is not None:
        clauses.append("accelerator_count <= ?")
        params.append(f.max_count)
    if f.max_price is not None:
        clauses.append("usd_per_hour <= ?")
        params.append(f.max_price)
    return clauses, params


def _tests(f: Filters) -> list[Callable[[tuple], bool]]:
    """Row tests for the stored rows (indexes of ``Rentable`` fields), most selective first."""
    tests = [
        _test(index, compare, value)
        for index, compare, value in (
            (7, operator.eq, f.accelerator),
            (1, operator.eq, f.region),
            (10, operator.eq, f.pricing),
            (8, operator.ge, f.min_count),
            (8, operator.le, f.max_count),
            (11, operator.le, f.max_price),
        )
        if value is not None
    ]
    if f.cpu_only:
        tests.append(_test(7, operator.is_, None))
    return tests


def _test(index: int, compare: Callable[[Any, Any], bool], value: Any) -> Callable[[tuple], bool]:
    return lambda row: compare(row[index], value)


def billing_rules(db: sqlite_utils.Database) -> dict[tuple[str, str], BillingRule]:
    """How each provider bills each pricing model, keyed by (provider, pricing)."""
    rules = {}
    for row in db.conn.execute(
        "SELECT provider, pricing, increment_seconds, minimum_seconds, max_runtime_seconds, "
        "preemption_notice_seconds, interruptions_per_hour, source FROM billing_rules"
    ):
        rule = BillingRule(*row)
        rules[(rule.provider, rule.pricing)] = rule
    return rules


@dataclass(frozen=True)
class SourceStatus:
    """How fresh one source's data is."""

    source: str
    unit: str
    """The cloud a source covers (``aws``), or ``all``."""
    last_success: str | None
    """When its last successful refresh finished (ISO 8601 UTC)."""
    age_days: float | None
    stale: bool
    """Older than the TTL, or never refreshed successfully."""
    last_status: str
    """``ok``, ``failed`` or ``running`` (a refresh in progress or killed midway)."""
    last_error: str | None
    offerings: int = 0
    """Offerings whose current price comes from this source and cloud (for a risk source such
    as ``aws-spot-advisor``: the instance types and regions it rates)."""
    providers: tuple[str, ...] = ()
    """The providers those offerings belong to (one, except for the seed)."""


def source_status(
    db: sqlite_utils.Database, ttl_days: float, *, now: datetime | None = None
) -> list[SourceStatus]:
    """Each source and cloud: last successful refresh, its age, stale or not, last outcome."""
    now = now or datetime.now(UTC)
    rows = db.conn.execute(
        "SELECT source, unit, "
        "(SELECT MAX(finished_at) FROM refresh_runs s WHERE s.source = r.source "
        " AND s.unit = r.unit AND s.status = 'ok'), status, error "
        "FROM refresh_runs r WHERE id = (SELECT MAX(id) FROM refresh_runs l "
        " WHERE l.source = r.source AND l.unit = r.unit) ORDER BY source, unit"
    ).fetchall()
    held = _holdings(db)
    statuses = []
    for source, unit, last_success, status, error in rows:
        age = None
        if last_success is not None:
            finished = datetime.strptime(last_success, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            age = (now - finished).total_seconds() / 86400
        # the shipped seed is a catalog snapshot of no stated date: stale until a refresh
        stale = age is None or age > ttl_days or source == seed.SOURCE
        by_provider = held.get((source, unit), {})
        statuses.append(
            SourceStatus(
                source,
                unit,
                last_success,
                age,
                stale,
                status,
                error,
                sum(by_provider.values()),
                tuple(sorted(by_provider)),
            )
        )
    return [_seed_superseded(status, statuses) for status in statuses]


def _holdings(db: sqlite_utils.Database) -> dict[tuple[str, str], dict[str, int]]:
    """Offerings held by each (source, unit), by provider.

    ``current_prices.source`` says ``skypilot/aws`` (source and cloud), ``azure-retail`` (the
    source covers one provider) or ``seed: <origin>`` (every provider, unit ``all``).
    """
    held: dict[tuple[str, str], dict[str, int]] = {}

    def add(key: tuple[str, str], provider: str, count: int) -> None:
        counts = held.setdefault(key, {})
        counts[provider] = counts.get(provider, 0) + count

    for stored, provider, count in db.conn.execute(
        "SELECT c.source, o.provider, COUNT(DISTINCT c.offering_id) FROM current_prices c "
        "JOIN offerings o ON o.id = c.offering_id GROUP BY c.source, o.provider"
    ):
        name = str(stored).partition(":")[0].strip()
        source, _, unit = name.partition("/")
        add((source, unit or provider), provider, count)
        add((source, "all"), provider, count)
    for source, provider, count in db.conn.execute(
        "SELECT source, provider, COUNT(*) FROM spot_risk GROUP BY source, provider"
    ):
        add((source, provider), provider, count)
    return held


def _seed_superseded(status: SourceStatus, statuses: list[SourceStatus]) -> SourceStatus:
    """The seed is not stale once SkyPilot (whose snapshot it is) refreshed every cloud."""
    if status.source != seed.SOURCE or not status.stale:
        return status
    refreshed = {s.unit for s in statuses if s.source == "skypilot" and s.last_success}
    if refreshed >= {"aws", "gcp", "lambda"}:
        return replace(status, stale=False)
    return status


@dataclass(frozen=True)
class PricePoint:
    """One observation in an offering's history."""

    provider: str
    region: str
    instance_type: str
    accelerator: str | None
    accelerator_count: int
    pricing: str
    usd_per_hour: float
    fetched_at: str
    source: str


def history(db: sqlite_utils.Database, name: str) -> list[PricePoint]:
    """Every stored price of an instance type (or of an attachable accelerator), oldest first."""
    rows = db.conn.execute(
        "SELECT o.provider, o.region, o.instance_type, NULLIF(o.accelerator, ''), "
        "o.accelerator_count, p.pricing, p.usd_per_hour, p.fetched_at, p.source "
        "FROM prices p JOIN offerings o ON o.id = p.offering_id "
        "WHERE o.instance_type = ?1 COLLATE NOCASE "
        "   OR (o.instance_type = '' AND o.accelerator = ?1 COLLATE NOCASE) "
        "ORDER BY o.provider, o.region, o.accelerator_count, p.pricing, p.fetched_at, p.id",
        [name],
    ).fetchall()
    if not rows:
        _unknown_instance(db, name)
    return [PricePoint(*row) for row in rows]


def show(db: sqlite_utils.Database, name: str) -> list[Rentable]:
    """Every rentable machine of an instance type (TPU names too), or else every machine that
    carries an accelerator of that name (``T4``), sorted by provider, region and pricing."""
    order = " ORDER BY provider, region, instance_type, accelerator_count, pricing"
    rows: list[tuple] = []
    for column in ("instance_type", "accelerator"):
        sql = f"SELECT {_COLUMNS} FROM rentables WHERE {column} = ?" + order
        rows = db.conn.execute(sql, [name]).fetchall()
        if rows:
            break
    if not rows:
        _unknown_instance(db, name)
    return [rentable(row) for row in rows]


def _unknown_instance(db: sqlite_utils.Database, name: str) -> None:
    known = [
        row[0]
        for row in db.conn.execute(
            "SELECT DISTINCT instance_type FROM offerings WHERE instance_type != '' "
            "UNION SELECT DISTINCT accelerator FROM offerings WHERE accelerator != ''"
        )
    ]
    raise UsageError(f"unknown instance type {display.quoted(name)}{did_you_mean(name, known)}")
