"""Spot with an on-demand fallback that keeps the deadline: the Uniform Progress policy.

Wu et al., NSDI 2024 (docs/SOURCES.md, "Spot risk"). Inputs: the job's work ``C``, the deadline
``D``, the restart overhead ``d``. The policy keeps the work done at or above the line ``t * C / D``:

- ahead of the line: spot when a spot machine can be had, else wait (pay nothing);
- behind it: spot when one can be had, else on-demand;
- on on-demand, go back to spot only when spot is there and the line is ``2 d`` of time behind
  (ahead by ``2 d C / D`` of work);
- safety net: waiting or on on-demand, once the work left plus ``2 d`` reaches the time left,
  on-demand to the end; on spot, the run leaves spot (saving first) once the work left, plus the
  unsaved work, plus ``d`` reaches the time left, since a preemption here loses the work since the
  last checkpoint. The crossings are exact: a run steps to the moment it crosses the line or its net.

advisor plans with a high quantile of the predicted time as ``C`` (the user's confidence
quantile, p90 by default): the prediction's uncertainty is the slack. A job that has done its
planned work and is not finished goes on-demand to the end. On-demand is assumed always there.

The simulation walks a spot process (``SpotProcess``) from event to event, at most ``dt`` apart:
a preemption loses the work since the last checkpoint (every ``tau`` of work, Young's interval);
leaving spot by choice saves a checkpoint first; every start of a machine costs ``d`` seconds
without progress, billed. Checkpoint writes themselves are not counted (seconds in hours)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Protocol

from advisor.recommend import spot
from advisor.recommend.deadline import describe_seconds
from advisor.recommend.outcome import delay
from advisor.recommend.recommendation import Assumptions, Constraints, FallbackPlan, Outcome
from pricing.offers import Rentable
from pricing.spot_risk import SpotRisk

SAMPLES = 128
"""Monte Carlo samples per fallback plan (stratified over the training time's quantiles)."""
STEPS = 400
"""Decisions at least every deadline / STEPS seconds (and at every change of spot capacity)."""

NET_ROUNDING = 1e-3
"""Seconds within which a safety net counts as reached: a run steps exactly to it, and the sum
that finds the moment rounds otherwise than the test that reads it."""

SPOT, ON_DEMAND, IDLE = "spot", "on_demand", "idle"
POLICIES = ("uniform_progress", "spot_only", "on_demand_only")


class SpotProcess(Protocol):
    """Whether a spot machine can be had, over time."""

    def at(self, t: float) -> tuple[bool, float]:
        """(available at ``t``, when that changes next); ``t`` never decreases between calls."""
        ...


class FittedSpells:
    """Alternating fitted spells of one zone or region, available with its availability at 0:
    the spells of one Monte Carlo sample (``spot.Spells``, drawn once and shared). A move to
    another zone of the region is a down spell of ``spot.MOVE_SECONDS``: the run steps to every
    change, so it sees the preemption and pays a restart."""

    def __init__(self, sample: spot.Spells) -> None:
        self.available = sample.available
        self._lengths = iter(sample)
        self.until = next(self._lengths)  # what is left of the spell found under way at time 0

    def at(self, t: float) -> tuple[bool, float]:
        while self.until <= t:
            self.available = not self.available
            self.until += next(self._lengths)
        return self.available, self.until


@dataclass(frozen=True)
class Run:
    """One simulated run under a policy."""

    wall: float
    spot_seconds: float
    """Seconds billed on spot machines."""
    on_demand_seconds: float
    preemptions: int

    def cost(self, spot_price: float, on_demand_price: float) -> float:
        return (self.spot_seconds * spot_price + self.on_demand_seconds * on_demand_price) / 3600


def run(
    work: float,
    plan: float,
    deadline: float,
    restart: float,
    tau: float,
    process: SpotProcess,
    policy: str = "uniform_progress",
) -> Run:
    """``work`` seconds of training under ``policy`` (``plan``: the work it plans for).

    A recommendation runs this loop some 50,000 times: comparisons stand in for ``min`` and
    ``max`` and two sums for a dict of bills (a third off its time, the same numbers)."""
    dt = deadline / STEPS
    t = done = since_save = overhead = on_spot = on_demand = 0.0
    mode, last_resort, preemptions = IDLE, policy == "on_demand_only", 0
    while t < 20 * deadline + work:
        available, change = process.at(t)
        if mode == SPOT and not available:  # preempted: back to the last checkpoint
            done -= since_save
            since_save, mode, preemptions = 0.0, IDLE, preemptions + 1
        if policy == "uniform_progress" and not last_resort:
            at_risk = since_save + restart if mode == SPOT else 2 * restart
            last_resort = done >= plan or plan - done + at_risk >= deadline - t - NET_ROUNDING
        lead = done - t * plan / deadline
        want = _decide(policy, last_resort, mode, available, lead, 2 * restart * plan / deadline)
        if want != mode:
            since_save = 0.0 if mode == SPOT else since_save  # leaving by choice: save first
            mode, overhead = want, (restart if want != IDLE else 0.0)
        step = dt if dt <= change - t else change - t
        if policy == "uniform_progress" and not last_resort and mode != ON_DEMAND:
            # step exactly to where the line or the safety net is reached: waiting changes
            # nothing but the clock; on spot the work left plus the unsaved work is constant
            crossings: tuple[float, ...]
            if mode == IDLE:
                crossings = (done * deadline / plan, deadline - (plan - done + 2 * restart))
            else:
                crossings = (deadline - (plan - done + since_save + restart),)
            for when in crossings:
                if when > t and when - t < step:
                    step = when - t
        step = step if step > 1e-6 else 1e-6
        if mode != IDLE:
            paid = overhead if overhead < step else step  # starting the machine: no progress
            progress = step - paid
            finished = done + progress >= work  # inside this step
            used = paid + work - done if finished else step
            if mode == SPOT:
                on_spot += used
            else:
                on_demand += used
            if finished:
                return Run(t + used, on_spot, on_demand, preemptions)
            overhead -= paid
            done += progress
            if mode == SPOT:  # (x % inf == x: without checkpoints all of it is at stake)
                since_save = (since_save + progress) % tau
        t += step
    return Run(math.inf, on_spot, on_demand, preemptions)


def _decide(
    policy: str, last_resort: bool, mode: str, available: bool, lead: float, back: float
) -> str:
    """The machine to be on now (``lead``: work done minus the line ``t C / D``; ``back``: the
    lead at which on-demand is left for spot)."""
    if policy == "spot_only":
        return SPOT if available else IDLE
    if last_resort:
        return ON_DEMAND
    if mode == ON_DEMAND:
        return SPOT if available and lead >= back else ON_DEMAND
    if available:
        return SPOT
    return IDLE if lead >= 0 else ON_DEMAND


@dataclass(frozen=True)
class Simulated:
    """Sorted per-sample results of one plan."""

    walls: list[float]
    costs: list[float]
    on_demand_share: float
    """Expected share of the billed machine time that is on-demand."""
    preemptions: float
    """Expected preemptions of a run."""
    machines: list[float]
    """Seconds on machines (spot and on-demand) of each run, sorted."""
    waited: float
    """Expected seconds of a run on no machine: waiting for spot capacity (inf: some never
    finish)."""


def simulate(
    median: float,
    log_sigma: float,
    plan: float,
    deadline: float,
    restart: float,
    checkpoint: float,
    risk: SpotRisk,
    prices: tuple[float, float],
    samples: int = SAMPLES,
) -> Simulated:
    """The plan over the log-normal training time (stratified) and the family's mixture
    (``risk.mixture``: sample i in member i mod members, regions or zones), fixed seed: the same
    inputs, the same answer."""
    z = spot.strata(samples)
    table = spot.spells(risk.mixture, samples)
    taus = [spot.young_interval(checkpoint, 3600 / z.mean_life_seconds) for z in risk.mixture]
    runs = []
    for i in range(samples):
        work = median * math.exp(z[i] * log_sigma)
        process = FittedSpells(table[i])
        runs.append(run(work, plan, deadline, restart, taus[i % len(taus)], process))
    machine = [r.spot_seconds + r.on_demand_seconds for r in runs]
    share = sum(r.on_demand_seconds for r in runs) / max(sum(machine), 1e-9)
    return Simulated(
        walls=sorted(r.wall for r in runs),
        costs=sorted(r.cost(*prices) for r in runs),
        on_demand_share=share,
        preemptions=sum(r.preemptions for r in runs) / samples,
        machines=sorted(machine),
        waited=sum(r.wall - m for r, m in zip(runs, machine, strict=True)) / samples,
    )


def switch_rule(plan: float, deadline: float, restart: float, tau: float) -> str:
    """The policy in words, with this run's numbers."""
    share = plan / deadline
    saved = f"the work since the last checkpoint (at most {describe_seconds(tau)})"
    unsaved = saved if math.isfinite(tau) else "all the work done on it"
    return (
        f"keep the work done at or above {share:.0%} of the time elapsed (plan: "
        f"{describe_seconds(plan)} of work in {describe_seconds(deadline)}); ahead: spot, or wait when "
        f"none can be had; behind: spot, else on-demand; leave on-demand only when "
        f"{describe_seconds(2 * restart)} ahead of that; on-demand to the end once the work left "
        f"plus {describe_seconds(2 * restart)} reaches the time left, or, on spot, the work left plus "
        f"{unsaved} plus {describe_seconds(restart)}"
    )


PLAN_QUANTILE = 0.9
"""The plan's work: at least the p90 of the predicted time (the user's confidence if higher)."""


def plan_outcome(
    spot_outcome: Outcome,
    spot_offer: Rentable,
    on_demand: Rentable,
    constraints: Constraints,
    assumptions: Assumptions,
) -> Outcome | None:
    """The fallback plan for a spot offering and its on-demand twin (None without a deadline or a
    measured spot risk: the plan needs both)."""
    deadline, risk = constraints.deadline_seconds, spot_outcome.spot_risk
    if deadline is None or risk is None:
        return None
    prediction = spot_outcome.prediction
    plan = prediction.quantile(max(PLAN_QUANTILE, constraints.confidence))
    restart = spot_outcome.restart_seconds
    sim = simulate(
        prediction.seconds,
        prediction.log_sigma,
        plan,
        deadline,
        restart,
        assumptions.checkpoint_seconds,
        risk,
        (spot_offer.usd_per_hour, on_demand.usd_per_hour),
    )
    walls, costs, q = sim.walls, sim.costs, constraints.confidence
    mean_cost = sum(costs) / len(costs)
    price = spot_offer.usd_per_hour
    p_meet = spot.fraction_within(walls, deadline)
    return replace(
        spot_outcome,
        p50_seconds=spot.quantile(walls, 0.5),
        p90_seconds=spot.quantile(walls, 0.9),
        confident_seconds=spot.quantile(walls, q),
        expected_seconds=sum(walls) / len(walls),
        p_meet=min(p_meet, 1 - 1 / (2 * len(walls))),
        expected_preemptions=sim.preemptions,
        expected_wait_seconds=sim.waited,
        machine_seconds=(spot.quantile(sim.machines, 0.5), spot.quantile(sim.machines, 0.9)),
        expected_delay_seconds=delay(
            sum(sim.machines) / len(sim.machines),
            prediction,
            assumptions.startup_seconds,
            len(sim.machines),
        ),
        billed_hours=(
            spot.quantile(costs, 0.5) / price,
            spot.quantile(costs, 0.9) / price,
            spot.quantile(costs, q) / price,
            mean_cost / price,
        ),
        fallback=FallbackPlan(
            on_demand=on_demand,
            plan_seconds=plan,
            restart_seconds=restart,
            on_demand_share=sim.on_demand_share,
            switch_rule=switch_rule(plan, deadline, restart, spot_outcome_tau(spot_outcome)),
        ),
    )


def spot_outcome_tau(result: Outcome) -> float:
    """The checkpoint interval of the spot run (inf: none)."""
    interval = result.checkpoint_interval_seconds
    return interval if interval else math.inf
