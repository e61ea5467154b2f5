"""One module per public price source: ``collect(http, url, unit, ...) -> batch``.

A source fetches and parses; it never writes the user's database (a large catalog waits in a
scratch file of its own, ``pricing.spool``). ``pricing.refresh`` stores each batch in one
transaction per source and cloud.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from advisor.errors import AdvisorError
from pricing.observations import Observation


class SourceFormatError(AdvisorError):
    """A source answered, but not in the format we parse (a missing column, bad JSON)."""


@dataclass(frozen=True)
class PriceBatch:
    """Prices of one provider from one source, validated row by row."""

    provider: str
    source: str
    """What ``current_prices.source`` will say, e.g. ``skypilot/aws``."""
    observations: Iterable[Observation]
    """Re-readable: a list, or a ``pricing.spool.Spool`` read back from disk a batch at a time
    (what a source hands over, so a catalog's size never sets the memory a refresh takes)."""
    skipped: int
    """Rows dropped while parsing (bad numbers, unknown currency, fractional GPUs)."""
    retire: tuple[str, ...] = ()
    """Source prefixes this batch replaces as a whole (see ``pricing.ingest.write``)."""
    unmapped: dict[str, int] = field(default_factory=dict)
    """Accelerator names with no device in the device catalog, and how many offerings carry
    each (priced, but given no time prediction)."""


@dataclass(frozen=True)
class SpotRisk:
    """AWS Spot Advisor's figures for one instance type in one region."""

    region: str
    instance_type: str
    bucket: int
    label: str
    savings_pct: float | None
    interruptions_per_hour: float


@dataclass(frozen=True)
class RiskBatch:
    provider: str
    source: str
    risks: list[SpotRisk] = field(default_factory=list)
    skipped: int = 0
