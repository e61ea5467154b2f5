"""How long one run takes on one kind of machine, and how much of it is billed.

On-demand: the prediction itself (log-normal), plus the start-up paid once. Spot: the same run
under the measured availability and preemptions of its trace family (``pricing.spot_risk``),
checkpoints and restarts (``spot``), simulated with a fixed seed. Computed once per distinct
device, provider, pricing and spot family, shared by all its offerings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from advisor.estimate.prediction import Prediction
from advisor.recommend import spot
from advisor.recommend.billing import billed_seconds
from advisor.recommend.recommendation import Assumptions, Constraints, Outcome
from pricing.offers import BillingRule
from pricing.spot_risk import SpotRisk

CHECKPOINT_EVERY = 1800.0
"""Least work between an uninterrupted run's checkpoints. It saves one at each epoch's end (what
Keras' ``ModelCheckpoint`` and Lightning's save by default), but short epochs are not each saved:
at most one every 30 minutes of work (an assumption, stated in --explain)."""


@dataclass(frozen=True)
class Overheads:
    """What a run's machines do besides training, in seconds, all billed: before the first step
    (their start, the image and set-up, the data set) and the checkpoints it saves besides a
    spot run's simulated ones. A spot run pays what comes before again after each preemption,
    on a new machine."""

    boot: float = 0.0
    setup: float = 0.0
    staging: float = 0.0
    data_bytes: float = 0.0
    """The data set staged in ``staging``."""
    data_from: str | None = None
    egress_usd: float = 0.0
    """What its source charges to send it (``staging.egress_usd``), in USD."""
    checkpoints: int = 0
    """Checkpoints saved besides a spot run's simulated ones (``ranker.checkpoints_of``)."""
    checkpoint_seconds: float = 0.0
    """Saving one (every node of a sharded plan writing its shard at once)."""

    @property
    def checkpointing(self) -> float:
        return self.checkpoints * self.checkpoint_seconds

    @property
    def before(self) -> float:
        """Seconds on the machine before the training's first step."""
        return self.boot + self.setup + self.staging

    def said(self) -> dict[str, Any]:
        """What an ``Outcome`` tells of them, by its field names."""
        return {
            "boot_seconds": self.boot,
            "setup_seconds": self.setup,
            "staging_seconds": self.staging,
            "data_bytes": self.data_bytes,
            "data_from": self.data_from,
            "egress_usd": self.egress_usd,
            "checkpoints": self.checkpoints,
            "checkpointing_seconds": self.checkpointing,
        }


NONE = Overheads()


def outcome(
    prediction: Prediction,
    rule: BillingRule,
    constraints: Constraints,
    assumptions: Assumptions,
    *,
    risk: SpotRisk | None = None,
    overheads: Overheads = NONE,
) -> Outcome:
    """The wall-time distribution and billed hours of one run (``risk``: on a spot machine)
    with its ``overheads`` (billed)."""
    if risk is None:
        return _uninterrupted(prediction, rule, constraints, assumptions, overheads)
    return _preemptible(prediction, rule, constraints, assumptions, risk, overheads)


def _uninterrupted(
    prediction: Prediction,
    rule: BillingRule,
    constraints: Constraints,
    assumptions: Assumptions,
    overheads: Overheads = NONE,
) -> Outcome:
    start = assumptions.startup_seconds + overheads.before + overheads.checkpointing
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
        training_seconds=(p50, p90),
        machine_seconds=(p50, p90),
        billed_hours=billed_hours(rule, p50, p90, confident, mean),
        **overheads.said(),
    )


def _preemptible(
    prediction: Prediction,
    rule: BillingRule,
    constraints: Constraints,
    assumptions: Assumptions,
    risk: SpotRisk,
    overheads: Overheads = NONE,
) -> Outcome:
    start = assumptions.startup_seconds + overheads.before + overheads.checkpointing
    deadline = constraints.deadline_seconds
    checkpoint, cap = assumptions.checkpoint_seconds, rule.max_runtime_seconds
    restart = restart_seconds(assumptions, overheads.setup + overheads.staging)
    runs = spot.simulate(prediction.seconds, prediction.log_sigma, risk, checkpoint, restart, cap)
    walls = [run.wall + start for run in runs]
    # waiting for capacity is not billed: billed hours come from the time on machines
    machine = sorted(run.wall - run.waited + start for run in runs)
    mixture = risk.mixture
    rate = 3600 / (sum(z.mean_life_seconds for z in mixture) / len(mixture))
    run = spot.expected_run(prediction.seconds, rate, checkpoint, restart, cap)
    p50, p90 = spot.quantile(walls, 0.5), spot.quantile(walls, 0.9)
    confident = spot.quantile(walls, constraints.confidence)
    mean = sum(walls) / len(walls)  # inf when any sample never finishes
    p_meet = 1.0 if deadline is None else spot.fraction_within(walls, deadline)
    on_machines = sum(machine) / len(machine)  # inf when any sample never finishes
    return Outcome(
        prediction=prediction,
        rule=rule,
        p50_seconds=p50,
        p90_seconds=p90,
        confident_seconds=confident,
        expected_seconds=mean,
        p_meet=min(p_meet, 1 - 1 / (2 * len(walls))),  # a sample cannot show certainty
        interruptions_per_hour=risk.interruptions_per_hour,
        expected_preemptions=sum(r.preemptions for r in runs) / len(runs),
        expected_wait_seconds=sum(r.waited for r in runs) / len(runs),
        training_seconds=(prediction.seconds + start, prediction.quantile(0.9) + start),
        machine_seconds=(spot.quantile(machine, 0.5), spot.quantile(machine, 0.9)),
        expected_delay_seconds=delay(on_machines, prediction, start, len(runs)),
        spot_risk=risk,
        checkpoint_interval_seconds=(
            run.interval_seconds if math.isfinite(run.interval_seconds) else None
        ),
        cap_restarts=run.cap_restarts,
        checkpoint_seconds=checkpoint,
        restart_seconds=restart,
        billed_hours=billed_hours(
            rule,
            spot.quantile(machine, 0.5),
            spot.quantile(machine, 0.9),
            spot.quantile(machine, constraints.confidence),
            sum(machine) / len(machine),
        ),
        **overheads.said(),
    )


def delay(on_machines: float, prediction: Prediction, start: float, samples: int) -> float:
    """What preemptions, restarts and checkpoints add on average to ``samples`` stratified runs
    whose mean time on machines is ``on_machines`` (inf: some never finish)."""
    training = spot.mean_work(prediction.seconds, prediction.log_sigma, samples) + start
    return max(0.0, on_machines - training)


def restart_seconds(assumptions: Assumptions, staged: float = 0.0) -> float:
    """One restart after a preemption, once a machine is had: boot it, set it up and stage the
    data again (``staged`` seconds: a new machine has neither), start the training again and
    restore the last checkpoint (read back at the speed it was written)."""
    return (
        assumptions.reacquire_seconds
        + staged
        + assumptions.startup_seconds
        + assumptions.checkpoint_seconds
    )


def billed_hours(
    rule: BillingRule, p50: float, p90: float, confident: float, mean: float
) -> tuple[float, float, float, float]:
    """Billed hours at p50, p90, the confidence quantile and the mean (inf stays inf)."""

    def hours(seconds: float) -> float:
        return billed_seconds(seconds, rule) / 3600 if math.isfinite(seconds) else math.inf

    return hours(p50), hours(p90), hours(confident), hours(mean)
