"""Honest ties: the chance another option is really cheaper than #1, and what settles it."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from advisor.bench.settle import tie_lines
from advisor.estimate.prediction import Prediction, Target
from advisor.recommend import ties
from advisor.recommend.outcome import outcome
from advisor.recommend.ranker import cost, recommend
from advisor.recommend.recommendation import Assumptions, Constraints, Option
from advisor.recommend.report import as_json, explain
from pricing.offers import BillingRule, Rentable, group_offers

HOUR = 3600.0
T4 = Rentable(
    "aws", "us-east-1", None, "g4dn.xlarge", 4.0, 16.0, None, "T4", 1, 16.0, "on_demand",
    0.526, 0.526, 0.0, 0.0, "2025-01-01", "test",
)  # fmt: skip
L4 = T4._replace(instance_type="g6.xlarge", accelerator="L4", usd_per_hour=0.80)
RULE = BillingRule("aws", "on_demand", 1, 60, None, None, 0.0, "AWS")
RULES = {("aws", "on_demand"): RULE}


def option(r: Rentable, p50_hours: float, p90_hours: float) -> Option:
    """An on-demand option at $1/h whose time, hence cost, has this p50 and p90."""
    sigma = math.log(p90_hours / p50_hours) / 1.2815515655446004
    result = outcome(Prediction(p50_hours * HOUR, sigma), RULE, Constraints(), Assumptions())
    return cost(r._replace(usd_per_hour=1.0), result, Constraints())


def test_the_same_device_elsewhere_is_never_really_cheaper_when_it_costs_more() -> None:
    # one prediction for both: its error moves both costs alike
    first, dearer = option(T4, 10, 20), option(T4._replace(region="eu-west-1"), 11, 22)
    assert ties.p_cheaper(dearer, first) == 0.0
    assert ties.stake(dearer, first) == 0.0


def test_different_devices_with_the_same_median_are_a_coin_toss() -> None:
    first, other = option(T4, 10, 20), option(L4, 10, 20)
    assert ties.p_cheaper(other, first) == pytest.approx(0.5)
    # independent errors: sd of the log gap is sqrt(2) s, s = ln 2 / z90
    s = math.log(2) / 1.2815515655446004
    far = option(L4, 10 * math.exp(2 * s * math.sqrt(2)), 20 * math.exp(2 * s * math.sqrt(2)))
    assert ties.p_cheaper(far, first) == pytest.approx(0.02275, abs=1e-3)  # Phi(-2)


def test_stake_is_the_expected_overpay() -> None:
    # different devices, equal spreads s: log gap ~ N(ln 0.8, 2 s^2); #1 at its median $10
    first, cheaper = option(T4, 10, 20), option(L4, 8, 16)
    s = math.log(2) / 1.2815515655446004
    sd = math.sqrt(2) * s
    n = NormalDist()
    # E[max(0, 10 (1 - e^X))], X ~ N(m, sd^2) = 10 (Phi(-m/sd) - e^{m + sd^2/2} Phi(-m/sd - sd))
    m = math.log(0.8)
    closed = 10 * (n.cdf(-m / sd) - math.exp(m + sd * sd / 2) * n.cdf(-m / sd - sd))
    assert ties.stake(cheaper, first) == pytest.approx(closed, rel=0.02)
    assert ties.stake(first, first) == 0.0  # one prediction: never cheaper than itself


def predict(target: Target) -> Prediction:
    """L4 a little faster than T4, both uncertain (log-sd 0.5): 200 h of training on T4."""
    return Prediction((200.0 if target.accelerator == "T4" else 140.0) * HOUR, 0.5)


def test_ranker_names_the_tie_and_the_bench_that_settles_it() -> None:
    rec = recommend(
        group_offers([T4, L4]),
        predict,
        RULES,
        workload="resnet50",
        constraints=Constraints(deadline_seconds=60 * 24 * HOUR),
    )
    first, second = rec.options
    assert first.rentable.accelerator == "T4"  # $105 vs $112 at p50
    assert second.tie and 0.2 <= (second.p_cheaper or 0) < 0.5
    assert "a tie:" in second.why and "chance it is really cheaper than #1" in second.why
    assert first.p_cheaper is None
    head, bench = tie_lines(rec)  # the tie in one line, then the bench worth running
    assert head.startswith("#2 is within the prediction's uncertainty of #1")
    assert "would cost more" not in head  # dollars at stake: worth settling
    assert bench.startswith("worth settling: advisor bench --model resnet50 --gpus T4,L4")
    row = as_json(rec)["options"][1]
    assert row["p_cheaper_than_first"] == pytest.approx(second.p_cheaper, abs=1e-4)
    assert row["tie_stake_usd"] > 1
    assert any(line.startswith("Against #1:") for line in explain(rec, second))
