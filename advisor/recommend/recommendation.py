"""The recommender's records: what the user asked for, and what it found."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from advisor.errors import UsageError
from advisor.estimate.prediction import Prediction
from pricing.offers import BillingRule, Rentable
from pricing.spot_risk import SpotRisk

OBJECTIVES = ("cheapest", "fastest")
TIE_CHANCE = 0.2
"""An option with at least this chance of being really cheaper than #1 is a tie (one in five)."""


MAX_NODES = 32
"""The most machines an option composes: 256 GPUs of eight-GPU machines."""


@dataclass(frozen=True)
class Constraints:
    """The user's deadline, budget and objective."""

    objective: str = "cheapest"
    """``cheapest`` (that meets the deadline) or ``fastest`` (within the budget)."""
    deadline_seconds: float | None = None
    budget_usd: float | None = None
    confidence: float = 0.9
    """An option meets the deadline when it finishes by then with at least this probability."""
    top: int = 10
    max_nodes: int = 32
    """Most machines one option may rent together (1: one machine; clusters are composed of
    machines with a published network between them, ``advisor.recommend.clusters``)."""
    wait_usd_per_hour: float = 1.0
    """What an hour of waiting is worth to the user, for the cheapest objective: a spot
    option's expected wait for capacity and the time its interruptions add are charged at it
    beside its expected cost, so cents are not traded for hours (0: waits are free)."""

    def __post_init__(self) -> None:
        """Every door (command line, app, service) gets the same one-line refusal of a number
        that is not finite or not in range."""
        checks = (
            ("deadline", self.deadline_seconds, 0.0, 366 * 86_400.0),
            ("budget", self.budget_usd, 0.0, 1e9),
        )
        if not (math.isfinite(self.wait_usd_per_hour) and 0 <= self.wait_usd_per_hour <= 1e6):
            raise UsageError(
                f"an hour of waiting must be worth 0 to 1000000 USD, not {self.wait_usd_per_hour!r}"
            )
        for what, value, low, high in checks:
            if value is not None and not (math.isfinite(value) and low < value <= high):
                raise UsageError(f"{what} must be a number in ({low:g}, {high:g}], not {value!r}")
        if not (math.isfinite(self.confidence) and 0 < self.confidence < 1):
            raise UsageError(f"confidence must be between 0 and 1, not {self.confidence!r}")
        if not 1 <= self.top <= 100_000:
            raise UsageError(f"top must be between 1 and 100000, not {self.top!r}")
        if not 1 <= self.max_nodes <= MAX_NODES:
            raise UsageError(f"max nodes must be between 1 and {MAX_NODES}, not {self.max_nodes!r}")


@dataclass(frozen=True)
class Assumptions:
    """Costs of a run that the price database does not hold."""

    startup_seconds: float = 0.0
    """Paid once at the start of every run (build, tracing, warm-up; from the probe)."""
    checkpoint_seconds: float = 5.0
    """Time to save one checkpoint (``spot.checkpoint_seconds`` from the model size)."""
    reacquire_seconds: float = 180.0
    """Time to get a replacement machine after a preemption (``spot.REACQUIRE_SECONDS``)."""
    booting: bool = False
    """Each machine's own start before the run (``advisor.recommend.boot``), billed, is added:
    what a recommendation assumes; off, the run starts on a machine already up."""
    setting_up: bool = False
    """Pulling the image and installing the job's packages (``advisor.recommend.staging``),
    billed, is added: what a recommendation assumes; off, the machine is ready to train."""
    data_bytes: float = 0.0
    """The data set each machine downloads before training (``--data``), billed; 0: none."""
    data_from: str | None = None
    """The provider whose object store holds the data set (``--data-from``): a machine of
    another provider pays its internet egress; None: each machine's own provider and region."""
    checkpoints: int = 0
    """Epochs, whose ends an uninterrupted run saves a checkpoint at (``ranker.checkpoints_of``),
    each taking ``checkpoint_seconds``, billed; a spot run saves at its own interval instead
    (``spot``), and its final checkpoint; 0: no checkpoint at all."""


PRICINGS = ("on_demand", "spot", "spot_fallback")
"""Ways to pay: on-demand, spot, and spot with an on-demand fallback under the deadline."""


@dataclass(frozen=True)
class FallbackPlan:
    """Spot with an on-demand fallback (``advisor.recommend.fallback``): what the plan is."""

    on_demand: Rentable
    """The on-demand twin it falls back to (same provider, machine and count)."""
    plan_seconds: float
    """The work it plans for: a high quantile of the predicted time, not the median."""
    restart_seconds: float
    on_demand_share: float
    """Expected share of the billed machine time on on-demand."""
    switch_rule: str
    """The policy in words, with this run's numbers."""


@dataclass(frozen=True)
class Outcome:
    """Time of one run on one kind of machine under one pricing model (shared by every offering
    with the same device, pricing, preemption rate and billing rule)."""

    prediction: Prediction
    rule: BillingRule
    p50_seconds: float
    p90_seconds: float
    confident_seconds: float
    """Wall time at the user's confidence quantile (what a deadline or budget must allow)."""
    expected_seconds: float
    """Mean wall time (preemptions included)."""
    p_meet: float
    """Probability of finishing by the deadline (1.0 without a deadline)."""
    interruptions_per_hour: float = 0.0
    expected_preemptions: float = 0.0
    checkpoint_interval_seconds: float | None = None
    cap_restarts: int = 0
    checkpoint_seconds: float = 0.0
    """Cost of one checkpoint assumed for a spot run (0 on demand)."""
    restart_seconds: float = 0.0
    """Cost of one restart after a preemption once a machine is had: boot, start-up, checkpoint
    restore (0 on demand)."""
    expected_wait_seconds: float = 0.0
    """Mean time spent waiting for a spot machine to be had (at the start, after preemptions):
    part of the wall time, never billed."""
    training_seconds: tuple[float, float] = (0.0, 0.0)
    """p50 and p90 of the training alone, start-up included: the run on a machine that is never
    taken back (on-demand: the wall time)."""
    machine_seconds: tuple[float, float] = (0.0, 0.0)
    """p50 and p90 of the time on machines: the training plus what preemptions add (work lost
    since the last checkpoint, restarts, checkpoints), without the waits for capacity. What is
    billed (before the billing rule's rounding); on-demand: the wall time."""
    expected_delay_seconds: float = 0.0
    """Mean time that preemptions, restarts and checkpoints add to the training on machines
    (billed; 0 on demand). With ``expected_wait_seconds`` it makes a spot run's wall time."""
    boot_seconds: float = 0.0
    """The machine's own start before the run's (``advisor.recommend.boot``): billed, and part
    of ``training_seconds``."""
    setup_seconds: float = 0.0
    """Pulling the image and installing packages (``advisor.recommend.staging``): billed, and
    part of ``training_seconds``; paid again after each preemption."""
    staging_seconds: float = 0.0
    """Downloading the data set (``--data``): billed, part of ``training_seconds``; paid again
    after each preemption."""
    data_bytes: float = 0.0
    """The data set ``staging_seconds`` downloads."""
    data_from: str | None = None
    """The provider whose object store the data set comes from (None: the machine's own)."""
    egress_usd: float = 0.0
    """What the data set's provider charges to send it to this run's machines (every node),
    added to each of the option's costs."""
    checkpoints: int = 0
    """How many checkpoints ``checkpointing_seconds`` saves."""
    checkpointing_seconds: float = 0.0
    """The checkpoints saved besides a spot run's simulated ones (``ranker.checkpoints_of``): an
    uninterrupted run's at each epoch's end, a spot run's final one; billed, part of
    ``training_seconds``."""
    spot_risk: SpotRisk | None = None
    """The measured spot risk the run was simulated under (None on demand)."""
    fallback: FallbackPlan | None = None
    """Set for spot with an on-demand fallback; its ``billed_hours`` are then its costs divided
    by the spot price (so price x billed hours is the plan's cost, as for the other kinds)."""
    billed_hours: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    """Billed hours at p50, p90, the confidence quantile and the mean."""


@dataclass(frozen=True)
class Option:
    """One offering, costed."""

    rentable: Rentable
    outcome: Outcome
    cost_usd: float
    """Cost at the p50 wall time (billing rounding applied)."""
    cost_usd_p90: float
    confident_cost_usd: float
    """Cost at the confidence quantile: what a budget must cover."""
    expected_cost_usd: float
    """Cost at the mean wall time."""
    meets_deadline: bool
    within_budget: bool
    rank: int = 0
    why: str = ""
    p_cheaper: float | None = None
    """Chance this option is really cheaper than #1 (``ties``; None for #1 and where not
    compared: an infeasible option, or the objective is speed)."""
    stake_usd: float = 0.0
    """Expected overpay of keeping #1 when this one is cheaper: what settling the tie is worth."""

    @property
    def tie(self) -> bool:
        """Within the uncertainty of #1: a real chance (``ties.TIE``) of being cheaper."""
        return self.p_cheaper is not None and self.p_cheaper >= TIE_CHANCE

    @property
    def feasible(self) -> bool:
        return self.meets_deadline and self.within_budget


@dataclass(frozen=True)
class Recommendation:
    """Ranked options and everything needed to explain them."""

    workload: str
    constraints: Constraints
    options: tuple[Option, ...]
    """Best first: feasible options by the objective, then the rest by chance of success."""
    fastest: Option | None
    cheapest_on_demand: Option | None
    pareto: tuple[Option, ...]
    """Cost/time frontier: no other option is both cheaper and faster (fastest first)."""
    considered: int
    feasible_count: int
    feasible_deadline_seconds: float | None = None
    """When nothing is feasible: the shortest deadline some option within budget would meet."""
    feasible_budget_usd: float | None = None
    """When nothing is feasible: the smallest budget some option meeting the deadline needs."""
    excluded: dict[str, int] = field(default_factory=dict)
    """Offerings left out, by reason."""
    context: tuple[str, ...] = ()
    """Lines about the measurement the predictions start from (for ``--explain``)."""
    here_seconds: float | None = None
    """The whole training on this machine, as its own probe predicts it (None: the probe was
    taken elsewhere, or there is none): free, beside every option."""

    @property
    def feasible(self) -> bool:
        return self.feasible_count > 0

    @property
    def best(self) -> Option | None:
        return self.options[0] if self.options and self.options[0].feasible else None
