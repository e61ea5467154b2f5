"""A recommendation as plain data (the ``--json``/``--csv`` contract) and as explanation lines.

The JSON keys are a stable contract for scripts: workload, deadline_hours, objective, options (a
ranked list, each with at least the keys of ``OPTION_KEYS``) and fastest. ``measured`` is true
where the time is a probe measured on that very device (imported, or from ``advisor bench``),
not a prediction. A spot option's wall time (``predicted_hours``) is in parts too: the training
(``training_hours``), the time on machines that is billed (``machine_hours``, with what
interruptions add, ``expected_delay_hours``) and the wait for capacity (``expected_wait_hours``);
``spot_risk_stand_in`` says why a trace stands in for the machine (null where it was measured).
"""

from __future__ import annotations

import math
from typing import Any

from advisor import display
from advisor.estimate import catalog
from advisor.estimate.layout import Layout
from advisor.recommend import spot, staging
from advisor.recommend.billing import describe as describe_billing
from advisor.recommend.boot import boot_for
from advisor.recommend.cells import time_words
from advisor.recommend.deadline import describe_seconds, format_duration
from advisor.recommend.outcome import CHECKPOINT_EVERY
from advisor.recommend.recommendation import Option, Outcome, Recommendation
from pricing.offers import Rentable

OPTION_KEYS = (
    "rank",
    "provider",
    "region",
    "instance_type",
    "accelerator",
    "accelerator_count",
    "nodes",
    "pricing",
    "usd_per_hour",
    "predicted_hours",
    "predicted_hours_p90",
    "cost_usd",
    "cost_usd_p90",
    "p_meet_deadline",
    "meets_deadline",
    "measured",
)


def _hours(seconds: float) -> float | None:
    return round(seconds / 3600, 4) if math.isfinite(seconds) else None


def _usd(value: float) -> float | None:
    return round(value, 4) if math.isfinite(value) else None


def option_row(option: Option) -> dict[str, Any]:
    """One option as a flat row: the contract's keys first, then the details."""
    r, result = option.rentable, option.outcome
    return {
        "rank": option.rank or None,
        "provider": r.provider,
        "region": r.region,
        "instance_type": r.instance_type,
        "accelerator": r.accelerator,
        "accelerator_count": r.accelerator_count,
        "nodes": r.nodes,
        "pricing": r.pricing,
        "usd_per_hour": round(r.usd_per_hour, 5),
        "predicted_hours": _hours(result.p50_seconds),
        "predicted_hours_p90": _hours(result.p90_seconds),
        "cost_usd": _usd(option.cost_usd),
        "cost_usd_p90": _usd(option.cost_usd_p90),
        "p_meet_deadline": round(result.p_meet, 4),
        "meets_deadline": option.meets_deadline,
        "within_budget": option.within_budget,
        "expected_hours": _hours(result.expected_seconds),
        "expected_cost_usd": _usd(option.expected_cost_usd),
        "interruptions_per_hour": round(result.interruptions_per_hour, 4),
        "expected_preemptions": round(result.expected_preemptions, 3),
        "expected_wait_hours": _hours(result.expected_wait_seconds),
        "boot_hours": _hours(result.boot_seconds),
        "setup_hours": _hours(result.setup_seconds),
        "staging_hours": _hours(result.staging_seconds),
        "checkpoint_hours": _hours(result.checkpointing_seconds),
        "egress_usd": _usd(result.egress_usd),
        "training_hours": _hours(result.training_seconds[0]),
        "training_hours_p90": _hours(result.training_seconds[1]),
        "machine_hours": _hours(result.machine_seconds[0]),
        "machine_hours_p90": _hours(result.machine_seconds[1]),
        "expected_delay_hours": _hours(result.expected_delay_seconds),
        "spot_risk_source": _risk_source(result),
        "spot_risk_stand_in": result.spot_risk.stand_in or None if result.spot_risk else None,
        "fallback": _fallback_row(result),
        "vcpus": r.vcpus,
        "device": _device(r),
        "batch_per_device": _batch(result.prediction.batch_per_device),
        "global_batch": result.prediction.global_batch or None,
        "stack": dict(result.prediction.environment).get("ADVISOR_STACK"),
        "layout": _layout(result.prediction.layout),
        "zone": r.zone,
        "measured": result.prediction.measured,
        "extrapolated": result.prediction.extrapolated,
        "why": option.why,
        "p_cheaper_than_first": None if option.p_cheaper is None else round(option.p_cheaper, 4),
        "tie_stake_usd": _usd(option.stake_usd) if option.p_cheaper is not None else None,
    }


def _device(r: Rentable) -> str | None:
    """The accelerator as the instance type sells it (``H100-PCIe`` where the price catalog
    says ``H100``: ``catalog.device_as_sold``), the one predicted; None on a CPU machine."""
    if not r.accelerator:
        return None
    return catalog.device_as_sold(r.provider, r.instance_type, r.accelerator)


def _batch(value: float) -> float | int | None:
    """A per-device batch: whole where it is (a fixed global batch may split unevenly)."""
    if not value:
        return None
    return int(value) if float(value).is_integer() else round(value, 3)


def _fallback_row(result: Outcome) -> dict[str, Any] | None:
    plan = result.fallback
    if plan is None:
        return None
    twin = plan.on_demand
    return {
        "policy": "uniform_progress",
        "plan_hours": _hours(plan.plan_seconds),
        "on_demand_share": round(plan.on_demand_share, 4),
        "on_demand_provider": twin.provider,
        "on_demand_region": twin.region,
        "on_demand_instance_type": twin.instance_type,
        "on_demand_usd_per_hour": round(twin.usd_per_hour, 5),
        "restart_hours": _hours(plan.restart_seconds),
        "switch_rule": plan.switch_rule,
    }


def _layout(layout: Layout | None) -> dict[str, object] | None:
    """How an LLM job spreads over the option's GPUs (None for the zoo's workloads)."""
    if layout is None:
        return None
    return {
        "gpus": layout.gpus,
        "tensor_parallel": layout.tensor,
        "pipeline_parallel": layout.pipeline,
        "virtual_stages": layout.virtual,
        "micro_batch": layout.micro_batch,
        "accumulation": layout.accumulation,
        "sharding": layout.launcher_sharding,
    }


def _risk_source(result: Outcome) -> str | None:
    risk = result.spot_risk
    return f"{risk.describe()}; {risk.source}" if risk else None


def as_json(rec: Recommendation) -> dict[str, Any]:
    """The ``--json`` payload."""
    c = rec.constraints
    return {
        "workload": rec.workload,
        "deadline_hours": _hours(c.deadline_seconds) if c.deadline_seconds else None,
        "budget_usd": c.budget_usd,
        "objective": c.objective,
        "confidence": c.confidence,
        "feasible": rec.feasible,
        "considered": rec.considered,
        "options": [option_row(o) for o in rec.options],
        "fastest": option_row(rec.fastest) if rec.fastest else None,
        "cheapest_on_demand": option_row(rec.cheapest_on_demand)
        if rec.cheapest_on_demand
        else None,
        "pareto": [option_row(o) for o in rec.pareto],
        "feasible_deadline_hours": _hours(rec.feasible_deadline_seconds)
        if rec.feasible_deadline_seconds
        else None,
        "feasible_budget_usd": rec.feasible_budget_usd,
        "excluded": rec.excluded,
    }


def infeasible_lines(rec: Recommendation) -> list[str]:
    """What to say when nothing meets the constraints."""
    if rec.feasible:
        return []
    c = rec.constraints
    asked = []
    if c.deadline_seconds:
        asked.append(f"finishes within {describe_seconds(c.deadline_seconds)}")
    if c.budget_usd is not None:
        asked.append(f"costs at most ${c.budget_usd:,.2f}")
    lines = [
        f"No option {' and '.join(asked) or 'is usable'} with {c.confidence:.0%} confidence "
        f"({rec.considered} offerings considered)."
    ]
    within = " within the budget" if c.budget_usd is not None else ""
    if rec.feasible_deadline_seconds:
        deadline = format_duration(math.ceil(rec.feasible_deadline_seconds))
        lines.append(f"A deadline of {deadline} would be met{within} (--deadline {deadline}).")
    if rec.feasible_budget_usd is not None:
        purpose = " to meet the deadline" if c.deadline_seconds else ""
        lines.append(f"A budget of ${rec.feasible_budget_usd:,.2f} would be enough{purpose}.")
    return lines


def explain(rec: Recommendation, option: Option) -> list[str]:
    """Walk one option: measurement, device scaling, preemption, billing, cost."""
    r, result = option.rentable, option.outcome
    p = result.prediction
    device = f"{_device(r)} x{r.accelerator_count}" if r.accelerator else f"{r.vcpus:g} vCPUs"
    machines = f"{r.nodes} machines " if r.nodes > 1 else ""
    lines = [
        f"Option: {r.provider} {r.region} {machines}{r.instance_type or '(attached)'} "
        f"({device}, {r.pricing})"
    ]
    lines += [f"Rank: #{option.rank} {option.why}"] if option.rank and option.why else []
    lines += ranked_by(rec, option)
    lines.append(f"Time: {time_words(option)}")
    lines += overhead_lines(option)
    lines += [f"Measurement: {line}" for line in rec.context]
    how = "measured there" if p.measured else "scaled from the probe"
    if p.environment:  # an LLM job: the device model's absolute time, laid out on the node
        how = "the device model"
    lines.append(
        f"Device scaling ({how}{', extrapolated' if p.extrapolated else ''}): "
        f"median {describe_seconds(p.seconds)}, p90 {describe_seconds(p.quantile(0.9))}"
        + (f", kernels: {p.kernel_path}" if p.kernel_path else "")
    )
    lines += [f"  {step}" for step in (*p.steps, *(p.compared() if p.compared else ()))]
    if result.fallback is not None:
        lines += spot_lines(result)[:1] + fallback_lines(option)
        return lines + tie_lines(option) + left_out_lines(rec)
    if r.pricing == "spot" and result.spot_risk is not None:
        lines += spot_lines(result)
    else:
        lines.append("Preemption: none (on-demand)")
    lines.append(
        f"Billing: {describe_billing(result.rule)}; billed "
        f"{display.duration(result.billed_hours[0] * 3600)} at p50, "
        f"{display.duration(result.billed_hours[1] * 3600)} at p90 ({result.rule.source})"
    )
    lines.append(
        f"Cost: ${display.rate(r.usd_per_hour, 4)}/h x {display.duration(result.billed_hours[0] * 3600)}"
        + (f" + {display.money(result.egress_usd)} egress" if result.egress_usd else "")
        + f" = {display.money(option.cost_usd)} (p90 {display.money(option.cost_usd_p90)}, "
        f"mean {display.money(option.expected_cost_usd)})"
    )
    return lines + tie_lines(option) + left_out_lines(rec)


def overhead_lines(option: Option) -> list[str]:
    """``--explain``: one line for each overhead billed besides the training (the machine's
    start, its set-up, the data set, the checkpoints), with its source and assumption."""
    r, result = option.rentable, option.outcome
    lines = []
    if result.boot_seconds:
        lines.append(
            f"Start: {describe_seconds(result.boot_seconds)}, billed: {boot_for(r).source}"
        )
    if result.setup_seconds or result.staging_seconds:
        rate = staging.rate(r)
        lines.append(
            f"Transfer: {rate.describe()}; network: {rate.network_gbps.source}; "
            f"disk: {rate.disk_bytes_per_second.source}"
        )
    if result.setup_seconds:
        image = staging.image(r)
        lines.append(
            f"Set-up: {describe_seconds(result.setup_seconds)}, billed: "
            f"{staging.describe_size(image.value)} of image and packages: {image.source}"
        )
    if result.staging_seconds:
        lines.append(
            f"Data: {staging.describe_size(result.data_bytes)} in "
            f"{describe_seconds(result.staging_seconds)}, billed"
            f"{', on each node (each downloads the whole set)' if r.nodes > 1 else ''}; "
            + _data_source(result, r)
            + _again(result)
        )
    if result.checkpointing_seconds:
        each = result.checkpointing_seconds / result.checkpoints
        when = (
            "the final save; the others at the spot run's own interval (Preemption)"
            if result.spot_risk is not None
            else f"one at each epoch's end, at most one every {describe_seconds(CHECKPOINT_EVERY)}"
            " of work (assumed), the last the final save"
        )
        lines.append(
            f"Checkpoints: {describe_seconds(result.checkpointing_seconds)}, billed: "
            f"{result.checkpoints} x {describe_seconds(each)} (weights and optimizer state at "
            f"{spot.CHECKPOINT_BANDWIDTH / 1e6:g} MB/s a node, assumed; a sharded plan's nodes "
            f"each write their shard at once), {when}"
        )
    return lines


def _data_source(result: Outcome, r: Rentable) -> str:
    """Where the data comes from, and the egress charged for it."""
    source = result.data_from
    if source is None or source == r.provider:
        return (
            "from the provider's object store in the machine's region (parallel requests, no "
            "egress charged)"
        )
    rate = staging.egress(source)
    return (
        f"from {source}'s object store, which charges its internet egress: "
        f"${rate.value * 1e9:g}/GB x {staging.describe_size(result.data_bytes)}"
        f"{f' x {r.nodes} nodes' if r.nodes > 1 else ''} = {display.money(result.egress_usd)}, "
        f"in every cost ({rate.source}); the transfer taken at the machine's own rate"
    )


def _again(result: Outcome) -> str:
    return "; paid again after each preemption" if result.spot_risk is not None else ""


def ranked_by(rec: Recommendation, option: Option) -> list[str]:
    """``--explain``: what the cheapest objective weighed for this option, its expected cost
    and its waiting at the stated value of an hour (none for the fastest objective)."""
    constraints, result = rec.constraints, option.outcome
    if constraints.objective != "cheapest":
        return []
    waited = (result.expected_wait_seconds + result.expected_delay_seconds) / 3600.0
    rate = constraints.wait_usd_per_hour
    said = f"Ranked by: expected cost {display.money(option.expected_cost_usd)}"
    if waited > 0 and rate > 0:
        said += (
            f" + {describe_seconds(waited * 3600)} of waiting at {display.money(rate)} an hour "
            f"(--wait-value) = {display.money(option.expected_cost_usd + waited * rate)}"
        )
    return [said]


def left_out_lines(rec: Recommendation) -> list[str]:
    """``--explain``: the offerings left out, by reason."""
    return [f"Left out: {count} {reason}" for reason, count in sorted(rec.excluded.items())]


def spot_risk_words(result: Outcome) -> str:
    """The risk of one spot run in words: ``~6 interruptions expected (spot traces, AWS V100 Apr
    2023)``."""
    risk = result.spot_risk
    if risk is None:
        return ""
    count = result.expected_preemptions
    shown = f"~{count:.0f}" if count >= 1.5 else f"~{count:.1f}" if count >= 0.05 else "<0.05"
    plural = "" if shown == "~1" else "s"
    stand_in = ", stand-in" if risk.stand_in else ""
    return f"{shown} interruption{plural} expected ({risk.label}{stand_in})"


def spot_lines(result: Outcome) -> list[str]:
    """``--explain`` for a spot run: the measured risk, its source, and what it costs this run."""
    risk = result.spot_risk
    assert risk is not None
    interval = result.checkpoint_interval_seconds
    every = (
        f"a {result.checkpoint_seconds:.1f} s checkpoint every {describe_seconds(interval)}"
        if interval
        else "no periodic checkpoint (the run is shorter than the optimal interval)"
    )
    mixture = risk.mixture
    lives = sorted(z.lifetimes.median_seconds for z in mixture)
    moves = sum(z.move_share for z in mixture) / len(mixture)
    where = (
        f"by region (on one zone's machine; {moves:.0%} of preemptions find another zone "
        "with capacity at once)"
        if risk.failover
        else "by zone"
    )
    return [
        f"Preemption: {risk.describe()}: a machine could be had {risk.availability:.0%} of the "
        f"time; median lifetime {describe_seconds(lives[0])} to {describe_seconds(lives[-1])} "
        f"{where} (many short lives, a few long ones), {risk.interruptions_per_hour:.2g} "
        f"interruptions per running hour on average; source {risk.source}",
        f"  this run: {spot_risk_words(result)}, "
        f"{describe_seconds(result.expected_wait_seconds)} waiting for capacity on average; "
        f"{every} (Young); {describe_seconds(result.restart_seconds)} per restart "
        "(new machine, start-up, checkpoint restore)"
        + (f", {result.cap_restarts} forced restarts (lifetime cap)" if result.cap_restarts else "")
        + f"; expected wall {describe_seconds(result.expected_seconds)}",
    ]


def tie_lines(option: Option) -> list[str]:
    """``--explain`` for an option compared with #1 (``ties``)."""
    if option.p_cheaper is None:
        return []
    kind = "a tie" if option.tie else "not a tie"
    return [
        f"Against #1: {display.chance(option.p_cheaper)} chance it is really cheaper ({kind}); "
        f"expected overpay of keeping #1 {display.money(option.stake_usd)} (p50 costs times the "
        "time predictions' log-normal errors: one error on one device kind, independent across)"
    ]


def fallback_words(result: Outcome) -> str:
    """``~12% on on-demand``: how much of a fallback plan runs on its on-demand twin."""
    plan = result.fallback
    return f"~{plan.on_demand_share:.0%} on on-demand" if plan else ""


def fallback_lines(option: Option) -> list[str]:
    """``--explain`` for spot with an on-demand fallback: the plan, the rule, the cost."""
    result, r = option.outcome, option.rentable
    plan = result.fallback
    assert plan is not None
    twin = plan.on_demand
    return [
        f"Fallback plan (Uniform Progress, Wu et al. NSDI 2024): plan for "
        f"{describe_seconds(plan.plan_seconds)} of work (a high quantile of the prediction, "
        f"not the median); fall back to {twin.provider} {twin.region} "
        f"{twin.instance_type or '(attached)'} on-demand at ${display.rate(twin.usd_per_hour, 4)}/h",
        f"  switch rule: {plan.switch_rule}",
        f"  expected: {fallback_words(result)} of the machine time, "
        f"{result.expected_preemptions:.1f} preemptions, {display.chance(result.p_meet)} chance "
        f"to meet the deadline, wall {describe_seconds(result.p50_seconds)} (p50) to "
        f"{describe_seconds(result.p90_seconds)} (p90)",
        f"Cost: spot at ${display.rate(r.usd_per_hour, 4)}/h plus on-demand at "
        f"${display.rate(twin.usd_per_hour, 4)}/h: {display.money(option.cost_usd)} (p50), "
        f"{display.money(option.cost_usd_p90)} (p90), {display.money(option.expected_cost_usd)} "
        f"expected; billed per second",
    ]


def usd(value: float) -> str:
    """Dollars as people read them (``advisor.display.money``)."""
    return display.money(value)
