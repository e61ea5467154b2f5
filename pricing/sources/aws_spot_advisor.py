"""AWS Spot Advisor data: how often each instance type's spot capacity is reclaimed.

``spot-advisor-data.json`` = ``{ranges: [{index, label, max}], spot_advisor: {region: {Linux:
{type: {s: savings %, r: range index}}}}}``. The ranges are the share of capacity reclaimed over
the trailing month, in buckets ``<5%, 5-10%, 10-15%, 15-20%, >20%``. We take each bucket's middle
(25% for ">20%") as the chance that a running instance is interrupted within a month (730 h) and
turn it into a rate per hour: ``-ln(1 - p) / 730``. Windows rows are ignored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from pricing import fetch
from pricing.sources import RiskBatch, SourceFormatError, SpotRisk

if TYPE_CHECKING:
    import httpx

NAME = "aws-spot-advisor"
UNITS = ("aws",)
DEFAULT_URL = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
HOURS_PER_MONTH = 730.0
BUCKET_SHARE = {0: 0.025, 1: 0.075, 2: 0.125, 3: 0.175, 4: 0.25}
LABELS = {0: "<5%", 1: "5-10%", 2: "10-15%", 3: "15-20%", 4: ">20%"}


def rate_per_hour(bucket: int) -> float:
    """Expected interruptions per hour of running for a Spot Advisor bucket."""
    return -math.log(1 - BUCKET_SHARE[bucket]) / HOURS_PER_MONTH


def collect(
    http: httpx.Client,
    url: str | None,
    unit: str,
    *,
    policy: fetch.RetryPolicy,
    on_bytes: Callable[[int, int | None], None] | None = None,
) -> RiskBatch:
    body = fetch.get(http, url or DEFAULT_URL, policy=policy, on_bytes=on_bytes)
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise SourceFormatError(f"{NAME}: not JSON ({exc})") from exc
    return parse(data)


def parse(data: object) -> RiskBatch:
    if not isinstance(data, dict) or not isinstance(data.get("spot_advisor"), dict):
        raise SourceFormatError(f"{NAME}: no spot_advisor object")
    labels = dict(LABELS)
    ranges = data.get("ranges")
    for entry in ranges if isinstance(ranges, list) else []:
        index = entry.get("index") if isinstance(entry, dict) else None
        if isinstance(index, int) and index in labels and entry.get("label"):
            labels[index] = str(entry["label"])
    risks: list[SpotRisk] = []
    skipped = 0
    for region, systems in data["spot_advisor"].items():
        linux = systems.get("Linux") if isinstance(systems, dict) else None
        if not isinstance(linux, dict):
            skipped += 1
            continue
        for instance_type, figures in linux.items():
            bucket = figures.get("r") if isinstance(figures, dict) else None
            savings = figures.get("s") if isinstance(figures, dict) else None
            if (
                not isinstance(bucket, int)
                or isinstance(bucket, bool)
                or bucket not in BUCKET_SHARE
            ):
                skipped += 1
                continue
            if (
                isinstance(savings, bool)
                or not isinstance(savings, int | float)
                or not 0 <= savings <= 100
            ):
                savings = None
            risks.append(
                SpotRisk(
                    region, instance_type, bucket, labels[bucket], savings, rate_per_hour(bucket)
                )
            )
    return RiskBatch("aws", NAME, risks, skipped)
