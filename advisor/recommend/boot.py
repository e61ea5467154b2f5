"""How long a rented machine takes to start before the training's first step, and that it is billed.

From the request to a machine ready to run the job (booted, its runtime set up), as published
measurements give it per provider and kind of machine (``data/boot-times.csv``, sources in
docs/SOURCES.md, "Starting a machine"). Every provider bills that time: AWS from the running
state, GCP from RUNNING (the guest's boot), Azure from Starting, Lambda from launch. A cluster's
nodes start together, each billed. A provider or kind the table lacks takes the median of the
table's rows of its kind, and says so.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from functools import lru_cache

from advisor.locations import shipped
from pricing.offers import Rentable

BOOT_FILE = "boot-times.csv"


@dataclass(frozen=True)
class Boot:
    """The start of one machine: how long, and where the figure comes from."""

    seconds: float
    source: str


@lru_cache(maxsize=1)
def boot_times() -> dict[tuple[str, str], Boot]:
    """Every (provider, kind) row of the shipped table."""
    with shipped(BOOT_FILE).open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return {(r["provider"], r["kind"]): Boot(float(r["seconds"]), r["source"]) for r in rows}


def kind_of(r: Rentable) -> str:
    """``tpu``, ``gpu`` or ``cpu``: what the table is kept by."""
    if not r.accelerator:
        return "cpu"
    return "tpu" if r.accelerator.lower().startswith("tpu") else "gpu"


def boot_for(r: Rentable) -> Boot:
    """The start of ``r``'s machines (a cluster's nodes start together)."""
    table, kind = boot_times(), kind_of(r)
    found = table.get((r.provider, kind))
    if found is not None:
        return found
    alike = [b.seconds for (_, k), b in table.items() if k == kind] or [
        b.seconds for b in table.values()
    ]
    return Boot(
        statistics.median(alike),
        f"no start-up time published for {r.provider} {kind} machines: the median of the "
        "other providers' taken",
    )
