"""The contract of the price library: what can be rented, for how much, under which billing rules."""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

PRICING_MODELS = ("on_demand", "spot")


@dataclass(frozen=True)
class Filters:
    """Which offerings a caller wants (None: any). Every door builds this one type: the command
    line, the app and the price browser; ``pricing.query`` applies it once, in SQL or over the
    stored offer groups, and ``select`` over groups already in memory."""

    provider: str | None = None
    region: str | None = None
    accelerator: str | None = None
    pricing: str | None = None
    """``spot``, ``on_demand`` or None for both."""
    cpu_only: bool = False
    min_count: int | None = None
    """Fewest accelerators per machine."""
    max_count: int | None = None
    """Most accelerators per machine."""
    max_price: float | None = None
    """Highest price in USD per hour."""


class Rentable(NamedTuple):
    """One machine a user can rent, with the total hourly price of everything rented.

    For GCP an attachable accelerator is priced without its host; ``pricing.query`` composes it
    with its host VM, so ``usd_per_hour`` is always what the user pays.

    A NamedTuple, not a dataclass: a recommendation builds 100,000 of these, and a tuple is built
    four times faster (``Rentable._make(row)`` straight from a database row).
    """

    provider: str
    region: str
    zone: str | None
    instance_type: str
    vcpus: float | None
    memory_gib: float | None
    cpu_family: str | None
    accelerator: str | None
    accelerator_count: int
    accelerator_memory_gib: float | None
    pricing: str
    """``on_demand`` or ``spot``."""
    usd_per_hour: float
    """Total: host plus accelerators."""
    host_usd_per_hour: float
    accelerator_usd_per_hour: float
    interruptions_per_hour: float
    """Expected preemptions per hour of running: 0 on demand; for spot the instance's own rate
    where published (AWS Spot Advisor), else the provider's stated default (``BillingRule``)."""
    fetched_at: str
    source: str
    nodes: int = 1
    """Machines of this kind rented together for one job: a cluster the recommender composes
    (``advisor.recommend.clusters``), whose ``usd_per_hour`` and its parts are all of its nodes';
    every other field is one machine's. The price database stores one machine a row
    (``STORED_FIELDS``)."""


STORED_FIELDS = Rentable._fields[:-1]
"""The fields of one stored offering, in ``Rentable`` order: all but ``nodes``."""
_FIELDS = len(Rentable._fields)


def rentable(row: Sequence[Any]) -> Rentable:
    """A ``Rentable`` from a stored row (one machine) or from a composed one."""
    return Rentable._make(row) if len(row) == _FIELDS else Rentable._make((*row, 1))


@dataclass(frozen=True)
class BillingRule:
    """How a provider bills one pricing model, and how often it takes spot machines back."""

    provider: str
    pricing: str
    increment_seconds: int
    """Billing granularity (1 = per second)."""
    minimum_seconds: int
    max_runtime_seconds: int | None
    """GCP preemptible stops after 24 h; None means no cap."""
    preemption_notice_seconds: int | None
    interruptions_per_hour: float
    """Expected preemptions per hour of running (0 for on-demand)."""
    source: str
    """Where these rules and rates come from (URL or document)."""


MACHINE_FIELDS = (
    "accelerator",
    "accelerator_count",
    "vcpus",
    "cpu_family",
    "provider",
    "pricing",
    "interruptions_per_hour",
)
"""Offerings equal in these run a workload equally fast, bill alike and are taken back equally
often: they differ only in where they are (region, zone, instance name) and in price."""

machine_key = operator.itemgetter(*(Rentable._fields.index(name) for name in MACHINE_FIELDS))
"""A rentable's (or a row's in ``Rentable`` order) ``MACHINE_FIELDS``: its offer group."""
PRICE_INDEX = Rentable._fields.index("usd_per_hour")


class OfferGroup:
    """The offerings of one machine under one pricing model, cheapest first.

    The recommender predicts once per group and ranks only a group's few cheapest members, so a
    group holds its ``head`` rows ready and the others behind ``rest``, a loader called only when
    a slice reaches past the head (the price database keeps them packed: decoding 100,000
    rows costs more than ranking them). ``prices`` are every member's, ascending.
    """

    __slots__ = ("_head", "_rest", "first", "prices")

    def __init__(
        self,
        head: Sequence[tuple],
        prices: Sequence[float],
        rest: Callable[[], Sequence[tuple]] | None = None,
    ) -> None:
        if not head:
            raise ValueError("an offer group has at least one member")
        self._head = head
        self._rest = rest
        self.first = rentable(head[0])
        self.prices = prices

    def __len__(self) -> int:
        return len(self.prices)

    def __repr__(self) -> str:
        return f"OfferGroup({self.first.instance_type!r} x{len(self)}, from ${self.prices[0]}/h)"

    def members(self, start: int = 0, stop: int | None = None) -> list[Rentable]:
        """Members ``start`` to ``stop`` (exclusive), cheapest first."""
        stop = len(self) if stop is None else min(stop, len(self))
        if start >= stop:
            return []
        rows = self._head
        if stop > len(rows) and self._rest is not None:
            rows = [*rows, *self._rest()]
        return list(map(rentable, rows[start:stop]))

    def count_up_to(self, usd: float, hours: float) -> int:
        """How many members cost at most ``usd`` for ``hours`` (a prefix: they are sorted)."""
        return bisect_right(self.prices, usd, key=lambda price: price * hours)


def group_offers(rentables: Iterable[Rentable]) -> list[OfferGroup]:
    """``rentables`` as offer groups, members cheapest first; $0 prices (bad data) are dropped."""
    groups: dict[tuple[object, ...], list[Rentable]] = {}
    for r in rentables:
        if r.usd_per_hour > 0:
            groups.setdefault(machine_key(r), []).append(r)
    result = []
    for members in groups.values():
        members.sort(key=operator.itemgetter(PRICE_INDEX))
        result.append(OfferGroup(members, [r.usd_per_hour for r in members]))
    return result


def matches(r: Rentable, f: Filters) -> bool:
    """Whether ``r`` passes every filter (names compared case-insensitively)."""

    def same(value: str | None, wanted: str | None) -> bool:
        return wanted is None or (value or "").lower() == wanted.lower()

    return (
        same(r.provider, f.provider)
        and same(r.region, f.region)
        and same(r.accelerator, f.accelerator)
        and (f.pricing is None or r.pricing == f.pricing)
        and (not f.cpu_only or r.accelerator is None)
        and (f.min_count is None or r.accelerator_count >= f.min_count)
        and (f.max_count is None or r.accelerator_count <= f.max_count)
        and (f.max_price is None or r.usd_per_hour <= f.max_price)
    )


def select(groups: Iterable[OfferGroup], f: Filters) -> list[OfferGroup]:
    """The groups, or parts of groups, that pass ``f`` (for groups already in memory; the
    database applies the same filters itself in ``pricing.query.offer_groups``)."""
    machine = Filters(f.provider, None, f.accelerator, f.pricing, f.cpu_only, f.min_count,
                      f.max_count)  # fmt: skip
    kept = [group for group in groups if matches(group.first, machine)]
    if f.region is None and f.max_price is None:  # the filters that split a group
        return kept
    return group_offers(r for g in kept for r in g.members() if matches(r, f))
