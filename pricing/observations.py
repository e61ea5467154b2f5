"""What a source says about one price, and the rules a price must pass before it is stored."""

from __future__ import annotations

import math
import re
from typing import NamedTuple

PLACEHOLDER_PRICES = frozenset({700.0})
"""SkyPilot's catalog writes 700.0 where it does not know a price (TPU v6e in some regions)."""

OUTLIER_RATIO = 10.0
"""A new price more than this many times above (or below) the last one is held back as suspect."""

MAX_USD_PER_ACCELERATOR_HOUR = 1_000.0
"""Plausibility bound per accelerator device (a GPU, or a TPU core or chip as its name counts).
The dearest device in any public catalog is near $15/h (an H100 or H200 in an 8-GPU machine,
on demand), so this leaves a factor of 60 for price rises and new devices while still catching
a price in cents written as dollars, a per-month figure, or a field shifted into the price."""

MAX_USD_PER_VCPU_HOUR = 10.0
"""Plausibility bound per vCPU of a machine without accelerators. The dearest per vCPU are the
memory-heavy machines (AWS u-*, x1e, Azure M-series) at under $1 per vCPU-hour."""

MAX_USD_PER_MACHINE_HOUR = 10_000.0
"""Bound when a row says neither its vCPUs nor its accelerators (an Azure size the SkyPilot
catalog does not know): above the largest TPU pod slice any catalog prices as one row."""

MIN_USD_PER_HOUR = 1e-5
"""The lowest price stored: the cheapest machines any catalog lists (nano and micro spot
instances) cost about a tenth of a cent an hour, a hundred times more. A price of $1e-320/h
is not a price: it would rank first and print as $0.00."""

MAX_VCPUS = 4_096.0
"""The largest machines sold (AWS u7in-32tb, GCP x4 instances) have 1,920 vCPUs (AWS and GCP
instance type pages); ``vCPUs = 1e308`` would turn every later division by it into nothing."""
MAX_MEMORY_GIB = 65_536.0
"""Twice the largest memory sold in one machine (32 TiB, AWS u7in-32tb)."""
MAX_ACCELERATORS = 1_024
"""Most accelerators one row may count (the largest TPU slice rows are priced per chip)."""
MAX_DEVICE_MEMORY_GIB = 1_024.0
"""Per-device memory: the largest device sold has 192 GiB (B200), a factor of five spare."""
MAX_NAME_CHARS = 200
"""Longest provider, region, zone, instance type or accelerator name stored; real ones are
under 60 characters."""

_TPU_SIZE = re.compile(r"^tpu-.*?-(\d+)$")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
"""A decimal number as catalogs write it: no ``1_0`` (Python reads it as 10), no ``0x10``, no
``nan`` or ``infinity`` spelled out."""


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
    if value < MIN_USD_PER_HOUR:
        return f"below ${MIN_USD_PER_HOUR:g}/h"
    if value in PLACEHOLDER_PRICES:
        return "placeholder"
    if previous is not None and not (previous / OUTLIER_RATIO <= value <= previous * OUTLIER_RATIO):
        return f"outlier against the previous {previous:g}"
    return None


def parse_price(text: str | None) -> float | None:
    """A price cell as a float, or None when empty or not a number (the caller counts a skip)."""
    if text is None:
        return None
    return parse_number(text)


def parse_number(text: str | None) -> float | None:
    """A decimal number cell (``0.38``, ``1e-3``), or None when empty or anything else: ``1_0``,
    ``0x1``, ``nan``, ``inf`` and words are not numbers in a catalog."""
    text = (text or "").strip()
    if not _NUMBER.fullmatch(text):
        return None
    return float(text)


def shape_problem(row: Observation) -> str | None:
    """Why the facts of ``row`` (sizes, counts, names) must not be stored, or None: every number
    stored is one a later command can divide by, sum and print."""
    checks = (
        ("vCPUs", row.vcpus, MAX_VCPUS),
        ("memory GiB", row.memory_gib, MAX_MEMORY_GIB),
        ("accelerator memory GiB", row.accelerator_memory_gib, MAX_DEVICE_MEMORY_GIB),
    )
    for what, value, largest in checks:
        if value is not None and not (isinstance(value, int | float) and 0 <= value <= largest):
            return f"{what} {value!r} outside 0-{largest:g}"
    count = row.accelerator_count
    if not isinstance(count, int) or not 0 <= count <= MAX_ACCELERATORS:
        return f"accelerator count {count!r} outside 0-{MAX_ACCELERATORS}"
    names = (row.provider, row.region, row.zone, row.instance_type, row.accelerator)
    if any(not isinstance(name, str) or len(name) > MAX_NAME_CHARS for name in names):
        return f"a name longer than {MAX_NAME_CHARS} characters"
    return None


def implausible(row: Observation) -> str | None:
    """Why ``row``'s price is beyond any real machine of its shape, or None (see the bounds)."""
    tpu = _TPU_SIZE.match(row.accelerator.lower()) if row.accelerator else None
    devices = row.accelerator_count * (int(tpu.group(1)) if tpu else 1)
    if devices > 0:
        bound, unit = devices * MAX_USD_PER_ACCELERATOR_HOUR, f"{devices} accelerator(s)"
    elif row.vcpus:
        bound, unit = row.vcpus * MAX_USD_PER_VCPU_HOUR, f"{row.vcpus:g} vCPUs"
    else:
        bound, unit = MAX_USD_PER_MACHINE_HOUR, "a machine"
    if row.usd_per_hour > bound:
        return f"${row.usd_per_hour:g}/h is beyond ${bound:g}/h for {unit}"
    return None
