"""Each price source's parser on small recorded-format fixtures (no network, no database)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pricing import families
from pricing.observations import price_problem
from pricing.sources import SourceFormatError, aws_spot_advisor, azure_retail, skypilot_catalog

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pricing"


def _skypilot(cloud: str) -> skypilot_catalog.PriceBatch:
    return skypilot_catalog.parse((FIXTURES / "skypilot" / cloud / "vms.csv").read_text(), cloud)


def _price(
    batch: skypilot_catalog.PriceBatch, instance: str, pricing: str, accel: str = ""
) -> float:
    (found,) = [
        o.usd_per_hour
        for o in batch.observations
        if o.instance_type == instance and o.pricing == pricing and o.accelerator == accel
    ]
    return found


def test_aws_spot_is_the_regional_minimum_over_zones() -> None:
    batch = _skypilot("aws")
    assert _price(batch, "c5.4xlarge", "spot") == 0.1856  # zones: 0.1856, 0.2997, empty
    assert _price(batch, "c5.4xlarge", "on_demand") == 0.68
    assert all(o.zone == "" for o in batch.observations)


def test_aws_rows_read_by_header_with_gpu_memory() -> None:
    batch = _skypilot("aws")
    (g5,) = [
        o for o in batch.observations if o.instance_type == "g5.xlarge" and o.pricing == "spot"
    ]
    assert (g5.accelerator, g5.accelerator_count, g5.vcpus, g5.memory_gib) == ("A10G", 1, 4.0, 16.0)
    assert g5.accelerator_memory_gib == 22.35
    assert not g5.attachable


def test_aws_malformed_rows_are_skipped_and_counted() -> None:
    batch = _skypilot("aws")
    # g6f.large (fractional GPU), m5.large "abc", m5.xlarge negative and NaN
    assert batch.skipped == 4
    names = {o.instance_type for o in batch.observations}
    assert "g6f.large" not in names
    assert _price(batch, "m5.large", "spot") == 0.0415
    assert "m5.xlarge" not in names


def test_gcp_accelerators_are_attachable_and_placeholders_skipped() -> None:
    batch = _skypilot("gcp")
    t4 = [o for o in batch.observations if o.accelerator == "T4"]
    assert {o.attachable for o in t4} == {True}
    assert {o.instance_type for o in t4} == {""}
    assert {o.accelerator_count for o in t4} == {2}
    assert t4[0].accelerator_memory_gib == 16.0
    assert not any(o.accelerator == "tpu-v6e-1" for o in batch.observations)  # 700.0 twice
    assert batch.skipped == 2
    tpu = [o for o in batch.observations if o.accelerator == "tpu-v5litepod-8"]
    assert {o.usd_per_hour for o in tpu} == {9.6, 3.4}
    assert sum(o.instance_type == "n1-standard-8" for o in batch.observations) == 2  # 2 zones -> 1


def test_a_catalog_without_its_columns_is_a_format_error() -> None:
    with pytest.raises(SourceFormatError, match="lacks columns"):
        skypilot_catalog.parse("InstanceType,vCPUs\nn1-standard-8,8\n", "gcp")


def test_azure_retail_prefers_spot_drops_windows_skips_non_usd_and_zero() -> None:
    items = []
    for page in ("page1.json", "page2.json"):
        items += json.loads((FIXTURES / "azure-retail" / page).read_text())["Items"]
    batch = azure_retail.parse(items)
    prices = {(o.region, o.instance_type, o.pricing): o.usd_per_hour for o in batch.observations}
    assert prices == {
        ("eastus", "Standard_NC6s_v3", "on_demand"): 3.06,  # Windows 3.96 dropped
        ("eastus", "Standard_NC6s_v3", "spot"): 0.918,  # Spot, not Low Priority 0.612
        ("westeurope", "Standard_D8s_v5", "on_demand"): 0.384,
        ("eastus", "Standard_ND96asr_v4", "on_demand"): 27.197,
    }
    assert batch.skipped == 2  # EUR row, $0 H100


def test_spot_advisor_buckets_become_hourly_rates() -> None:
    data = json.loads((FIXTURES / "aws-spot-advisor" / "spot-advisor-data.json").read_text())
    batch = aws_spot_advisor.parse(data)
    risks = {(r.region, r.instance_type): r for r in batch.risks}
    assert set(risks) == {
        ("us-east-1", "c5.4xlarge"),
        ("us-east-1", "g5.xlarge"),
        ("us-east-1", "p3.2xlarge"),
        ("us-west-2", "c5.large"),
    }
    assert batch.skipped == 1  # bucket 9 does not exist
    assert risks[("us-east-1", "p3.2xlarge")].label == ">20%"
    assert risks[("us-east-1", "c5.4xlarge")].savings_pct == 73
    low = risks[("us-east-1", "c5.4xlarge")].interruptions_per_hour
    high = risks[("us-east-1", "p3.2xlarge")].interruptions_per_hour
    assert low == pytest.approx(-math.log(1 - 0.025) / 730)
    assert high > low * 5


def test_spot_advisor_without_its_object_is_a_format_error() -> None:
    with pytest.raises(SourceFormatError):
        aws_spot_advisor.parse({"ranges": []})


@pytest.mark.parametrize(
    ("value", "previous", "problem"),
    [
        (float("nan"), None, "not a number"),
        (0.0, None, "not positive"),
        (-1.0, None, "not positive"),
        (700.0, None, "placeholder"),
        (50.0, 1.0, "outlier"),
        (0.05, 1.0, "outlier"),
        (1.5, 1.0, None),
    ],
)
def test_price_validation(value: float, previous: float | None, problem: str | None) -> None:
    found = price_problem(value, previous)
    assert (found is None) if problem is None else (problem in (found or ""))


@pytest.mark.parametrize(
    ("provider", "instance", "family"),
    [
        ("gcp", "n1-standard-8", "skylake"),
        ("gcp", "n2-highcpu-16", "cascadelake"),
        ("gcp", "c2-standard-16", "cascadelake"),
        ("gcp", "n2d-standard-8", "rome"),
        ("aws", "c5.4xlarge", "skylake"),
        ("aws", "c5.12xlarge", "cascadelake"),
        ("aws", "c6i.8xlarge", "icelake"),
        ("aws", "c7i.16xlarge", "sapphirerapids"),
        ("aws", "m6g.large", "graviton2"),
        ("aws", "c7g.xlarge", "graviton3"),
        ("aws", "c8g.xlarge", "graviton4"),
        ("lambda", "gpu_1x_a100", None),
        ("azure", "Standard_D8s_v5", None),
    ],
)
def test_cpu_families(provider: str, instance: str, family: str | None) -> None:
    assert families.cpu_info(provider, instance).cpu_family == family


def test_cpu_family_names_are_the_ones_the_estimator_knows() -> None:
    known = {
        "haswell", "broadwell", "skylake", "cascadelake", "icelake", "sapphirerapids",
        "emeraldrapids", "rome", "milan", "genoa", "graviton2", "graviton3", "graviton4",
    }  # fmt: skip
    assert {info.cpu_family for info in families._table().values()} <= known
