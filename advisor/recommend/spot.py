"""Spot and preemptible machines: how long a run takes when the provider takes the machine back.

Model (written down so it can be checked):

- Preemptions arrive as a Poisson process at ``rate`` per hour of running (from the price
  database: AWS Spot Advisor where published, else the provider's stated default).
- The run saves a checkpoint every ``tau`` seconds of work; a checkpoint costs ``C`` seconds.
  ``tau`` is Young's optimum, ``sqrt(2 C / rate)`` (J. W. Young, "A first order approximation to
  the optimum checkpoint interval", CACM 17(9), 1974; J. T. Daly, "A higher order estimate of
  the optimum checkpoint interval for restart dumps", FGCS 22(3), 2006).
- A preemption loses the work since the last checkpoint and costs ``R`` seconds to get a new
  machine and start again (VM re-acquisition plus the probe's measured start-up).
- A cap on a machine's lifetime (GCP preemptible: 24 h) forces a restart even at rate 0; the stop
  is known in advance, so a checkpoint is saved just before it and no work is lost.

Expected wall time, Daly's exact formula for exponential failures with mean time between them
``M = 1 / rate``: ``E = M exp(R / M) (exp((tau + C) / M) - 1) T / tau`` (Daly 2006; when
``tau >= T`` the run is one segment of length ``T`` without checkpoints). The spread (p50, p90,
the chance of meeting a deadline) comes from a Monte Carlo simulation of the same process with a
FIXED seed, over the prediction's log-normal training time: the same inputs, the same answer.
A run expected to take more than ``HOPELESS`` times its work is called endless and not simulated.
"""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass
from statistics import NormalDist

SEED = 20_061_974
"""Fixed seed of the simulation (reproducible recommendations)."""
SAMPLES = 256
"""Monte Carlo samples per distinct (device, rate, cap): resolution 0.4% in probability. The
training time is stratified over the log-normal's quantiles; preemptions are random."""
HOPELESS = 100.0
"""Expected wall over work beyond which a spot run is treated as never finishing."""
MAX_RESTARTS = 10_000
"""A run needing more restarts than this is called endless (preempted faster than it saves)."""

REACQUIRE_SECONDS = 180.0
"""Assumed time to get a replacement VM and boot it after a preemption (3 min; an assumption, no
published figure: SkyPilot's managed jobs relaunch in minutes). Added to the probe's start-up."""
CHECKPOINT_BANDWIDTH = 100e6
"""Assumed write speed of a checkpoint to persistent storage, bytes/s (conservative for a cloud
persistent disk or a bucket upload from one VM)."""
CHECKPOINT_FIXED_SECONDS = 2.0
"""Assumed fixed cost of a checkpoint beyond the bytes (pausing, file creation, fsync)."""
OPTIMIZER_SLOTS = {"adam": 2, "rmsprop": 1, "momentum": 1, "adadelta": 2, "sgd": 0}
"""Extra float32 values per weight the optimizer keeps (saved with the weights)."""


def checkpoint_seconds(parameters: int, optimizer: str = "adam") -> float:
    """Seconds to save weights and optimizer state of a float32 model with ``parameters``."""
    slots = OPTIMIZER_SLOTS.get(optimizer.lower(), 2)
    size = parameters * 4 * (1 + slots)
    return CHECKPOINT_FIXED_SECONDS + size / CHECKPOINT_BANDWIDTH


def young_interval(checkpoint: float, rate_per_hour: float) -> float:
    """Young's optimal seconds of work between checkpoints, ``sqrt(2 C / rate)``; inf at rate 0."""
    if rate_per_hour <= 0:
        return math.inf
    return math.sqrt(2 * checkpoint / (rate_per_hour / 3600))


@dataclass(frozen=True)
class SpotRun:
    """The expected course of one run on a machine that can be taken back."""

    work_seconds: float
    """Training time without interruptions."""
    expected_seconds: float
    """Expected wall time with checkpoints, preemptions, restarts (inf: never finishes)."""
    interval_seconds: float
    """Work between checkpoints (inf: no periodic checkpoint)."""
    expected_preemptions: float
    cap_restarts: int
    """Forced restarts because the machine's lifetime is capped."""


def expected_run(
    work: float,
    rate_per_hour: float,
    checkpoint: float,
    restart: float,
    cap_seconds: float | None = None,
) -> SpotRun:
    """The expected wall time of ``work`` seconds of training (Daly's formula, module docstring)."""
    rate = rate_per_hour / 3600
    tau = young_interval(checkpoint, rate_per_hour)
    if rate <= 0:
        expected = work
    else:
        segment = tau + checkpoint if tau < work else work
        segments = work / tau if tau < work else 1.0
        exponent = (segment + restart) * rate
        expected = (
            math.inf if exponent > 700 else math.exp(restart * rate) * math.expm1(segment * rate)
        )
        expected *= segments / rate
    restarts = 0
    if cap_seconds is not None and math.isfinite(expected) and expected > cap_seconds:
        restarts = math.ceil(expected / cap_seconds) - 1
        expected += restarts * (restart + checkpoint)
    interval = tau if tau < work else math.inf
    return SpotRun(work, expected, interval, rate * expected, restarts)


def simulate_wall(
    work: float,
    rate_per_hour: float,
    checkpoint: float,
    restart: float,
    cap_seconds: float | None,
    draws: list[float],
    stream: int = 0,
) -> float:
    """One simulated wall time of ``work`` seconds of training under preemptions and a cap.

    ``draws`` are standard exponential variates: the i-th time to preemption is
    ``draws[i] / rate``. A run that needs more extends them from its own ``stream`` (the sample's
    number), deterministically.
    """
    rate = rate_per_hour / 3600
    tau = young_interval(checkpoint, rate_per_hour)
    if tau >= work:
        tau = math.inf
    segment = tau + checkpoint
    lease = cap_seconds if cap_seconds is not None else math.inf
    remaining, wall = work, 0.0
    for i in range(MAX_RESTARTS):
        saves = math.ceil(remaining / tau) - 1 if tau < math.inf else 0
        finish = remaining + saves * checkpoint
        if i >= len(draws):
            more = random.Random(f"{SEED}:{stream}:{len(draws)}")
            draws.extend(more.expovariate(1.0) for _ in range(16))
        up = draws[i] / rate if rate > 0 else math.inf
        if finish <= up and finish <= lease:
            return wall + finish
        if up < lease:  # preempted: keep the work up to the last checkpoint
            done = math.floor(up / segment) * tau if tau < math.inf else 0.0
            wall += up + restart
        else:  # the lifetime cap: save just before the stop
            done = lease * tau / segment if tau < math.inf else lease - checkpoint
            wall += lease + restart
        remaining -= done
    return math.inf  # preempted faster than it can progress


def _common_draws(samples: int) -> list[tuple[float, list[float]]]:
    """Per sample: a stratified standard normal and standard exponential variates (fixed seed,
    shared by every simulation: common random numbers make options comparable)."""
    if samples not in _DRAWS:
        rng = random.Random(SEED)
        normal = NormalDist()
        _DRAWS[samples] = [
            (normal.inv_cdf((i + 0.5) / samples), [rng.expovariate(1.0) for _ in range(4)])
            for i in range(samples)
        ]
    return _DRAWS[samples]


_DRAWS: dict[int, list[tuple[float, list[float]]]] = {}


def simulate(
    median: float,
    log_sigma: float,
    rate_per_hour: float,
    checkpoint: float,
    restart: float,
    cap_seconds: float | None,
    samples: int = SAMPLES,
) -> list[float]:
    """Sorted simulated wall times over a log-normal training time (fixed seed)."""
    worst = median * math.exp(3 * log_sigma)
    if expected_run(worst, rate_per_hour, checkpoint, restart).expected_seconds > HOPELESS * worst:
        return [math.inf] * samples
    walls = [
        simulate_wall(
            median * math.exp(z * log_sigma),
            rate_per_hour,
            checkpoint,
            restart,
            cap_seconds,
            draws,
            stream,
        )
        for stream, (z, draws) in enumerate(_common_draws(samples))
    ]
    walls.sort()
    return walls


def quantile(sorted_values: list[float], q: float) -> float:
    """The ``q`` quantile of sorted samples (nearest rank, rounded up: conservative)."""
    index = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[index]


def fraction_within(sorted_values: list[float], limit: float) -> float:
    """Share of sorted samples at or below ``limit``."""
    return bisect.bisect_right(sorted_values, limit) / len(sorted_values)
