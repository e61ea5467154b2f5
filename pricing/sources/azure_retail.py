"""Azure Retail Prices API (public JSON, no key): virtual machine prices by region.

``GET <url>?$filter=serviceName eq 'Virtual Machines' and priceType eq 'Consumption'``, then
follow ``NextPageLink`` (on the configured origin only, never back to a page already read)
until it is null. Spot prices are the rows whose ``skuName`` ends in
" Spot" (or " Low Priority" where a size has no Spot row); Windows and Cloud Services rows are
dropped; a row not in USD or not per hour is skipped and counted. The API gives no vCPU or GPU
counts: ``pricing.refresh`` fills them from the SkyPilot Azure catalog when it has the size.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from pricing import fetch
from pricing.observations import Observation, parse_number, price_problem
from pricing.sources import PriceBatch, SourceFormatError
from pricing.spool import Spool

if TYPE_CHECKING:
    import httpx

NAME = "azure-retail"
UNITS = ("azure",)
DEFAULT_URL = "https://prices.azure.com/api/retail/prices"
FILTER = "serviceName eq 'Virtual Machines' and priceType eq 'Consumption'"
MAX_PAGES = 2000
_DROPPED = (" Windows", "Cloud Services", "CloudServices")


def collect(
    http: httpx.Client,
    url: str | None,
    unit: str,
    *,
    policy: fetch.RetryPolicy,
    on_bytes: Callable[[int, int | None], None] | None = None,
) -> PriceBatch:
    return parse(_items(http, url or DEFAULT_URL, policy, on_bytes))


def _items(
    http: httpx.Client,
    url: str,
    policy: fetch.RetryPolicy,
    on_bytes: Callable[[int, int | None], None] | None,
) -> Iterator[dict[str, Any]]:
    """Every item of every page, one page in memory at a time (the full list has ~100s)."""
    next_url: str | None = url
    params: dict[str, str] | None = {"$filter": FILTER}
    pages = 0
    seen: set[str] = set()
    while next_url:
        body = fetch.get(http, next_url, params=params, policy=policy)
        page = _page(body, next_url)
        yield from page.get("Items") or []
        seen.add(next_url)
        next_url, params = page.get("NextPageLink"), None
        if next_url:  # a page may not send us elsewhere (see pricing.fetch), nor back
            next_url = str(next_url)
            fetch.check_origin(next_url, policy, f"{NAME}: NextPageLink points to")
            if next_url in seen:
                raise SourceFormatError(
                    f"{NAME}: NextPageLink of page {pages + 1} points back to a page already "
                    f"read ({next_url[:200]}); a loop, stopping"
                )
        pages += 1
        if on_bytes:
            on_bytes(pages, None)
        if pages >= MAX_PAGES:
            raise SourceFormatError(f"{NAME}: more than {MAX_PAGES} pages; stopping")


def _page(body: bytes, url: str) -> dict[str, Any]:
    try:
        page = json.loads(body)
    except ValueError as exc:
        raise SourceFormatError(f"{NAME}: {url} is not JSON ({exc})") from exc
    if not isinstance(page, dict) or not isinstance(page.get("Items", []), list):
        raise SourceFormatError(f"{NAME}: {url} has no Items list")
    return page


def parse(items: Iterable[dict[str, Any]]) -> PriceBatch:
    """Observations of the Linux, hourly, USD rows; Spot preferred over Low Priority."""
    chosen = Spool("first")  # on disk: the pages of every region add up
    skipped = 0
    for item in items:
        if not isinstance(item, dict):
            skipped += 1
            continue
        product = str(item.get("productName", ""))
        if any(marker in product for marker in _DROPPED):
            continue
        sku = str(item.get("skuName", ""))
        rank = 2 if sku.endswith(" Spot") else 1 if sku.endswith(" Low Priority") else 0
        observation = _observation(item, "on_demand" if rank == 0 else "spot")
        if observation is None:
            skipped += 1
            continue
        chosen.add(observation, rank)
    return PriceBatch("azure", NAME, chosen, skipped, retire=(NAME,))


def _observation(item: dict[str, Any], pricing: str) -> Observation | None:
    if item.get("currencyCode") != "USD" or item.get("unitOfMeasure") != "1 Hour":
        return None
    if item.get("type", "Consumption") != "Consumption":
        return None
    region, size = item.get("armRegionName"), item.get("armSkuName")
    raw = item.get("retailPrice", item.get("unitPrice", ""))
    price = (
        float(raw)
        if isinstance(raw, int | float) and not isinstance(raw, bool)
        else parse_number(raw if isinstance(raw, str) else None)
    )
    if price is None or not region or not size or math.isnan(price) or price_problem(price):
        return None
    return Observation(
        "azure", str(region), "", str(size), None, None, "", 0, None, False, pricing, price
    )
