"""What a source says about one price, and the rules a price must pass before it is stored."""

from __future__ import annotations

import math
from typing import NamedTuple

PLACEHOLDER_PRICES = frozenset({700.0})
"""SkyPilot's catalog writes 700.0 where it does not know a price (TPU v6e in some regions)."""

OUTLIER_RATIO = 10.0
"""A new price more than this many times above (or below) the last one is held back as suspect."""


class Observation(NamedTuple):
    """One price of one offering under one pricing model, as a source reported it."""

    provider: str
    region: str
    zone: str
    """Empty when the price is regional."""
    instance_type: str
    """Empty for an accelerator priced without its host (GCP GPUs and TPUs)."""
    vcpus: float | None
    memory_gib: float | None
    accelerator: str
    """Empty for a CPU-only machine."""
    accelerator_count: int
    accelerator_memory_gib: float | None
    attachable: bool
    """True when the price covers the accelerator only and a host VM must be added."""
    pricing: str
    usd_per_hour: float

    @property
    def key(self) -> tuple[str, str, str, str, str, int]:
        """The offering's identity (what ``offerings`` holds UNIQUE)."""
        return (
            self.provider,
            self.region,
            self.zone,
            self.instance_type,
            self.accelerator,
            self.accelerator_count,
        )


def price_problem(value: float, previous: float | None = None) -> str | None:
    """Why ``value`` must not be stored, or None when it is a plausible price."""
    if math.isnan(value) or math.isinf(value):
        return "not a number"
    if value <= 0:
        return "not positive"
    if value in PLACEHOLDER_PRICES:
        return "placeholder"
    if previous is not None and not (previous / OUTLIER_RATIO <= value <= previous * OUTLIER_RATIO):
        return f"outlier against the previous {previous:g}"
    return None


def parse_price(text: str | None) -> float | None:
    """A price cell as a float, or None when empty or not a number (the caller counts a skip)."""
    if text is None:
        return None
    text = text.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return None
