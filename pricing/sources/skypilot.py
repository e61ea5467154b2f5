"""SkyPilot catalog CSVs: ``<base>/<cloud>/vms.csv`` (skypilot-org/skypilot-catalog).

Columns differ in order per cloud, so rows are read by header. GCP lists accelerators without a
host as rows with an empty InstanceType (attachable); TPUs are such rows too. 700.0 means
"unknown" and is skipped. AWS lists spot per availability zone: we keep the **regional minimum**
over zones (as the shipped seed does), so every stored price is regional (``zone`` empty).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from pricing import fetch
from pricing.observations import Observation, parse_price, price_problem
from pricing.sources import PriceBatch, SourceFormatError

if TYPE_CHECKING:
    import httpx

NAME = "skypilot"
UNITS = ("aws", "gcp", "azure", "lambda")
DEFAULT_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v7"
AZURE_DEFAULT_URL = (
    "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v6"
)
"""catalogs/v7 has no azure/vms.csv (prices-SOURCES.md); v6 does."""

REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Region", "Price", "SpotPrice")
_MIB = re.compile(r"SizeInMiB['\"]?\s*:\s*(\d+)")


def url_for(base: str | None, unit: str) -> str:
    if base is None:
        base = AZURE_DEFAULT_URL if unit == "azure" else DEFAULT_URL
    return f"{base.rstrip('/')}/{unit}/vms.csv"


def collect(
    http: httpx.Client,
    base: str | None,
    unit: str,
    *,
    policy: fetch.RetryPolicy,
    on_bytes: Callable[[int, int | None], None] | None = None,
) -> PriceBatch:
    body = fetch.get(http, url_for(base, unit), policy=policy, on_bytes=on_bytes)
    return parse(body.decode("utf-8", errors="replace"), unit)


def parse(text: str, provider: str) -> PriceBatch:
    """Observations of one cloud's vms.csv (regional minimum over zones)."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [name for name in REQUIRED if name not in (reader.fieldnames or [])]
    if missing:
        raise SourceFormatError(f"skypilot/{provider} vms.csv lacks columns {missing}")
    best: dict[tuple, Observation] = {}
    skipped = 0
    for row in reader:
        try:
            base = _offering(row, provider)
        except ValueError:
            skipped += 1
            continue
        for pricing, column in (("on_demand", "Price"), ("spot", "SpotPrice")):
            cell = row.get(column)
            if not cell or not cell.strip():
                continue  # not offered under this model
            price = parse_price(cell)
            if price is None or price_problem(price):
                skipped += 1
                continue
            observation = base._replace(pricing=pricing, usd_per_hour=price)
            key = (*observation.key, pricing)
            if key not in best or price < best[key].usd_per_hour:
                best[key] = observation
    return PriceBatch(
        provider, f"{NAME}/{provider}", list(best.values()), skipped, retire=(NAME, "seed")
    )


def _offering(row: dict[str, str | None], provider: str) -> Observation:
    """The offering a row describes (price left at 0); ValueError when malformed."""
    instance_type = (row.get("InstanceType") or "").strip()
    accelerator = (row.get("AcceleratorName") or "").strip()
    count_text = (row.get("AcceleratorCount") or "").strip()
    count = float(count_text) if count_text else 0.0
    region = (row.get("Region") or "").strip()
    if not region or (not instance_type and not accelerator):
        raise ValueError("no region or no machine")
    if count != int(count):
        raise ValueError("fractional accelerators are not modelled")
    if accelerator and count == 0:
        count = 1.0
    memory = _MIB.search(row.get("GpuInfo") or "")
    return Observation(
        provider=provider,
        region=region,
        zone="",
        instance_type=instance_type,
        vcpus=_number(row.get("vCPUs")),
        memory_gib=_number(row.get("MemoryGiB")),
        accelerator=accelerator,
        accelerator_count=int(count),
        accelerator_memory_gib=round(int(memory.group(1)) / 1024, 2) if memory else None,
        attachable=not instance_type,
        pricing="on_demand",
        usd_per_hour=0.0,
    )


def _number(text: str | None) -> float | None:
    if text is None or not text.strip():
        return None
    return float(text)
