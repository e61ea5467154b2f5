"""SkyPilot catalog CSVs: ``<base>/<cloud>/vms.csv`` (skypilot-org/skypilot-catalog).

Columns differ in order per cloud, so rows are read by header. GCP lists accelerators without a
host as rows with an empty InstanceType (attachable); TPUs are such rows too. 700.0 means
"unknown" and is skipped. AWS lists spot per availability zone: we keep the **regional minimum**
over zones (as the shipped seed does), so every stored price is regional (``zone`` empty).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Iterator
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
    try:
        return _parse(csv.reader(io.StringIO(text, newline="")), provider)
    except csv.Error as exc:  # e.g. a NUL byte: the file is not a catalog
        raise SourceFormatError(f"skypilot/{provider} vms.csv is not CSV: {exc}") from None


def _parse(reader: Iterator[list[str]], provider: str) -> PriceBatch:
    header = next(reader, [])
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise SourceFormatError(f"skypilot/{provider} vms.csv lacks columns {missing}")
    column = {name: header.index(name) for name in header}
    at = [column[name] for name in REQUIRED]
    optional = [column.get(name) for name in ("vCPUs", "MemoryGiB", "GpuInfo")]
    width = len(header)
    best: dict[tuple, float] = {}
    facts: dict[tuple, tuple] = {}
    parsed: dict[tuple, tuple[tuple, tuple]] = {}  # zones repeat an offering: parse it once
    skipped = 0
    for row in reader:
        if len(row) != width:
            skipped += 1  # a short row: a body cut mid-line, or a broken line
            continue
        raw = (row[at[0]], row[at[1]], row[at[2]], row[at[3]])
        known = parsed.get(raw)
        if known is None:
            try:
                known = parsed[raw] = _offering(row, at, optional, provider)
            except (ValueError, OverflowError):
                skipped += 1
                continue
        key, offering = known
        for pricing, index in (("on_demand", at[4]), ("spot", at[5])):
            cell = row[index].strip()
            if not cell:
                continue  # not offered under this model
            price = parse_price(cell)
            if price is None or price_problem(price):
                skipped += 1
                continue
            priced = (key, pricing)
            if priced not in best or price < best[priced]:
                best[priced] = price
                facts[key] = offering
    observations = [
        Observation._make((*facts[key], pricing, price)) for (key, pricing), price in best.items()
    ]
    return PriceBatch(provider, f"{NAME}/{provider}", observations, skipped, retire=(NAME, "seed"))


def _offering(
    row: list[str], at: list[int], optional: list[int | None], provider: str
) -> tuple[tuple, tuple]:
    """The identity and facts of the offering a row describes; ValueError when malformed."""
    instance_type, accelerator, count_text, region = (row[i].strip() for i in at[:4])
    count = float(count_text) if count_text else 0.0
    if not region or (not instance_type and not accelerator):
        raise ValueError("no region or no machine")
    if not 0 <= count <= 1024:
        raise ValueError(f"accelerator count {count_text!r} out of range")
    if count != int(count):
        raise ValueError("fractional accelerators are not modelled")
    if accelerator and count == 0:
        count = 1.0
    vcpus, memory, info = (row[i] if i is not None else "" for i in optional)
    found = _MIB.search(info) if info else None
    key = (provider, region, "", instance_type, accelerator, int(count))
    offering = (  # in Observation's field order, less pricing and price
        provider,
        region,
        "",
        instance_type,
        _number(vcpus),
        _number(memory),
        accelerator,
        int(count),
        round(int(found.group(1)) / 1024, 2) if found else None,
        not instance_type,
    )
    return key, offering


def _number(text: str | None) -> float | None:
    """A size (vCPUs, GiB): None when empty, a ValueError when not finite and >= 0."""
    if text is None or not text.strip():
        return None
    number = float(text)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"not a size: {text!r}")
    return number
