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
    from advisor.estimate import catalog

    known = set(catalog.cpu_families())
    assert {"skylake", "milan", "turin", "graviton4"} <= known
    assert {info.cpu_family for info in families._table().values()} <= known


def _v8(cloud: str) -> skypilot_catalog.PriceBatch:
    text = (FIXTURES / "skypilot-v8" / cloud / "vms.csv").read_text()
    return skypilot_catalog.parse(text, cloud)


def test_v8_columns_are_read_by_header_whatever_their_order() -> None:
    # Price before Region (lambda), SpotPrice before Price (runpod, yotta), extra columns
    # (aws Arch, hyperbolic StorageGiB, primeintellect UpstreamCloudId, spheron Provider)
    assert _price(_v8("lambda"), "gpu_8x_v100", "on_demand", "V100") == 6.32
    runpod = _v8("runpod")
    assert _price(runpod, "1x_RTX4090_SECURE", "spot", "RTX4090") == 0.74
    assert _price(_v8("yotta"), "2x28v238g_NVIDIA_GeForce_RTX_5090_32G_SECURE", "on_demand",
                  "RTX5090") == 1.3  # fmt: skip
    a1_spot = [
        o.usd_per_hour
        for o in _v8("aws").observations
        if (o.instance_type, o.region, o.pricing) == ("a1.large", "us-east-2", "spot")
    ]
    assert a1_spot == [0.019]  # the regional minimum over the zones
    assert _price(_v8("hyperbolic"), "2x-H100-149-1443", "on_demand", "H100") == 2.58
    prime = _v8("primeintellect")
    assert _price(prime, "datacrunch__1xA100_80GB__22__120__SPOT", "spot", "A100-80GB") == 0.53
    (spot,) = [o for o in _v8("spheron").observations if o.pricing == "spot" and o.vcpus == 28.0]
    assert (spot.accelerator, spot.usd_per_hour) == ("A100-80GB", 1.1476)


def test_v8_accelerator_names_map_to_the_device_catalog() -> None:
    names = {o.accelerator for o in _v8("hyperstack").observations}
    assert names == {"A100-80GB", "H100-PCIe", "H100", "A6000", "RTX-A4000"}
    assert {o.accelerator for o in _v8("cudo").observations} >= {"H100", "RTXA5000"}
    assert _v8("cudo").unmapped == {"RTXA5000": 1}
    assert _v8("verda").unmapped == {}  # RTX-6000-Ada is the device RTX6000-Ada
    assert _v8("oci").unmapped == {"MI300X": 1}


def test_v8_zero_spot_is_no_spot_price_and_odd_memory_is_dropped() -> None:
    vast = _v8("vast")
    assert {o.pricing for o in vast.observations} == {"on_demand"} and vast.skipped == 0
    # RunPod's 'SizeInMiB': 80 is GiB; Prime Intellect's 8x figure is the machine's total
    assert all(o.accelerator_memory_gib is None for o in _v8("runpod").observations)
    (eight,) = [o for o in _v8("primeintellect").observations if o.accelerator_count == 8]
    assert eight.accelerator_memory_gib is None
    h100 = next(o for o in _v8("nebius").observations if o.accelerator == "H100")
    assert h100.accelerator_memory_gib == 80.0


def test_v8_rows_without_a_region_are_skipped_and_counted() -> None:
    seeweb = _v8("seeweb")
    assert seeweb.skipped == 1
    assert "ECS1GPU6" not in {o.instance_type for o in seeweb.observations}
