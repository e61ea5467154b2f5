"""The contract of the price library: what can be rented, for how much, under which billing rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

PRICING_MODELS = ("on_demand", "spot")


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
