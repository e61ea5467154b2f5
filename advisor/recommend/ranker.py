"""Candidates, cost, rank: the recommendation as pure functions over prices and predictions.

Fast by construction: offerings come in groups of identical machines (``pricing.offers.OfferGroup``),
so a prediction and a spot simulation are made once per group, and only the few cheapest members
of each group, the only ones that can be ranked, are ever looked at; the budget counts the rest
by a binary search over their sorted prices.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import NamedTuple

from advisor.errors import AdvisorError, UsageError
from advisor.estimate import catalog
from advisor.estimate.prediction import Prediction, Target
from advisor.recommend import fallback, staging, ties
from advisor.recommend.billing import rule_for
from advisor.recommend.boot import boot_for
from advisor.recommend.outcome import CHECKPOINT_EVERY, Overheads, outcome
from advisor.recommend.ranking import Priced, explain_why, frontier
from advisor.recommend.recommendation import (
    OBJECTIVES,
    Assumptions,
    Constraints,
    Option,
    Outcome,
    Recommendation,
)
from pricing.offers import BillingRule, OfferGroup, Rentable
from pricing.spot_risk import SpotRisks, exponential

Predictor = Callable[[Target], Prediction]
Rules = dict[tuple[str, str], BillingRule]
DEFAULTS, ASSUMED = Constraints(), Assumptions()

PLANNED = 10
"""How many spot groups, the cheapest by a plan's lower bound, get a spot-with-fallback plan (a
simulation each). Fixed, not the number of options listed: the plans are counted among the
offerings, and the app (50 options) and ``advisor recommend`` (10) counted 304 and 268 for one
query while they followed ``top``."""


def target_of(rentable: Rentable) -> Target:
    network = (
        catalog.node_network(rentable.provider, rentable.instance_type)
        if rentable.nodes > 1
        else None
    )
    accelerator = rentable.accelerator
    if accelerator:
        accelerator = catalog.device_as_sold(rentable.provider, rentable.instance_type, accelerator)
    return Target(
        accelerator=accelerator,
        accelerator_count=rentable.accelerator_count if rentable.accelerator else 0,
        vcpus=rentable.vcpus,
        cpu_family=rentable.cpu_family,
        nodes=rentable.nodes,
        network_gbps=network or 0.0,
    )


def cost(rentable: Rentable, result: Outcome, constraints: Constraints) -> Option:
    """One offering's option: price times billed hours (and the data set's egress), and whether
    it meets the constraints."""
    price, egress = rentable.usd_per_hour, result.egress_usd
    confident = price * result.billed_hours[2] + egress
    return Option(
        rentable=rentable,
        outcome=result,
        cost_usd=price * result.billed_hours[0] + egress,
        cost_usd_p90=price * result.billed_hours[1] + egress,
        confident_cost_usd=confident,
        expected_cost_usd=price * result.billed_hours[3] + egress,
        meets_deadline=result.p_meet >= constraints.confidence,
        within_budget=constraints.budget_usd is None or confident <= constraints.budget_usd,
    )


def rank_key(
    objective: str, wait_usd_per_hour: float = 0.0
) -> Callable[[Priced], tuple[float, ...]]:
    """Sort key: feasible first by the objective, then the rest by chance of meeting the deadline.
    The cheapest is the least expected cost (the mean, a spot run's interruptions in it) with
    each hour of expected waiting (for spot capacity, for restarts) at ``wait_usd_per_hour``."""
    if objective not in OBJECTIVES:
        raise UsageError(f"objective {objective!r} is not one of {', '.join(OBJECTIVES)}")
    cheapest = objective == "cheapest"

    def key(row: Priced) -> tuple[float, ...]:
        result, cost_p50 = row.outcome, row.cost_usd
        if not row.feasible:
            return (1.0, -result.p_meet, result.p50_seconds, cost_p50)
        if cheapest:
            return (0.0, charged(row, wait_usd_per_hour), result.p50_seconds, cost_p50)
        return (0.0, result.p50_seconds, cost_p50, 0.0)

    return key


def charged(row: Priced, wait_usd_per_hour: float) -> float:
    """What the cheapest objective weighs: the expected cost, and the expected waiting (for a
    spot machine, for its restarts) at ``wait_usd_per_hour``."""
    expected = row.expected_cost_usd if math.isfinite(row.expected_cost_usd) else row.cost_usd
    waited = row.outcome.expected_wait_seconds + row.outcome.expected_delay_seconds
    return expected + wait_usd_per_hour * waited / 3600.0


def recommend(
    offers: Iterable[OfferGroup],
    predict: Predictor,
    rules: Rules,
    *,
    workload: str,
    constraints: Constraints = DEFAULTS,
    assumptions: Assumptions = ASSUMED,
    context: tuple[str, ...] = (),
    spot_risks: SpotRisks | None = None,
) -> Recommendation:
    """Rank every offering of ``offers`` for ``workload`` under the user's constraints.

    ``spot_risks``: the measured spot risk (``pricing.spot_risk.shipped_risks()``, which the
    service passes); without it a spot offering is taken back at its database rate, memoryless,
    always available, and no spot-with-fallback plan is made (it needs measured availability).

    ``offers`` are already the ones the user asked for (``pricing.query.offer_groups`` applies
    the filters; ``pricing.offers.select`` and ``group_offers`` do it for lists in memory)."""
    if not 0 < constraints.confidence < 1:
        raise UsageError(f"confidence must be between 0 and 1, not {constraints.confidence}")
    key = rank_key(constraints.objective, constraints.wait_usd_per_hour)
    offered = list(offers)
    if not offered:
        raise AdvisorError(
            "no priced offering matches the filters (see 'advisor prices list'; "
            "'advisor prices refresh' fetches current prices)"
        )
    predictions: dict[Target, Prediction] = {}
    priced: list[_PricedGroup] = []
    excluded: Counter[str] = Counter()
    for group in offered:
        result = _outcome_for(
            group.first, predictions, predict, rules, constraints, assumptions, spot_risks
        )
        if result is None:
            excluded[_reason(predictions[target_of(group.first)])] += len(group)
            continue
        priced.append(_PricedGroup(result, group, _affordable(result, group, constraints)))
    plans = _fallbacks(priced, constraints, assumptions) if spot_risks else []
    priced += plans
    considered = sum(map(len, offered)) + len(plans)
    return _assemble(priced, key, workload, constraints, excluded, considered, context)


class _PricedGroup(NamedTuple):
    outcome: Outcome
    group: OfferGroup
    feasible_count: int
    """How many of the group's members are feasible (a prefix: they are sorted by price)."""


def _twin_key(r: Rentable) -> tuple[object, ...]:
    return (r.provider, r.accelerator, r.accelerator_count, r.vcpus, r.cpu_family, r.nodes)


def _fallbacks(
    priced: list[_PricedGroup], constraints: Constraints, assumptions: Assumptions
) -> list[_PricedGroup]:
    """Spot with an on-demand fallback, for each spot group with an on-demand twin (the same
    provider, machine and count; its cheapest offering), under a deadline, the ``PLANNED``
    cheapest. One option per spot group: its cheapest offering (the others would only cost
    more)."""
    on_demand: dict[tuple[object, ...], Rentable] = {}
    for p in priced:
        if p.group.first.pricing == "on_demand":
            on_demand.setdefault(_twin_key(p.group.first), p.group.first)
    candidates = [
        (p, twin)
        for p in priced
        if p.group.first.pricing == "spot"
        and (twin := on_demand.get(_twin_key(p.group.first))) is not None
    ]
    # a plan costs at least its spot price for the median work: plan only the PLANNED groups
    # cheapest by that bound (a simulation each), the likeliest to reach the table
    candidates.sort(key=lambda c: c[0].group.first.usd_per_hour * c[0].outcome.prediction.seconds)
    plans = []
    for p, twin in candidates[:PLANNED]:
        spot_offer = p.group.first
        assumed = started(assumptions, p.outcome)
        result = fallback.plan_outcome(p.outcome, spot_offer, twin, constraints, assumed)
        if result is None:
            continue
        offer = spot_offer._replace(pricing="spot_fallback")
        group = OfferGroup([offer], [offer.usd_per_hour])
        plans.append(_PricedGroup(result, group, _affordable(result, group, constraints)))
    return plans


def _affordable(result: Outcome, group: OfferGroup, constraints: Constraints) -> int:
    """How many of the group's members are feasible: all meet the deadline or none do; the
    budget cuts at a price."""
    if result.p_meet < constraints.confidence:
        return 0
    budget, hours = constraints.budget_usd, result.billed_hours[2]
    if budget is None:
        return len(group)
    if not math.isfinite(hours) or budget < result.egress_usd:
        return 0
    return group.count_up_to(budget - result.egress_usd, hours)


def _outcome_for(
    r: Rentable,
    predictions: dict[Target, Prediction],
    predict: Predictor,
    rules: Rules,
    constraints: Constraints,
    assumptions: Assumptions,
    spot_risks: SpotRisks | None,
) -> Outcome | None:
    target = target_of(r)
    if target not in predictions:
        predictions[target] = predict(target)
    prediction = predictions[target]
    if not prediction.fits or prediction.reason or not prediction.seconds > 0:
        return None
    rule = rule_for(rules, r.provider, r.pricing)
    risk = None
    if r.pricing == "spot":
        risk = (
            spot_risks.for_machine(r.provider, r.accelerator, r.zone)
            if spot_risks
            else exponential(r.interruptions_per_hour, rule.source)
        )
    overheads = overheads_of(r, assumptions, prediction, spot=risk is not None)
    return outcome(prediction, rule, constraints, assumptions, risk=risk, overheads=overheads)


def overheads_of(
    r: Rentable, assumptions: Assumptions, prediction: Prediction, *, spot: bool
) -> Overheads:
    """What ``r``'s machines do besides the training ``prediction`` times, as ``assumptions``
    ask: start, set up, stage the data, and save checkpoints (``checkpoints_of``)."""
    return Overheads(
        boot=boot_for(r).seconds if assumptions.booting else 0.0,
        setup=staging.setup_seconds(r) if assumptions.setting_up else 0.0,
        staging=staging.staging_seconds(r, assumptions.data_bytes),
        data_bytes=assumptions.data_bytes,
        data_from=assumptions.data_from,
        egress_usd=staging.egress_usd(r, assumptions.data_bytes, assumptions.data_from),
        checkpoints=checkpoints_of(assumptions, prediction.seconds, spot=spot),
        checkpoint_seconds=assumptions.checkpoint_seconds / _writers(r, prediction),
    )


def checkpoints_of(assumptions: Assumptions, work: float, *, spot: bool) -> int:
    """Checkpoints a run saves besides those of a spot run's simulation: an uninterrupted run one
    at each epoch's end, at most one every ``CHECKPOINT_EVERY`` of work, the last its final
    save; a spot run only the final one (its others at its own interval, in ``spot``)."""
    if assumptions.checkpoints <= 0:
        return 0
    return 1 if spot else min(assumptions.checkpoints, math.ceil(work / CHECKPOINT_EVERY))


def _writers(r: Rentable, prediction: Prediction) -> int:
    """Nodes that write a checkpoint at once: every node of an LLM plan that shards its state
    (ZeRO, FSDP, tensor or pipeline parallel), each its own shard to its own disk; one for a
    replicated model (data parallel: rank 0 saves it)."""
    layout = prediction.layout
    if layout is None:
        return 1
    sharded = layout.launcher_sharding != "none" or layout.model_parallel > 1
    return r.nodes if sharded else 1


def started(assumptions: Assumptions, result: Outcome) -> Assumptions:
    """``assumptions`` with what ``result``'s machine does besides the training (its start,
    set-up and data, its final save; billed) in the run's start-up."""
    before = result.boot_seconds + result.setup_seconds + result.staging_seconds
    before += result.checkpointing_seconds  # its final save
    return replace(assumptions, startup_seconds=assumptions.startup_seconds + before)


def _reason(prediction: Prediction) -> str:
    if prediction.reason:
        return prediction.reason
    return "does not fit in memory" if not prediction.fits else "no usable prediction"


def _row(result: Outcome, r: Rentable, ok: bool) -> Priced:
    hours, egress = result.billed_hours, result.egress_usd
    price = r.usd_per_hour
    return Priced(
        result, r, price * hours[0] + egress, price * hours[2] + egress, ok,
        price * hours[3] + egress,
    )  # fmt: skip


def _assemble(
    priced: list[_PricedGroup],
    key: Callable[[Priced], tuple[float, ...]],
    workload: str,
    constraints: Constraints,
    excluded: Counter[str],
    considered: int,
    context: tuple[str, ...],
) -> Recommendation:
    top = constraints.top
    # the cheapest `top` feasible and the cheapest `top` infeasible of each group
    shortlist = [
        _row(result, r, feasible)
        for result, group, ok in priced
        for feasible, part in (
            (True, group.members(0, min(ok, top))),
            (False, group.members(ok, ok + top)),
        )
        for r in part
    ]
    cheapest = [_row(result, group.first, ok > 0) for result, group, ok in priced]

    def option(row: Priced) -> Option:
        return cost(row.rentable, row.outcome, constraints)

    best = [option(row) for row in sorted(shortlist, key=key)[:top]]
    fastest = min(cheapest, key=lambda row: (row.outcome.p50_seconds, row.cost_usd), default=None)
    on_demand = [row for row in cheapest if row.rentable.pricing == "on_demand"]
    cheapest_od = min(
        on_demand, key=rank_key("cheapest", constraints.wait_usd_per_hour), default=None
    )
    feasible = sum(p.feasible_count for p in priced)
    hint_deadline = hint_budget = None
    if not feasible and cheapest:
        hint_deadline, hint_budget = _hints(cheapest, constraints)
    ranked = tuple(
        ties.with_ties(
            [
                replace(o, rank=i, why=explain_why(o, i, best[0], constraints))
                for i, o in enumerate(best, start=1)
            ],
            constraints.objective,
        )
    )
    return Recommendation(
        workload=workload,
        constraints=constraints,
        options=ranked,
        fastest=option(fastest) if fastest else None,
        cheapest_on_demand=option(cheapest_od) if cheapest_od else None,
        pareto=tuple(option(row) for row in frontier(cheapest)),
        considered=considered,
        feasible_count=feasible,
        feasible_deadline_seconds=hint_deadline,
        feasible_budget_usd=hint_budget,
        excluded=dict(excluded),
        context=context,
    )


def _hints(cheapest: list[Priced], constraints: Constraints) -> tuple[float | None, float | None]:
    """The deadline (within budget) and the budget (meeting the deadline) that would be feasible,
    from the cheapest offering of each outcome."""
    budget = constraints.budget_usd
    affordable = [
        row.outcome.confident_seconds
        for row in cheapest
        if budget is None or row.confident_cost_usd <= budget
    ]
    deadline = None
    if constraints.deadline_seconds is not None and affordable:
        shortest = min(affordable)
        deadline = math.ceil(shortest / 60) * 60 if math.isfinite(shortest) else None
    in_time = [
        row.confident_cost_usd for row in cheapest if row.outcome.p_meet >= constraints.confidence
    ]
    needed = None
    if budget is not None and in_time:
        needed = math.ceil(min(in_time) * 100) / 100
    return deadline, needed
