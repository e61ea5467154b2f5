"""How long one run takes on one kind of machine, and how much of it is billed.

On-demand: the prediction itself (log-normal), plus the start-up paid once. Spot: the same run
under preemptions, checkpoints and restarts (``spot``), simulated with a fixed seed. Computed
once per distinct device, provider, pricing and preemption rate, shared by all its offerings.
"""

from __future__ import annotations

import math

from advisor.estimate.prediction import Prediction
from advisor.recommend import spot
from advisor.recommend.billing import billed_seconds
from advisor.recommend.recommendation import Assumptions, Constraints, Outcome
from pricing.offers import BillingRule


def outcome(
    prediction: Prediction,
    rule: BillingRule,
    constraints: Constraints,
    assumptions: Assumptions,
    *,
    interruptions_per_hour: float = 0.0,
) -> Outcome:
    """The wall-time distribution and billed hours of one run."""
    cap = rule.max_runtime_seconds
    if interruptions_per_hour <= 0 and (cap is None or prediction.quantile(0.999) < cap):
        return _uninterrupted(prediction, rule, constraints, assumptions.startup_seconds)
    return _preemptible(prediction, rule, constraints, assumptions, interruptions_per_hour)


def _uninterrupted(
    prediction: Prediction, rule: BillingRule, constraints: Constraints, start: float
) -> Outcome:
    deadline = constraints.deadline_seconds
    p50 = prediction.seconds + start
    p90 = prediction.quantile(0.9) + start
    confident = prediction.quantile(constraints.confidence) + start
    mean = prediction.seconds * math.exp(prediction.log_sigma**2 / 2) + start
    return Outcome(
        prediction=prediction,
        rule=rule,
        p50_seconds=p50,
        p90_seconds=p90,
        confident_seconds=confident,
        expected_seconds=mean,
        p_meet=1.0 if deadline is None else prediction.probability_within(deadline - start),
        billed_hours=billed_hours(rule, p50, p90, confident, mean),
    )


def _preemptible(
    prediction: Prediction,
    rule: BillingRule,
    constraints: Constraints,
    assumptions: Assumptions,
    rate: float,
) -> Outcome:
    start, deadline = assumptions.startup_seconds, constraints.deadline_seconds
    restart = assumptions.reacquire_seconds + start
    checkpoint, cap = assumptions.checkpoint_seconds, rule.max_runtime_seconds
    walls = [
        w + start
        for w in spot.simulate(
            prediction.seconds, prediction.log_sigma, rate, checkpoint, restart, cap
        )
    ]
    run = spot.expected_run(prediction.seconds, rate, checkpoint, restart, cap)
    p50, p90 = spot.quantile(walls, 0.5), spot.quantile(walls, 0.9)
    confident = spot.quantile(walls, constraints.confidence)
    mean = sum(walls) / len(walls)  # inf when any sample never finishes
    return Outcome(
        prediction=prediction,
        rule=rule,
        p50_seconds=p50,
        p90_seconds=p90,
        confident_seconds=confident,
        expected_seconds=mean,
        p_meet=1.0 if deadline is None else spot.fraction_within(walls, deadline),
        interruptions_per_hour=rate,
        expected_preemptions=run.expected_preemptions,
        checkpoint_interval_seconds=(
            run.interval_seconds if math.isfinite(run.interval_seconds) else None
        ),
        cap_restarts=run.cap_restarts,
        checkpoint_seconds=checkpoint,
        restart_seconds=restart,
        billed_hours=billed_hours(rule, p50, p90, confident, mean),
    )


def billed_hours(
    rule: BillingRule, p50: float, p90: float, confident: float, mean: float
) -> tuple[float, float, float, float]:
    """Billed hours at p50, p90, the confidence quantile and the mean (inf stays inf)."""

    def hours(seconds: float) -> float:
        return billed_seconds(seconds, rule) / 3600 if math.isfinite(seconds) else math.inf

    return hours(p50), hours(p90), hours(confident), hours(mean)
