"""Measured spot risk: the shipped table is what its traces say, and machines find their family."""

from __future__ import annotations

import csv
import math

import pytest

from advisor.fitting.spot_traces import (
    Trace,
    committed_traces,
    decode,
    encode,
    failover,
    hyperexponential_fit,
    region_of,
    region_rows,
    risk_rows,
    weibull_fit,
    zone_rows,
)
from advisor.locations import shipped
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


def exponential_quantiles(mean: float, n: int) -> list[float]:
    """A sample with exactly the exponential's law: its quantiles at (i + 0.5) / n."""
    return [-mean * math.log(1 - (i + 0.5) / n) for i in range(n)]


def test_hyperexponential_fit_recovers_known_parameters() -> None:
    # 800 short lives of mean 0.5 h and 200 long ones of mean 20 h
    xs = exponential_quantiles(0.5, 800) + exponential_quantiles(20.0, 200)
    share, short, long = hyperexponential_fit(xs, [])
    assert share == pytest.approx(0.8, abs=0.02)
    assert short == pytest.approx(0.5, rel=0.1)
    assert long == pytest.approx(20.0, rel=0.05)
    # its mean is the spells' mean, as for one exponential
    assert share * short + (1 - share) * long == pytest.approx(sum(xs) / len(xs), rel=1e-6)
    # the trace ends at 30 h: the longer lives are only known to last that long
    ended = [x for x in xs if x < 30]
    cut = [30.0] * (len(xs) - len(ended))
    share, short, long = hyperexponential_fit(ended, cut)
    assert (share, short) == pytest.approx((0.8, 0.5), rel=0.1)
    assert long == pytest.approx(20.0, rel=0.1)


def test_a_phase_held_only_by_cut_spells_is_kept_to_the_longest_seen() -> None:
    # the likelihood grows without bound as a phase takes the one cut-off spell alone
    share, short, long = hyperexponential_fit([1.0, 2.0, 1.5, 0.5], [50.0])
    assert long == 50.0
    assert short == pytest.approx(1.25, rel=0.01)
    assert share == pytest.approx(0.8, abs=0.03)  # the long phase holds a little of the rest
    # one exponential where the spells are alike
    share, short, long = hyperexponential_fit([2.0, 2.0, 2.0], [])
    assert short == pytest.approx(2.0) and long == pytest.approx(2.0)


def test_shipped_table_is_derived_from_the_committed_traces() -> None:
    """Re-derive every zone and region from data/spot-trace-spells.csv: the shipped rows must be
    what ``python -m advisor.fitting spot`` writes."""
    with shipped("spot-risk.csv").open(newline="") as handle:
        shipped_rows = list(csv.DictReader(handle))
    derived = risk_rows(committed_traces())
    assert len(derived) == len(shipped_rows) >= 30 + 15
    for row, again in zip(shipped_rows, derived, strict=True):
        assert row == {key: str(value) for key, value in again.items()}
        assert "@" in row["source"] and row["source"].split("@")[1][:12] in row["source"]
    scopes = [row["scope"] for row in shipped_rows]
    assert scopes == sorted(scopes, key=("zone", "region").index)  # the zones, then the regions
    regions = {(r["family"], r["zone"]) for r in shipped_rows if r["scope"] == "region"}
    assert ("aws-v100-preemption-2023-04", "us-east-1") in regions
    assert ("gcp-h100-availability-2025-10", "us-central1") in regions


def trace(zone: str, ticks: list[int], part: int = 0, provider: str = "aws") -> Trace:
    family = "aws-v100-preemption-2023-04"  # (a family the derivation has a label for)
    return Trace(
        family, provider, "V100", "r", "c0ffee", f"{zone}.json", zone, part, 3600.0, ticks, "w"
    )


def test_region_of_a_zone() -> None:
    assert region_of("aws", "us-east-1c") == "us-east-1"
    assert region_of("gcp", "us-central1-a") == "us-central1"
    assert region_of("gcp", "asia-southeast1-b") == "asia-southeast1"


def test_a_run_fails_over_between_a_regions_aligned_zones() -> None:
    # hour by hour (0: capacity): the run starts on a, moves to b when a loses it at hour 2 while
    # b has it, waits hours 3-4 (neither), starts on a at 5, waits at 8, starts on b at 9
    a = trace("us-east-1a", [0, 0, 1, 1, 1, 0, 0, 0, 1, 1])
    b = trace("us-east-1b", [1, 0, 0, 1, 1, 1, 0, 1, 1, 0])
    assert failover([a, b]) == [(0, 2), (0, 1), (1, 2), (0, 3), (1, 1), (0, 1)]
    lone = trace("us-west-2a", [1, 0, 0, 1, 0, 0, 0, 1])
    rows = {row["zone"]: row for row in region_rows([a, b, lone])}
    assert set(rows) == {"us-east-1", "us-west-2"}
    east = rows["us-east-1"]
    assert east["scope"] == "region"
    assert east["availability"] == 0.7  # some zone had capacity 7 of 10 hours
    # complete lifetimes 1 h (on b) and 3 h (on a), the first and last cut off by the ends;
    # complete waits 2 h and 1 h
    assert (east["up_spells"], east["up_median_hours"]) == (2, 3.0)
    assert (east["down_spells"], east["down_median_hours"]) == (2, 2.0)
    assert east["move_share"] == round(1 / 3, 4)  # 3 preemptions, 1 found b at once
    assert east["ends_per_up_hour"] == round(3 / 7, 4)
    assert "us-east-1a.json, us-east-1b.json" in str(east["source"])
    # one zone: the region is its zone (the same fits, no moves)
    west, (zone,) = rows["us-west-2"], zone_rows([lone])
    assert west["move_share"] == 0 and zone["move_share"] == 0 and zone["scope"] == "zone"
    same = [k for k in zone if k not in ("zone", "source", "scope")]
    assert [west[k] for k in same] == [zone[k] for k in same]
    with pytest.raises(ValueError, match="aligned"):
        failover([a, lone])


def test_a_region_sums_the_parts_of_its_zones() -> None:
    # two parts (a pause in collection cut out): each part fails over on its own
    parts = [
        trace("us-central1-a", [0, 1, 1], 0, "gcp"),
        trace("us-central1-b", [1, 0, 1], 0, "gcp"),
        trace("us-central1-a", [1, 1, 0, 0], 1, "gcp"),
        trace("us-central1-b", [0, 0, 0, 1], 1, "gcp"),
    ]
    (row,) = region_rows(parts)
    assert row["zone"] == "us-central1"
    assert row["hours"] == 7.0
    assert row["availability"] == round(6 / 7, 4)  # one hour without capacity, in part 0
    # part 0: a 1 h, move, b 1 h, wait 1 h; part 1: b 3 h, move, a 1 h (to the end): of the 3
    # preemptions 2 moved, one (part 0's b) waited
    assert row["move_share"] == round(2 / 3, 4)


def test_measured_gpu_spot_is_far_riskier_than_the_stated_rates() -> None:
    risks = shipped_risks()
    v100 = risks.for_machine("aws", "V100")
    # the April 2023 AWS V100 traces: 0.3-1.2 interruptions per running hour, not 0.00018
    assert 0.3 < v100.interruptions_per_hour < 1.5
    assert 0.2 < v100.availability < 0.8
    # heavy-tailed lifetimes in every zone: the long lives are several times the short ones, and
    # a machine found running at a random moment is more often a long-lived one than a new one is
    for z in v100.zones:
        lives = z.lifetimes
        assert lives.long_seconds > 4 * lives.short_seconds
        assert lives.found_short_share < lives.short_share
    assert not v100.stand_in


def test_an_offering_without_a_zone_fails_over_in_its_region() -> None:
    risks = shipped_risks()
    region = risks.for_machine("aws", "V100")
    pinned = risks.for_machine("aws", "V100", "us-east-1c")
    assert region.failover and not pinned.failover
    assert [r.zone for r in region.mixture] == ["us-east-1", "us-west-2"]
    assert pinned.mixture == region.zones == pinned.zones and len(pinned.zones) == 4
    assert all(0 < r.move_share < 1 for r in region.mixture)
    assert all(z.move_share == 0 for z in pinned.mixture)
    # some zone of a region has capacity more often than its zones on average
    assert region.availability > pinned.availability
    assert "failover across a region's zones (2 regions)" in region.describe()
    assert "pinned to one zone; 4 zones" in pinned.describe()
    # a stand-in keeps the offering's scope, and says it is one
    a100 = risks.for_machine("aws", "A100", "us-east-1c")
    assert a100.mixture == pinned.zones and "measured on V100" in a100.describe()
    # a single-zone region is its zone
    h100 = risks.for_machine("gcp", "H100")
    lone = next(r for r in h100.mixture if r.zone == "us-east5")
    zone = next(z for z in h100.zones if z.zone == "us-east5-a")
    assert (lone.lifetimes, lone.availability, lone.move_share) == (
        zone.lifetimes,
        zone.availability,
        0.0,
    )


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
