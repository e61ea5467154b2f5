"""The recommender's decisions on hand-built offerings and predictions, with numbers by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.errors import AdvisorError, UsageError
from advisor.estimate.prediction import Prediction, Target
from advisor.recommend.billing import rule_for
from advisor.recommend.outcome import outcome
from advisor.recommend.ranker import ASSUMED, cost, rank_key, recommend, target_of
from advisor.recommend.ranking import Priced
from advisor.recommend.recommendation import OBJECTIVES, Assumptions, Constraints
from pricing.offers import BillingRule, Filters, OfferGroup, Rentable, group_offers, select
from pricing.spot_risk import exponential

HOUR = 3600.0


def offer(
    instance: str,
    price: float,
    *,
    provider: str = "aws",
    region: str = "us-east-1",
    accelerator: str | None = None,
    count: int = 0,
    vcpus: float = 4,
    pricing: str = "on_demand",
    rate: float = 0.0,
) -> Rentable:
    return Rentable(
        provider, region, None, instance, vcpus, 16.0, None, accelerator, count, None,
        pricing, price, price, 0.0, rate, "2025-01-01", "test",
    )  # fmt: skip


CPU = offer("c5.4xlarge", 0.68, vcpus=16)
T4 = offer("g4dn.xlarge", 0.526, accelerator="T4", count=1)
T4_SPOT = offer("g4dn.xlarge", 0.1845, accelerator="T4", count=1, pricing="spot")
A10 = offer("gpu_1x_a10", 0.75, provider="lambda", accelerator="A10", count=1)
V100 = offer("p3.2xlarge", 3.06, accelerator="V100", count=1, vcpus=8)

HOURS = {None: 10.0, "T4": 4.0, "V100": 1.0}
PER_SECOND_60 = {
    ("aws", "on_demand"): BillingRule("aws", "on_demand", 1, 60, None, 120, 0.0, "test"),
    ("aws", "spot"): BillingRule("aws", "spot", 1, 60, None, 120, 0.0, "test"),
}


def exact(target: Target) -> Prediction:
    """Exact hours per device (no spread), unknown accelerators excluded."""
    if target.accelerator not in HOURS:
        return Prediction(0.0, 0.0, reason=f"{target.accelerator} is not in the device catalog")
    return Prediction(HOURS[target.accelerator] * HOUR, 0.0)


def run(rentables: list[Rentable], **constraints: float | str | None) -> object:
    return recommend(
        group_offers(rentables),
        exact,
        PER_SECOND_60,
        workload="imdb_bilstm",
        constraints=Constraints(**constraints),  # type: ignore[arg-type]
    )


def test_cheapest_that_meets_the_deadline() -> None:
    rec = recommend(
        group_offers([CPU, T4, T4_SPOT, A10]),
        exact,
        PER_SECOND_60,
        workload="imdb_bilstm",
        constraints=Constraints(deadline_seconds=8 * HOUR),
    )
    names = [(o.rentable.instance_type, o.rentable.pricing) for o in rec.options]
    assert names == [
        ("g4dn.xlarge", "spot"),
        ("g4dn.xlarge", "on_demand"),
        ("c5.4xlarge", "on_demand"),
    ]
    spot_t4, t4, cpu = rec.options
    assert spot_t4.cost_usd == pytest.approx(4 * 0.1845)  # 0.738
    assert t4.cost_usd == pytest.approx(4 * 0.526)  # 2.104
    assert cpu.cost_usd == pytest.approx(10 * 0.68)  # 6.80
    assert [o.meets_deadline for o in rec.options] == [True, True, False]
    assert cpu.outcome.p_meet == 0.0
    assert [o.rank for o in rec.options] == [1, 2, 3]
    assert rec.best is spot_t4
    assert rec.feasible_count == 2 and rec.considered == 4
    assert rec.cheapest_on_demand is not None
    assert rec.cheapest_on_demand.rentable == T4
    assert rec.fastest is not None and rec.fastest.rentable == T4_SPOT  # same time, cheaper
    assert rec.excluded == {"A10 is not in the device catalog": 1}
    assert spot_t4.why.startswith("cheapest that meets the deadline")
    assert "only 0% chance" in cpu.why


def test_billing_increment_and_minimum_reach_the_cost() -> None:
    hourly = {("aws", "on_demand"): BillingRule("aws", "on_demand", 3600, 3600, None, None, 0, "t")}

    def short(target: Target) -> Prediction:
        return Prediction(4 * HOUR + 600, 0.0) if target.accelerator else Prediction(30.0, 0.0)

    rec = recommend(group_offers([CPU, T4]), short, hourly, workload="w")
    by_name = {o.rentable.instance_type: o for o in rec.options}
    assert by_name["g4dn.xlarge"].cost_usd == pytest.approx(5 * 0.526)  # 4h10m billed as 5 h
    assert by_name["c5.4xlarge"].cost_usd == pytest.approx(0.68)  # 30 s billed as the 1 h minimum


def test_nothing_meets_the_deadline_says_which_deadline_would() -> None:
    rec = run([CPU, T4, T4_SPOT], deadline_seconds=2 * HOUR)
    assert not rec.feasible
    assert rec.best is None
    assert rec.feasible_deadline_seconds == 4 * HOUR
    assert rec.fastest is not None and rec.fastest.outcome.p50_seconds == 4 * HOUR
    assert all(not o.meets_deadline for o in rec.options)


def test_nothing_within_budget_says_which_budget_would() -> None:
    rec = run([CPU, T4, T4_SPOT], deadline_seconds=8 * HOUR, budget_usd=0.5)
    assert not rec.feasible
    assert rec.feasible_budget_usd == 0.74  # 4 h x 0.1845 = 0.738, rounded up to the cent
    assert rec.feasible_deadline_seconds is None  # nothing fits $0.50 at any deadline


def test_fastest_within_the_budget() -> None:
    rec = run([CPU, T4, T4_SPOT, V100], objective="fastest", budget_usd=3.0)
    assert [o.rentable.instance_type for o in rec.options[:2]] == ["g4dn.xlarge"] * 2
    assert rec.options[0].rentable.pricing == "spot"  # same time, cheaper first
    assert not rec.options[-1].within_budget
    rec = run([CPU, T4, T4_SPOT, V100], objective="fastest", budget_usd=4.0)
    assert rec.best is not None and rec.best.rentable == V100
    assert rec.best.cost_usd == pytest.approx(3.06)


def test_confidence_decides_meets_deadline() -> None:
    def spread(target: Target) -> Prediction:
        return Prediction(7 * HOUR, 0.2)

    # P(T <= 8h) for a log-normal with median 7h and sigma 0.2: Phi(ln(8/7)/0.2) = Phi(0.6677) = 0.7478
    for confidence, meets in ((0.9, False), (0.7, True)):
        rec = recommend(
            group_offers([T4]),
            spread,
            PER_SECOND_60,
            workload="w",
            constraints=Constraints(deadline_seconds=8 * HOUR, confidence=confidence),
        )
        assert rec.options[0].outcome.p_meet == pytest.approx(0.7478, abs=1e-4)
        assert rec.options[0].meets_deadline is meets


def test_startup_is_paid_once() -> None:
    rec = recommend(
        group_offers([T4]),
        exact,
        PER_SECOND_60,
        workload="w",
        assumptions=Assumptions(startup_seconds=120),
    )
    assert rec.options[0].outcome.p50_seconds == 4 * HOUR + 120


def test_spot_preemptions_raise_time_and_cost() -> None:
    risky = T4_SPOT._replace(interruptions_per_hour=0.36)
    rec = recommend(
        group_offers([risky]),
        exact,
        PER_SECOND_60,
        workload="w",
        assumptions=Assumptions(checkpoint_seconds=50, reacquire_seconds=150),
    )
    option = rec.options[0]
    result = option.outcome
    # a restart: new VM 150 s + restore 50 s = 200 s
    # Daly for 4 h: tau = 1000 s, E = 10000 e^0.02 (e^0.105 - 1) 14.4, preemptions = E / M
    expected = 10_000 * math.exp(0.02) * math.expm1(0.105) * 14.4
    assert result.restart_seconds == 200
    assert expected == pytest.approx(16_264.4, abs=0.1)
    # the simulation counts preemptions and its mean wall is within 3% of Daly's (512 samples)
    assert result.expected_preemptions == pytest.approx(expected / 10_000, rel=0.1)
    assert option.expected_cost_usd == pytest.approx(0.1845 * expected / HOUR, rel=0.03)
    assert result.checkpoint_interval_seconds == pytest.approx(1000)
    assert result.p50_seconds > 4 * HOUR
    billed = math.ceil(result.p50_seconds)  # per second
    assert option.cost_usd == pytest.approx(0.1845 * billed / HOUR)
    assert result.p90_seconds >= result.p50_seconds


def test_gcp_preemptible_cap_forces_a_restart() -> None:
    preemptible = offer(
        "n1-standard-8", 0.1, provider="gcp", accelerator="T4", count=1, pricing="spot"
    )
    rules = {("gcp", "spot"): BillingRule("gcp", "spot", 1, 60, 86_400, 30, 0.0, "test")}

    def long(target: Target) -> Prediction:
        return Prediction(30 * HOUR, 0.0)

    rec = recommend(
        group_offers([preemptible]),
        long,
        rules,
        workload="w",
        assumptions=Assumptions(checkpoint_seconds=50, reacquire_seconds=150),
    )
    # one forced stop after 24 h: save (50 s), get a new VM (150 s), restore (50 s), finish
    option = rec.options[0]
    assert option.outcome.p50_seconds == 30 * HOUR + 250
    assert option.outcome.cap_restarts == 1
    # expected cost: 108,250 s billed per second at $0.10/h = $3.0069
    assert option.expected_cost_usd == pytest.approx(0.1 * 108_250 / HOUR)
    assert option.cost_usd == pytest.approx(3.0069, abs=1e-4)


def test_pareto_front() -> None:
    def hours(target: Target) -> Prediction:
        return Prediction({"A": 1, "B": 2, "C": 3, "D": 4}[target.accelerator or ""] * HOUR, 0.0)

    offers = [
        offer("a", 10.0, accelerator="A", count=1),
        offer("b", 1.5, accelerator="B", count=1),
        offer("c", 5 / 3, accelerator="C", count=1),  # 3 h for $5: beaten by b (2 h, $3)
        offer("d", 0.25, accelerator="D", count=1),
    ]
    rec = recommend(group_offers(offers), hours, PER_SECOND_60, workload="w")
    assert [o.rentable.instance_type for o in rec.pareto] == ["a", "b", "d"]


def test_one_prediction_per_distinct_device() -> None:
    calls: list[Target] = []

    def counting(target: Target) -> Prediction:
        calls.append(target)
        return exact(target)

    many = [r._replace(region=f"r{i}") for i in range(500) for r in (CPU, T4, T4_SPOT)]
    rec = recommend(
        group_offers(many), counting, PER_SECOND_60, workload="w", constraints=Constraints(top=3)
    )
    assert len(calls) == 2  # the CPU and the T4 (on-demand and spot share the device)
    assert rec.considered == 1500 and len(rec.options) == 3


def test_filters() -> None:
    offers = [CPU, T4, T4_SPOT, A10, V100]

    def kept(filters: Filters) -> list[Rentable]:
        return [r for group in select(group_offers(offers), filters) for r in group.members()]

    assert kept(Filters(pricing="spot")) == [T4_SPOT]
    assert T4_SPOT not in kept(Filters(pricing="on_demand"))
    assert kept(Filters(cpu_only=True)) == [CPU]
    assert kept(Filters(provider="LAMBDA")) == [A10]
    assert kept(Filters(accelerator="t4")) == [T4, T4_SPOT]
    assert kept(Filters(region="US-EAST-1")) == [r for r in offers if r.region == "us-east-1"]
    assert len(kept(Filters(max_count=1))) == 5


def test_offer_groups_sort_by_price_and_drop_free_rows() -> None:
    cheap, dear = T4._replace(region="b", usd_per_hour=0.3), T4._replace(region="c")
    (group,) = group_offers([dear, offer("free", 0.0)._replace(accelerator="T4"), cheap])
    assert group.members() == [cheap, dear] and list(group.prices) == [0.3, T4.usd_per_hour]
    assert group.members(1, 5) == [dear] and group.members(2, 3) == []
    assert group.count_up_to(0.6, hours=2) == 1  # $0.60 buys 2 h of the $0.30 one only
    assert len(group_offers([CPU, T4, T4_SPOT, CPU._replace(region="x")])) == 3


def test_bad_requests() -> None:
    with pytest.raises(AdvisorError, match="no priced offering"):
        recommend(select(group_offers([CPU]), Filters(provider="azure")), exact, PER_SECOND_60,
                  workload="w")  # fmt: skip
    with pytest.raises(UsageError, match="objective"):
        run([CPU], objective="slowest")
    with pytest.raises(UsageError, match="confidence"):
        run([CPU], confidence=1.0)


def test_only_the_cheapest_few_of_each_group_are_read() -> None:
    """The engine reads a group's ``top`` cheapest members (and, under a budget that cuts the
    group, the ``top`` above the cut): the price library can hand it groups whose other rows
    are never decoded, and the answer is the same."""
    regions = [(f"r{i}", 1 + (i * 7919 % 101) / 100) for i in range(60)]
    offers = [
        r._replace(region=name, usd_per_hour=r.usd_per_hour * factor)
        for name, factor in regions
        for r in (CPU, T4, T4_SPOT, V100)
    ]
    constraints = Constraints(deadline_seconds=8 * HOUR, budget_usd=2.5, top=5)
    full = recommend(
        group_offers(offers), exact, PER_SECOND_60, workload="w", constraints=constraints
    )
    loaded: list[tuple[str | None, str]] = []

    def lazy(group: OfferGroup) -> OfferGroup:
        rows = group.members()

        def rest() -> list[Rentable]:
            loaded.append((group.first.accelerator, group.first.pricing))
            return rows[8:]

        return OfferGroup(rows[:8], group.prices, rest)

    cut = recommend(
        [lazy(g) for g in group_offers(offers)], exact, PER_SECOND_60, workload="w",
        constraints=constraints,
    )  # fmt: skip
    assert cut == full
    # the budget cuts the T4 on-demand group past its 8 decoded rows: 4 h x $0.526 x factor <= $2.50
    cheap_enough = sum(1 for _, factor in regions if 4 * 0.526 * factor <= 2.5)
    assert 8 < cheap_enough < 60
    assert full.feasible_count == 60 + cheap_enough  # every T4 spot, no V100, no CPU
    assert loaded == [("T4", "on_demand")]


DEVICES = [(None, 0), ("T4", 1), ("V100", 1), ("A10", 1)]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(DEVICES),
            st.sampled_from(["on_demand", "spot"]),
            st.floats(0.05, 20.0),
            st.sampled_from(["aws", "gcp"]),
            st.sampled_from([0.0, 0.05, 0.5]),
        ),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from(OBJECTIVES),
    st.one_of(st.none(), st.floats(0.5, 12.0)),
    st.one_of(st.none(), st.floats(0.5, 30.0)),
)
def test_grouped_ranking_equals_costing_every_offer_one_by_one(
    specs: list[tuple[tuple[str | None, int], str, float, str, float]],
    objective: str,
    deadline_hours: float | None,
    budget: float | None,
) -> None:
    offers = [
        offer(
            f"m{i}",
            price,
            provider=provider,
            accelerator=device,
            count=count,
            pricing=pricing,
            rate=rate if pricing == "spot" else 0.0,
        )
        for i, ((device, count), pricing, price, provider, rate) in enumerate(specs)
    ]
    constraints = Constraints(
        objective=objective,
        deadline_seconds=deadline_hours * HOUR if deadline_hours else None,
        budget_usd=budget,
        top=5,
    )
    rec = recommend(
        group_offers(offers), exact, PER_SECOND_60, workload="w", constraints=constraints
    )
    # the definition, offer by offer
    usable = [r for r in offers if r.accelerator != "A10"]
    options = [
        cost(r, outcome(exact(target_of(r)), rule_for(PER_SECOND_60, r.provider, r.pricing),
                        constraints, ASSUMED,
                        risk=exponential(r.interruptions_per_hour, "test")
                        if r.pricing == "spot" else None),
             constraints)
        for r in usable
    ]  # fmt: skip
    key = rank_key(objective, constraints.wait_usd_per_hour)
    options.sort(
        key=lambda o: key(
            Priced(o.outcome, o.rentable, o.cost_usd, 0.0, o.feasible, o.expected_cost_usd)
        )
    )
    assert rec.feasible_count == sum(o.feasible for o in options)
    assert [(o.cost_usd, o.outcome.p50_seconds, o.feasible) for o in rec.options] == [
        (o.cost_usd, o.outcome.p50_seconds, o.feasible) for o in options[:5]
    ]
    assert rec.excluded == ({"A10 is not in the device catalog": len(offers) - len(usable)}
                            if len(usable) < len(offers) else {})  # fmt: skip


def test_an_instance_type_is_predicted_as_the_device_it_sells() -> None:
    """Lambda's catalog lists ``H100`` for ``gpu_1x_h100_pcie``: it is predicted as the PCIe
    part (51 FP32 TFLOP/s, 2 TB/s; data/instance-devices.csv), slower than the SXM box beside
    it, and named so; an instance type that does not say keeps the catalog's name."""
    from advisor.estimate import predict
    from advisor.recommend.cells import machine
    from tests.estimate.test_probes import probe

    pcie = offer("gpu_1x_h100_pcie", 2.49, provider="lambda", accelerator="H100", count=1)
    sxm = offer("gpu_1x_h100_sxm5", 3.29, provider="lambda", accelerator="H100", count=1)
    assert target_of(pcie).accelerator == "H100-PCIe" and target_of(sxm).accelerator == "H100"
    resnet = probe("resnet50", 5.0)
    assert predict(resnet, target_of(pcie)).seconds > predict(resnet, target_of(sxm)).seconds
    ranked = recommend(
        group_offers([pcie, sxm]),
        lambda target: Prediction(2 * HOUR if target.accelerator == "H100-PCIe" else HOUR, 0.0),
        {},
        workload="resnet50",
        constraints=Constraints(),
    )
    labels = {option.rentable.instance_type: machine(option) for option in ranked.options}
    assert labels == {
        "gpu_1x_h100_pcie": "gpu_1x_h100_pcie (H100-PCIe)",
        "gpu_1x_h100_sxm5": "gpu_1x_h100_sxm5 (H100)",
    }
