"""Each price source's parser on hostile input: a skip, a SourceFormatError, never a crash, never
a NaN or infinite figure in what it returns."""

from __future__ import annotations

import contextlib
import csv
import io
import math

from hypothesis import given
from hypothesis import strategies as st

from pricing.observations import Observation
from pricing.sources import (
    SourceFormatError,
    aws_spot_advisor,
    azure_retail,
    gcp_billing,
    skypilot_catalog,
)
from tests.fuzz.strategies import FUZZ, HOSTILE_TEXT, JSON, NUMBER_TEXT, finite_or_none, near

HEADER = ["InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo",
          "Price", "SpotPrice", "Region", "AvailabilityZone"]  # fmt: skip
CELL = st.one_of(NUMBER_TEXT, HOSTILE_TEXT, st.sampled_from(["c5.4xlarge", "T4", "us-east-1"]))


def sane(observation: Observation) -> None:
    assert math.isfinite(observation.usd_per_hour) and observation.usd_per_hour > 0
    for figure in (observation.vcpus, observation.memory_gib, observation.accelerator_memory_gib):
        assert finite_or_none(figure), observation
    assert isinstance(observation.accelerator_count, int) and observation.accelerator_count >= 0


@FUZZ
@given(
    st.lists(st.lists(CELL, min_size=len(HEADER), max_size=len(HEADER)), max_size=6),
    st.sampled_from(["aws", "gcp", "azure", "lambda"]),
)
def test_skypilot_rows(rows: list[list[str]], cloud: str) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(rows)
    batch = skypilot_catalog.parse(buffer.getvalue(), cloud)
    for observation in batch.observations:
        sane(observation)


@FUZZ
@given(st.text(max_size=200))
def test_skypilot_any_text(text: str) -> None:
    try:
        batch = skypilot_catalog.parse(",".join(HEADER) + "\n" + text, "aws")
    except SourceFormatError:
        return
    for observation in batch.observations:
        sane(observation)


AZURE_ITEM = {
    "currencyCode": "USD", "retailPrice": 3.06, "unitPrice": 3.06, "armRegionName": "eastus",
    "productName": "Virtual Machines NCSv3 Series", "skuName": "NC6s v3 Spot",
    "armSkuName": "Standard_NC6s_v3", "unitOfMeasure": "1 Hour", "type": "Consumption",
}  # fmt: skip


@FUZZ
@given(st.lists(near(AZURE_ITEM), max_size=4))
def test_azure_items(items: list[object]) -> None:
    try:
        batch = azure_retail.parse(items)  # type: ignore[arg-type]
    except SourceFormatError:
        return
    for observation in batch.observations:
        sane(observation)


SPOT_ADVISOR = {
    "ranges": [{"index": 0, "label": "<5%"}],
    "spot_advisor": {"us-east-1": {"Linux": {"c5.4xlarge": {"s": 70, "r": 1}}}},
}


@FUZZ
@given(near(SPOT_ADVISOR))
def test_aws_spot_advisor(data: object) -> None:
    try:
        batch = aws_spot_advisor.parse(data)
    except SourceFormatError:
        return
    for risk in batch.risks:
        assert math.isfinite(risk.interruptions_per_hour) and risk.interruptions_per_hour >= 0
        assert finite_or_none(risk.savings_pct)


GCP_SKU = {
    "description": "N1 Predefined Instance Core running in Americas",
    "category": {"resourceFamily": "Compute", "usageType": "OnDemand"},
    "serviceRegions": ["us-central1"],
    "pricingInfo": [
        {"pricingExpression": {"tieredRates": [{"unitPrice": {"currencyCode": "USD",
                                                               "units": "0", "nanos": 31611000}}]}}
    ],
}  # fmt: skip


@FUZZ
@given(st.lists(near(GCP_SKU), max_size=3))
def test_gcp_billing(skus: list[object]) -> None:
    try:
        rates = gcp_billing.parse(skus)  # type: ignore[arg-type]
    except SourceFormatError:
        return
    for price in rates.rates.values():
        assert math.isfinite(price) and price > 0
    shapes = [("n1-standard-4", 4.0, 15.0, "", 0, None), ("", None, None, "T4", 1, 16.0)]
    for observation in gcp_billing.compose(rates, shapes).observations:
        sane(observation)


@FUZZ
@given(JSON)
def test_every_json_parser_on_any_value(data: object) -> None:
    """The Spot Advisor document is any JSON; Azure items and GCP SKUs are the members of a list
    their page reader has checked to be a list."""
    calls = (
        (aws_spot_advisor.parse, data),
        (azure_retail.parse, [data]),
        (gcp_billing.parse, [data]),
    )
    for parse, argument in calls:
        with contextlib.suppress(SourceFormatError):
            parse(argument)  # type: ignore[operator]
