"""End to end through the engine on the real seed prices (data/prices-reference.csv)."""

from __future__ import annotations

import math

import pytest

from advisor.recommend.billing import billed_seconds, rule_for
from advisor.recommend.ranker import recommend
from advisor.recommend.recommendation import Assumptions, Constraints
from pricing.offers import BillingRule, Filters, group_offers, select
from tests.seed_catalog import many_rentables, seed_rentables, speed_predictor

# AWS and GCP: per second with a 60 s minimum; GCP preemptible stops after 24 h.
RULES = {
    ("aws", "on_demand"): BillingRule("aws", "on_demand", 1, 60, None, None, 0.0, "AWS 2017"),
    ("aws", "spot"): BillingRule("aws", "spot", 1, 60, None, 120, 0.05, "AWS 2017"),
    ("gcp", "on_demand"): BillingRule("gcp", "on_demand", 1, 60, None, None, 0.0, "GCP 2017"),
    ("gcp", "spot"): BillingRule("gcp", "spot", 1, 60, 86_400, 30, 0.05, "GCP 2017"),
}
LSTM_ON_ONE_CORE = 40 * 3600.0  # 40 h on one core: 4 h on 16 vCPUs, 1 h on a T4


def test_seed_prices_compose_gcp_hosts_and_accelerators() -> None:
    rentables = seed_rentables()
    t4 = next(
        r
        for r in rentables
        if r.provider == "gcp" and r.region == "us-central1" and r.accelerator == "T4"
        and r.accelerator_count == 1 and r.pricing == "on_demand"
    )  # fmt: skip
    assert t4.instance_type == "n1-standard-8"
    assert t4.usd_per_hour == pytest.approx(t4.host_usd_per_hour + t4.accelerator_usd_per_hour)
    assert not any(r.instance_type.startswith("a2-") and not r.accelerator for r in rentables)


def test_cheapest_under_a_deadline_on_seed_prices() -> None:
    calls, predict = speed_predictor(LSTM_ON_ONE_CORE)
    rec = recommend(
        group_offers(seed_rentables()),
        predict,
        RULES,
        workload="imdb_bilstm",
        constraints=Constraints(deadline_seconds=8 * 3600, top=400),
        assumptions=Assumptions(startup_seconds=20, checkpoint_seconds=2.3),
    )
    assert rec.feasible and rec.best is not None
    assert max(calls.values()) == 1
    feasible = [o for o in rec.options if o.feasible]
    assert len(feasible) == rec.feasible_count
    assert rec.options[: len(feasible)] == tuple(feasible)  # feasible first
    # cheapest first: the expected cost with an hour of waiting at the default $1
    weighed = [
        o.expected_cost_usd
        + (o.outcome.expected_wait_seconds + o.outcome.expected_delay_seconds) / 3600
        for o in feasible
    ]
    assert weighed == sorted(weighed)
    for option in rec.options:
        rule = rule_for(RULES, option.rentable.provider, option.rentable.pricing)
        if math.isfinite(option.outcome.p50_seconds):
            hours = billed_seconds(option.outcome.p50_seconds, rule) / 3600
            assert option.cost_usd == pytest.approx(option.rentable.usd_per_hour * hours)
        assert option.meets_deadline == (option.outcome.p_meet >= 0.9)
    # a GPU spot machine beats every CPU on cost for this recurrent model in this table
    assert rec.best.rentable.accelerator is not None
    assert rec.best.rentable.pricing == "spot"
    assert rec.cheapest_on_demand is not None
    assert rec.cheapest_on_demand.cost_usd >= rec.best.cost_usd
    assert "no speed for H200" not in rec.excluded  # in the speed table: predicted
    assert rec.excluded["no speed for GH200"] == 1  # not in it: left out and counted
    assert sum(rec.excluded.values()) > 0  # TPUs and some GPUs are not in the speed table


def test_on_demand_only_and_cpu_only() -> None:
    _, predict = speed_predictor(LSTM_ON_ONE_CORE)
    rec = recommend(
        select(group_offers(seed_rentables()), Filters(pricing="on_demand", cpu_only=True)),
        predict,
        RULES,
        workload="imdb_bilstm",
        constraints=Constraints(deadline_seconds=8 * 3600),
    )
    assert all(
        o.rentable.pricing == "on_demand" and not o.rentable.accelerator for o in rec.options
    )


def test_many_offerings_are_ranked_the_same_as_few() -> None:
    _, predict = speed_predictor(LSTM_ON_ONE_CORE)
    few = recommend(group_offers(seed_rentables()), predict, RULES, workload="w")
    _, predict = speed_predictor(LSTM_ON_ONE_CORE)
    many = recommend(group_offers(many_rentables(20_000)), predict, RULES, workload="w")
    assert many.considered == 20_000
    assert many.best is not None and few.best is not None
    assert many.best.cost_usd == pytest.approx(few.best.cost_usd)
    assert many.best.rentable._replace(region="") == few.best.rentable._replace(region="")
