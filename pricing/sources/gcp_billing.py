"""GCP Cloud Billing Catalog API (needs the user's API key): VM = cores + RAM + accelerators.

``GET <url>?key=KEY&pageToken=...`` over the Compute Engine service's SKUs, following
``nextPageToken``. Kept: ``resourceFamily == "Compute"`` with ``usageType`` OnDemand (on_demand)
or Preemptible (spot), priced at ``units + nanos / 1e9`` of the first non-zero tier (USD only).
SKUs are matched by description, as SkyPilot's fetcher does (where the patterns come from:
docs/SOURCES.md, "Live prices"). Machine shapes come from the GCP offerings already in the
database, each priced in every region the SKUs cover. TPUs are another service, not priced here."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pricing import families, fetch
from pricing.observations import Observation, price_problem
from pricing.sources import PriceBatch, SourceFormatError
from pricing.spool import Spool

if TYPE_CHECKING:
    import httpx

NAME = "gcp-billing"
UNITS = ("gcp",)
DEFAULT_URL = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus"
KEY_ENV = "ADVISOR_GCP_API_KEY"
MAX_PAGES = 200

SERIES = {
    "n1": "N1",
    "n2": "N2",
    "n2d": "N2D AMD",
    "c2": "Compute optimized",
    "c2d": "C2D AMD",
    "e2": "E2",
    "a2": "A2",
    "g2": "G2",
    "c3": "C3",
    "a3": "A3",
}
"""Machine family -> the series words that start its core and RAM SKU descriptions."""

GPUS = {
    "T4": "T4",
    "V100": "V100",
    "P100": "P100",
    "P4": "P4",
    "A100": "A100",
    "A100 80GB": "A100-80GB",
    "L4": "L4",
    "H100 80GB": "H100",
    "H100 80GB Plus": "H100-MEGA",
    "H100 Mega 80GB": "H100-MEGA",
    "H200 141GB": "H200",
}
"""SKU GPU words -> the catalog spelling."""

_USAGE = {"OnDemand": "on_demand", "Preemptible": "spot"}
_MACHINE = re.compile(
    r"^(?:Spot Preemptible |Preemptible )?(?P<series>.+?) (?:Predefined )?(?:Instance )?"
    r"(?P<kind>Core|Ram) running in "
)
_GPU = re.compile(r"^(?:Spot Preemptible |Preemptible )?Nvidia (?:Tesla )?(?P<gpu>.+?) GPU ")


@dataclass(frozen=True)
class Rates:
    """Unit prices by (region, component, pricing); a component is ("core"|"ram", series) or
    ("gpu", catalog name)."""

    rates: dict[tuple[str, tuple[str, str], str], float] = field(default_factory=dict)
    skipped: int = 0


def api_key() -> str | None:
    return os.environ.get(KEY_ENV) or None


def collect(
    http: httpx.Client,
    url: str | None,
    unit: str,
    *,
    policy: fetch.RetryPolicy,
    on_bytes: Callable[[int, int | None], None] | None = None,
) -> Rates:
    key = api_key()
    if key is None:
        raise SourceFormatError(f"{NAME} needs an API key: set {KEY_ENV}")
    skus: list[dict[str, Any]] = []
    token = ""
    seen: set[str] = set()
    for page in range(1, MAX_PAGES + 1):
        params = {"key": key, "pageSize": "5000", **({"pageToken": token} if token else {})}
        body = fetch.get(http, url or DEFAULT_URL, params=params, policy=policy)
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise SourceFormatError(f"{NAME}: not JSON ({exc})") from exc
        skus.extend(data.get("skus") or [])
        token = str(data.get("nextPageToken") or "")
        if token in seen:
            raise SourceFormatError(f"{NAME}: page {page} repeats a page token; a loop, stopping")
        seen.add(token)
        if on_bytes:
            on_bytes(page, None)
        if not token:
            return parse(skus)
    raise SourceFormatError(f"{NAME}: more than {MAX_PAGES} pages; stopping")


def parse(skus: list[dict[str, Any]]) -> Rates:
    rates: dict[tuple[str, tuple[str, str], str], float] = {}
    skipped = 0
    for sku in skus:
        category = (sku.get("category") or {}) if isinstance(sku, dict) else None
        if not isinstance(category, dict):  # a malformed record, not another product
            skipped += 1
            continue
        pricing = _USAGE.get(str(category.get("usageType", "")))
        if category.get("resourceFamily") != "Compute" or pricing is None:
            continue
        component = _component(str(sku.get("description", "")))
        if component is None:
            continue
        price = _unit_price(sku)
        if price is None:
            skipped += 1
            continue
        regions = sku.get("serviceRegions") or []
        if not isinstance(regions, list):
            skipped += 1
            continue
        for region in regions:
            if isinstance(region, str) and region:
                rates[(region, component, pricing)] = price
    return Rates(rates, skipped)


def _component(description: str) -> tuple[str, str] | None:
    if "Custom" in description or "Sole Tenancy" in description or "Commitment" in description:
        return None
    gpu = _GPU.match(description)
    if gpu:
        name = GPUS.get(gpu.group("gpu"))
        return ("gpu", name) if name else None
    machine = _MACHINE.match(description)
    if machine:
        return (machine.group("kind").lower(), machine.group("series"))
    return None


def _unit_price(sku: dict[str, Any]) -> float | None:
    try:
        tiers = sku["pricingInfo"][0]["pricingExpression"]["tieredRates"]
    except (KeyError, IndexError, TypeError):
        return None
    if not isinstance(tiers, list):
        return None
    for tier in tiers:
        unit = tier.get("unitPrice") if isinstance(tier, dict) else None
        if not isinstance(unit, dict) or unit.get("currencyCode", "USD") != "USD":
            return None
        try:
            price = float(unit.get("units") or 0) + float(unit.get("nanos") or 0) / 1e9
        except (TypeError, ValueError, OverflowError):
            return None
        if not math.isfinite(price):
            return None
        if price > 0:
            return price
    return None


def compose(rates: Rates, shapes: Iterable[tuple]) -> PriceBatch:
    """Prices of the known GCP machine shapes in every region the SKUs cover.

    ``shapes``: (instance_type, vcpus, memory_gib, accelerator, count, accelerator_memory_gib)
    of the GCP offerings in the database.
    """
    regions = sorted({region for region, _, _ in rates.rates})
    observations = Spool("first")  # one price a shape, region and pricing: no merging
    skipped = rates.skipped
    for instance_type, vcpus, memory, accelerator, count, accelerator_memory in shapes:
        for region in regions:
            for pricing in ("on_demand", "spot"):
                price = _price(
                    rates, region, pricing, instance_type, vcpus, memory, accelerator, count
                )
                if price is None:
                    continue
                if price_problem(price):
                    skipped += 1
                    continue
                observations.add(
                    Observation(
                        "gcp", region, "", instance_type, vcpus, memory, accelerator, count,
                        accelerator_memory, not instance_type, pricing, round(price, 6),
                    )
                )  # fmt: skip
    return PriceBatch("gcp", NAME, observations, skipped, retire=(NAME,))


def _price(
    rates: Rates,
    region: str,
    pricing: str,
    instance_type: str,
    vcpus: float | None,
    memory: float | None,
    accelerator: str,
    count: int,
) -> float | None:
    table = rates.rates
    if not instance_type:  # an attachable GPU: count x the GPU SKU
        gpu = table.get((region, ("gpu", accelerator), pricing))
        return gpu * count if gpu is not None else None
    series = SERIES.get(families.machine_family("gcp", instance_type))
    if series is None or vcpus is None or memory is None:
        return None
    core = table.get((region, ("core", series), pricing))
    ram = table.get((region, ("ram", series), pricing))
    if core is None or ram is None:
        return None
    return vcpus * core + memory * ram


def shapes(conn: Any) -> Iterable[tuple]:
    """Distinct GCP machine shapes known to the database (hosts and attachable GPUs), read as
    the caller goes."""
    return conn.execute(
        "SELECT DISTINCT instance_type, vcpus, memory_gib, accelerator, accelerator_count, "
        "accelerator_memory_gib FROM offerings WHERE provider = 'gcp' "
        "AND accelerator NOT LIKE 'tpu-%' AND (instance_type != '' OR attachable = 1)"
    )
