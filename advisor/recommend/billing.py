"""What a provider bills for a run: time rounded up to its increment, never below its minimum.

``billed = max(minimum, ceil(t / increment) * increment)`` (AWS, GCP and Azure bill Linux VMs per
second with a 60 s minimum; the rules themselves live in the price database).
"""

from __future__ import annotations

import math

from pricing.offers import BillingRule

PER_SECOND = BillingRule(
    provider="",
    pricing="",
    increment_seconds=1,
    minimum_seconds=0,
    max_runtime_seconds=None,
    preemption_notice_seconds=None,
    interruptions_per_hour=0.0,
    source="no billing rule in the database for this provider: assumed per-second, no minimum",
)
"""Used when the database has no rule for a provider and pricing model (said so in --explain)."""


def billed_seconds(seconds: float, rule: BillingRule) -> float:
    """Seconds billed for a run of ``seconds`` under ``rule``."""
    if seconds <= 0:
        return float(rule.minimum_seconds)
    increment = max(rule.increment_seconds, 1)
    rounded = math.ceil(seconds / increment - 1e-9) * increment
    return float(max(rule.minimum_seconds, rounded))


def rule_for(rules: dict[tuple[str, str], BillingRule], provider: str, pricing: str) -> BillingRule:
    """The provider's rule for ``pricing``, or the stated per-second fallback."""
    return rules.get((provider, pricing), PER_SECOND)


def describe(rule: BillingRule) -> str:
    """``per second, 60 s minimum`` and the like."""
    increment = rule.increment_seconds
    step = {1: "per second", 60: "per minute", 3600: "per hour"}.get(
        increment, f"in {increment} s steps"
    )
    minimum = f", {rule.minimum_seconds} s minimum" if rule.minimum_seconds else ""
    return f"{step}{minimum}"
