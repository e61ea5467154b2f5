"""Measured spot risk: the shipped table is what its traces say, and machines find their family."""

from __future__ import annotations

import csv
import math

import pytest

from advisor.locations import shipped
from benchmarks.spot_traces_derive import committed_traces, decode, encode, weibull_fit, zone_rows
from pricing.spot_risk import DEFAULT_FAMILY, shipped_risks


def test_spells_round_trip() -> None:
    ticks = [0, 0, 1, 0, 1, 1, 1, 0]
    assert encode(ticks) == "a2 u1 a1 u3 a1"
    assert decode(encode(ticks)) == ticks


def test_weibull_fit_recovers_known_parameters() -> None:
    # the Weibull's quantiles at (i + 0.5) / n: a sample with exactly the shape and scale
    shape, scale, n = 0.6, 2.0, 2000
    xs = [scale * (-math.log(1 - (i + 0.5) / n)) ** (1 / shape) for i in range(n)]
    fitted_shape, fitted_scale = weibull_fit(xs, [])
    assert fitted_shape == pytest.approx(shape, rel=0.03)
    assert fitted_scale == pytest.approx(scale, rel=0.03)
    # the trace ends at the 90% quantile: the longest tenth is only known to last that long
    cut = sorted(xs)
    end = cut[n * 9 // 10]
    fitted_shape, fitted_scale = weibull_fit(cut[: n * 9 // 10], [end] * (n // 10))
    assert fitted_shape == pytest.approx(shape, rel=0.05)
    assert fitted_scale == pytest.approx(scale, rel=0.05)


def test_shipped_table_is_derived_from_the_committed_traces() -> None:
    """Re-derive every zone from data/spot-trace-spells.csv: the shipped figures must match."""
    with shipped("spot-risk.csv").open(newline="") as handle:
        shipped_rows = list(csv.DictReader(handle))
    derived = zone_rows(committed_traces())
    assert len(derived) == len(shipped_rows) >= 30
    for row, again in zip(shipped_rows, derived, strict=True):
        assert (row["family"], row["zone"]) == (again["family"], again["zone"])
        for column in ("availability", "up_shape", "up_scale_hours", "down_scale_hours"):
            assert float(row[column]) == pytest.approx(float(again[column]), abs=1e-3), column
        assert "@" in row["source"] and row["source"].split("@")[1][:12] in row["source"]


def test_measured_gpu_spot_is_far_riskier_than_the_stated_rates() -> None:
    risks = shipped_risks()
    v100 = risks.for_machine("aws", "V100")
    # the April 2023 AWS V100 traces: 0.3-1.2 interruptions per running hour, not 0.00018
    assert 0.3 < v100.interruptions_per_hour < 1.5
    assert 0.2 < v100.availability < 0.8
    # heavy-tailed lifetimes: Weibull shape below 1 in every zone
    assert all(z.up_shape < 1 for z in v100.zones)
    assert not v100.stand_in


@pytest.mark.parametrize(
    ("provider", "accelerator", "family", "stand_in"),
    [
        ("aws", "V100", "aws-v100-preemption-2023-04", ""),
        ("aws", "K80", "aws-k80-availability-2022-10", ""),
        ("aws", None, "aws-cpu-preemption-2023-04", ""),
        ("gcp", "H100", "gcp-h100-availability-2025-10", ""),
        ("aws", "A100", "aws-v100-preemption-2023-04", "measured on V100"),
        ("gcp", "tpu-v5p-8", "gcp-h100-availability-2025-10", "measured on H100"),
        ("gcp", None, DEFAULT_FAMILY["cpu"], "conservative default"),
        ("azure", "T4", DEFAULT_FAMILY["gpu"], "conservative default"),
    ],
)
def test_each_machine_finds_its_family(
    provider: str, accelerator: str | None, family: str, stand_in: str
) -> None:
    risk = shipped_risks().for_machine(provider, accelerator)
    assert risk.family == family
    assert (stand_in in risk.stand_in) if stand_in else risk.stand_in == ""
    assert risk.source.startswith(("skypilot-org/spot-traces@", "andylizf/skynomad-artifact@"))
