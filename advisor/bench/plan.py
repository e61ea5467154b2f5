"""Which machines a bench rents, and what it expects to pay for them.

Each asked accelerator (count 1: a probe trains on one device) or vCPU count becomes one
candidate: the cheapest matching offering in the price database, on a cloud SkyPilot reaches.
The expected cost is the machine's price for start-up (provisioning, installing TensorFlow)
plus the probe, billed under the provider's rule from the same database.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pricing.query as query
from advisor import display
from advisor.errors import UsageError
from advisor.recommend.billing import billed_seconds, rule_for
from pricing.offers import BillingRule, Rentable

if TYPE_CHECKING:
    import sqlite_utils

SKYPILOT_CLOUDS = ("aws", "gcp", "azure", "lambda")
"""Providers of the price database that SkyPilot launches on."""
PROVISION_SECONDS = 300.0
"""Typical time from launch to a running node (SkyPilot provisions and sets up its runtime)."""
SETUP_SECONDS = {"gpu": 480.0, "cpu": 240.0}
"""Installing advisor and TensorFlow on the node (with the CUDA libraries on a GPU)."""
PROBE_OVERHEAD_SECONDS = 120.0
"""What the probe adds to its own budget: importing TensorFlow, building the model, the data."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Candidate:
    """One machine to bench: the offering rented and what it is expected to cost."""

    label: str
    """What was asked: ``T4`` or ``8 vCPU``."""
    rentable: Rentable
    cluster: str
    """The SkyPilot cluster name (unique per bench)."""
    expected_seconds: float
    """Start-up plus the probe, as billed."""
    expected_usd: float

    @property
    def is_gpu(self) -> bool:
        return self.rentable.accelerator is not None


def parse_gpus(text: str | None) -> list[str]:
    """``T4,L4,A100`` (``T4:1`` allowed) -> accelerator names; a count above 1 is refused."""
    names = []
    for part in _parts(text):
        name, _, count = part.partition(":")
        if count and count != "1":
            raise UsageError(
                f"--gpus {display.cut(part)}: a bench probes one device; ask for "
                f"{display.cut(name)} (its measurement also corrects the predictions for more "
                "of them)"
            )
        names.append(name)
    return names


def parse_cpus(text: str | None) -> list[int]:
    """``8,16`` -> vCPU counts."""
    counts = []
    for part in _parts(text):
        if not part.isdigit() or len(part) > 6 or int(part) < 1:
            raise UsageError(f"--cpus takes vCPU counts such as 8,16, not {display.quoted(part)}")
        counts.append(int(part))
    return counts


def _parts(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def plan(
    db: sqlite_utils.Database,
    *,
    gpus: list[str],
    cpus: list[int],
    spot: bool,
    probe_seconds: float,
    tag: str,
) -> list[Candidate]:
    """The cheapest offering for each asked accelerator and vCPU count, costed."""
    if not gpus and not cpus:
        raise UsageError("nothing to bench: name accelerators with --gpus or vCPUs with --cpus")
    pricing = "spot" if spot else "on_demand"
    rules = query.billing_rules(db)
    candidates = []
    for name in dict.fromkeys(gpus):
        wanted = query.Filters(accelerator=name, pricing=pricing, min_count=1, max_count=1)
        found = _cheapest(query.rentable_rows(db, wanted))
        label = query.resolve(db, wanted).accelerator or name
        candidates.append(_candidate(label, found, pricing, probe_seconds, tag, rules))
    for count in dict.fromkeys(cpus):
        rows = query.rentable_rows(db, query.Filters(cpu_only=True, pricing=pricing))
        found = _cheapest(r for r in rows if r.vcpus == count)
        candidates.append(_candidate(f"{count} vCPU", found, pricing, probe_seconds, tag, rules))
    return candidates


def _cheapest(rows: Iterable[Rentable]) -> Rentable | None:
    usable = [r for r in rows if r.provider in SKYPILOT_CLOUDS and r.instance_type and _safe(r)]
    return min(usable, key=lambda r: r.usd_per_hour, default=None)


def _safe(r: Rentable) -> bool:
    """Names that go into a SkyPilot resource spec must be plain names (catalogs are data)."""
    names = [r.provider, r.region, r.instance_type, r.accelerator or "x", r.zone or "x"]
    return all(_NAME.match(name) for name in names)


def _candidate(
    label: str,
    found: Rentable | None,
    pricing: str,
    probe_seconds: float,
    tag: str,
    rules: dict[tuple[str, str], BillingRule],
) -> Candidate:
    if found is None:
        raise UsageError(
            f"no {pricing.replace('_', '-')} offering of {label} on a cloud SkyPilot launches on "
            f"({', '.join(SKYPILOT_CLOUDS)}) in the price database (see 'advisor prices list')"
        )
    kind = "gpu" if found.accelerator else "cpu"
    running = PROVISION_SECONDS + SETUP_SECONDS[kind] + PROBE_OVERHEAD_SECONDS + probe_seconds
    billed = billed_seconds(running, rule_for(rules, found.provider, found.pricing))
    return Candidate(
        label=label,
        rentable=found,
        cluster=cluster_name(label, tag),
        expected_seconds=billed,
        expected_usd=found.usd_per_hour * billed / 3600,
    )


def cluster_name(label: str, tag: str) -> str:
    """``advisor-bench-a100-80gb-1a2b``: lower-case letters, digits and dashes, as clouds want."""
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    return f"advisor-bench-{slug}-{tag}"[:60].rstrip("-")
