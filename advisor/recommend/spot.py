"""Spot and preemptible machines: how long a run takes when the provider takes the machine back.

Model (written down so it can be checked):

- Spot risk is measured (``pricing.spot_risk``: public traces per provider and accelerator, else a
  stated conservative default). A spot machine can be had at the start with the trace's
  availability and lives what is left of a life found under way; every later machine lives a fresh
  lifetime from a mixture of two exponentials (``pricing.spot_risk.Lifetimes``); after a
  preemption the run waits a Weibull spell of unavailability. The trace family is an equal mixture
  of its regions for an offering without a zone (a run that fails over between the region's
  zones), of its zones for one pinned to a zone (``SpotRisk.mixture``); in a region a preemption
  finds another zone at once with the region's ``move_share``: a new start after ``MOVE_SECONDS``.
- The run saves a checkpoint every ``tau`` seconds of work at a cost of ``C`` seconds; ``tau`` is
  Young's optimum, ``sqrt(2 C / rate)``. A preemption loses the work since the last checkpoint
  and costs ``R`` seconds to get a new machine and start again (VM re-acquisition plus the
  probe's measured start-up).
- A cap on a machine's lifetime (GCP preemptible: 24 h) forces a restart even at rate 0; the stop
  is known in advance, so a checkpoint is saved just before it and no work is lost.

The wall time's distribution (p50, p90, mean, P(deadline), expected interruptions) comes from a
Monte Carlo simulation of that process with a FIXED seed, over the prediction's log-normal
training time: the same inputs, the same answer. Runs whose expected time by Daly's formula for
exponential failures, at the shortest mean lifetime of the family's zones, exceeds ``HOPELESS``
times their work are called endless and not simulated (the formulas and their citations:
docs/SOURCES.md, "Spot risk")."""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from statistics import NormalDist
from typing import NamedTuple

from advisor.estimate.steps import optimizer_slots
from pricing.spot_risk import Lifetimes, SpotRisk, ZoneRisk

SEED = 20_061_974
"""Fixed seed of the simulation (reproducible recommendations)."""
SAMPLES = 256
"""Monte Carlo samples per distinct (device, spot family, cap): resolution 0.4% in probability.
The training time is stratified over the log-normal's quantiles; preemptions are random."""
HOPELESS = 100.0
"""Expected wall over work beyond which a spot run is treated as never finishing."""
MAX_RESTARTS = 10_000
"""A run needing more restarts than this is called endless (preempted faster than it saves)."""

MOVE_SECONDS = 1.0
"""The down spell of a move (a preemption after which another zone of the region has capacity at
once): the new start's cost is the restart cost every preemption already pays, so the spell stands
only for "no wait". Not zero: ``fallback.FittedSpells.at`` passes zero-length spells in one call,
while the run steps exactly to every change and so sees a 1 s spell as a preemption."""
REACQUIRE_SECONDS = 180.0
"""Assumed time to get a replacement VM and boot it after a preemption (3 min; an assumption, no
published figure: SkyPilot's managed jobs relaunch in minutes). Added to the probe's start-up."""
CHECKPOINT_BANDWIDTH = 100e6
"""Assumed write speed of a checkpoint to persistent storage, bytes/s (conservative for a cloud
persistent disk or a bucket upload from one VM)."""
CHECKPOINT_FIXED_SECONDS = 2.0
"""Assumed fixed cost of a checkpoint beyond the bytes (pausing, file creation, fsync)."""


def checkpoint_seconds(parameters: int, optimizer: str = "adam") -> float:
    """Seconds to save weights and optimizer state of a float32 model with ``parameters``."""
    slots = optimizer_slots(optimizer)  # saved with the weights
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


def weibull(rng: random.Random, shape: float, scale: float) -> float:
    """One Weibull variate (``scale`` may be inf: never)."""
    if not math.isfinite(scale):
        return math.inf
    return scale * (-math.log(1.0 - rng.random())) ** (1 / shape)


def lifetime(rng: random.Random, lives: Lifetimes, found: bool = False) -> float:
    """One machine's life in seconds: a phase drawn by its share, then an exponential of the
    phase's mean; ``found``: what is left of the life of a machine found running at a random moment
    (the phase drawn by ``Lifetimes.found_short_share``; the rest is memoryless). One uniform
    variate: where it falls in the phase's slice gives the exponential."""
    share = lives.found_short_share if found else lives.short_share
    u = rng.random()
    if u < share:
        mean, rest = lives.short_seconds, (share - u) / share
    else:
        mean, rest = lives.long_seconds, (1 - u) / (1 - share)
    return -mean * math.log(rest) if math.isfinite(mean) else math.inf


def residual(rng: random.Random, shape: float, scale: float) -> float:
    """What is left of a Weibull spell found under way at a random moment (the stationary
    residual: a length-biased spell, ``scale * Gamma(1 + 1/shape) ** (1/shape)``, cut at a
    uniform point): the wait of a run that starts without capacity. Heavy tails make it longer
    than a fresh spell: a moment drawn at random tends to sit in a long spell."""
    if not math.isfinite(scale):
        return math.inf
    biased = scale * rng.gammavariate(1 + 1 / shape, 1.0) ** (1 / shape)
    return rng.random() * biased


def wait_after_preemption(rng: random.Random, zone: ZoneRisk) -> float:
    """The down spell after a preemption: a move (``MOVE_SECONDS``) with the zone's
    ``move_share``, else a Weibull wait. A zone without moves draws no extra number: its spells
    are the ones it drew before regions had moves."""
    if zone.move_share > 0 and rng.random() < zone.move_share:
        return MOVE_SECONDS
    return weibull(rng, zone.down_shape, zone.down_scale_seconds)


class Sim(NamedTuple):
    wall: float
    preemptions: int
    waited: float
    """Seconds spent waiting for a spot machine to be had (at the start and after preemptions)."""


def simulate_wall(
    work: float,
    zone: ZoneRisk,
    checkpoint: float,
    restart: float,
    cap_seconds: float | None,
    rng: random.Random,
) -> Sim:
    """One simulated run of ``work`` seconds of training on spot machines of one ``zone``.

    At the start a machine is there with the zone's availability and lives what is left of its
    life (``lifetime``, found running), else the run waits what is left of a spell of
    unavailability (``residual``); every later machine lives a fresh ``lifetime``; a preemption
    loses the work since the last checkpoint, then the run waits for capacity (a spell of
    unavailability: the trace's preemption is the capacity going away, or a move to another zone
    of the region, ``wait_after_preemption``) and pays ``restart`` (boot, start-up, restore).
    """
    tau = young_interval(checkpoint, 3600 / zone.mean_life_seconds)
    if tau >= work:
        tau = math.inf
    segment = tau + checkpoint
    lease = cap_seconds if cap_seconds is not None else math.inf
    remaining, wall, waited, count = work, 0.0, 0.0, 0
    first = rng.random() < zone.availability  # a machine is there at the start
    if not first:
        waited = residual(rng, zone.down_shape, zone.down_scale_seconds)
        wall += waited
    for _ in range(MAX_RESTARTS):
        saves = math.ceil(remaining / tau) - 1 if tau < math.inf else 0
        finish = remaining + saves * checkpoint
        up, first = lifetime(rng, zone.lifetimes, first), False
        if finish <= up and finish <= lease:
            return Sim(wall + finish, count, waited)
        if up < lease:  # preempted: keep the work up to the last checkpoint
            done = math.floor(up / segment) * tau if tau < math.inf else 0.0
            wait = wait_after_preemption(rng, zone)
            wall += up + wait + restart
            waited += wait
            count += 1
        else:  # the lifetime cap: save just before the stop
            done = lease * tau / segment if tau < math.inf else lease - checkpoint
            wall += lease + restart
        remaining -= done
    return Sim(math.inf, count, waited)  # preempted faster than it can progress


class _Stream(random.Random):
    """Uniform variates of one sample: a cached head drawn once per process, then a generator of
    its own seeded from the same stream. Seeding a generator per sample and option cost more than
    the simulation; the cache keeps the numbers and drops that cost."""

    def __init__(self, stream: int) -> None:  # no super().__init__: random() is ours
        self._stream, self._i = stream, 0
        self._more: random.Random | None = None
        if stream not in _HEADS:
            head = random.Random(f"{SEED}:{stream}")
            _HEADS[stream] = [head.random() for _ in range(HEAD)]
        self._head = _HEADS[stream]

    def random(self) -> float:
        if self._i < len(self._head):
            self._i += 1
            return self._head[self._i - 1]
        if self._more is None:
            self._more = random.Random(f"{SEED}:{self._stream}:more")
        return self._more.random()


HEAD = 48
"""Cached uniform variates per sample (a run with few preemptions needs fewer)."""
_HEADS: dict[int, list[float]] = {}


def sample_rng(stream: int) -> random.Random:
    """The random numbers of Monte Carlo sample ``stream`` (fixed seed; the same for every option:
    common random numbers make options comparable)."""
    return _Stream(stream)


def simulate(
    median: float,
    log_sigma: float,
    risk: SpotRisk,
    checkpoint: float,
    restart: float,
    cap_seconds: float | None,
    samples: int = SAMPLES,
) -> list[Sim]:
    """Simulated runs, sorted by wall time, over a log-normal training time (stratified over its
    quantiles) and the family's mixture (``risk.mixture``, regions or zones, equal weights: sample
    i runs in member i mod members).

    Each sample walks the spells of ``spells(risk.mixture, samples)``, drawn once per process and
    shared by every offer group of the family (``_walk``); the few samples the walk does not
    cover are run by ``simulate_wall`` on the sample's own stream, with the same numbers. Offer
    groups with the same prediction, zones and billing (the same machine in bands of the
    database's interruption rate, say) share one simulation (``_simulated``)."""
    args = (median, log_sigma, risk.mixture, checkpoint, restart, cap_seconds, samples)
    return list(_simulated(*args))


@lru_cache(maxsize=512)  # ~30 kB each: a few recommendations of a few hundred groups
def _simulated(
    median: float,
    log_sigma: float,
    zones: tuple[ZoneRisk, ...],
    checkpoint: float,
    restart: float,
    cap_seconds: float | None,
    samples: int,
) -> tuple[Sim, ...]:
    worst = median * math.exp(3 * log_sigma)
    rate = 3600 / min(z.mean_life_seconds for z in zones)
    if expected_run(worst, rate, checkpoint, restart).expected_seconds > HOPELESS * worst:
        return (Sim(math.inf, 0, 0.0),) * samples
    table = spells(zones, samples)
    taus = [young_interval(checkpoint, 3600 / z.mean_life_seconds) for z in zones]
    lease = cap_seconds if cap_seconds is not None else math.inf
    z = strata(samples)
    runs = []
    for i in range(samples):
        work = median * math.exp(z[i] * log_sigma)
        tau = taus[i % len(taus)]
        walked = _walk(work, table[i], tau, checkpoint, restart, lease)
        if walked is None:
            zone = zones[i % len(zones)]
            walked = simulate_wall(work, zone, checkpoint, restart, cap_seconds, sample_rng(i))
        runs.append(walked)
    runs.sort()
    return tuple(runs)


def _walk(
    work: float, sample: Spells, tau: float, checkpoint: float, restart: float, lease: float
) -> Sim | None:
    """``simulate_wall`` over the sample's kept spells (the same numbers in the same order), or
    None where it would need more than are kept or a machine reaches its lifetime cap (after
    one, ``simulate_wall`` draws a lifetime where the spells hold a wait): ``simulate_wall``
    runs that sample."""
    if tau >= work:
        tau = math.inf
    segment = tau + checkpoint
    remaining, wall, waited, count = work, 0.0, 0.0, 0
    lengths, k = sample.lengths, 0
    if not sample.available:
        waited = lengths[0] if lengths else sample.spell(0)
        wall += waited
        k = 1
    while k + 1 < CACHED_SPELLS:
        saves = math.ceil(remaining / tau) - 1 if tau < math.inf else 0
        finish = remaining + saves * checkpoint
        up = lengths[k] if k < len(lengths) else sample.spell(k)
        if finish <= up and finish <= lease:
            return Sim(wall + finish, count, waited)
        if up >= lease:
            return None
        done = math.floor(up / segment) * tau if tau < math.inf else 0.0
        wait = lengths[k + 1] if k + 1 < len(lengths) else sample.spell(k + 1)
        wall += up + wait + restart
        waited += wait
        count += 1
        remaining -= done
        k += 2
    return None


CACHED_SPELLS = 256
"""Spells kept per sample (128 lifetimes and waits); a run that needs more draws them again."""


class Spells:
    """The spot capacity Monte Carlo sample ``stream`` sees in ``zone``: whether a machine is
    there at time 0, then the lengths of alternating spells (available, not, ...; the first is
    what is left of a life or a wait found under way), in the order ``simulate_wall`` and
    ``fallback.FittedSpells`` draw them from the sample's stream. The first ``CACHED_SPELLS``
    are kept: a spell depends on the zone and the sample, never on the job, so every offer
    group of a family and every plan reuses them instead of drawing its own (the draws cost more
    than the runs)."""

    __slots__ = ("_rng", "available", "lengths", "stream", "zone")

    def __init__(self, zone: ZoneRisk, stream: int) -> None:
        self.zone, self.stream = zone, stream
        self._rng = sample_rng(stream)
        self.available = self._rng.random() < zone.availability
        self.lengths: list[float] = []

    def spell(self, k: int) -> float:
        """Spell ``k`` (k < ``CACHED_SPELLS``), drawn with those before it if not yet kept."""
        while len(self.lengths) <= k:
            self.lengths.append(self._draw(self._rng, len(self.lengths)))
        return self.lengths[k]

    def __iter__(self) -> Iterator[float]:
        """Every spell in order: the kept ones, then the same stream drawn again past them."""
        for k in range(CACHED_SPELLS):
            yield self.spell(k)
        rng = sample_rng(self.stream)
        rng.random()
        for skipped in range(CACHED_SPELLS):
            self._draw(rng, skipped)
        k = CACHED_SPELLS
        while True:
            yield self._draw(rng, k)
            k += 1

    def _draw(self, rng: random.Random, k: int) -> float:
        z = self.zone
        if (k % 2 == 0) == self.available:
            return lifetime(rng, z.lifetimes, found=k == 0)
        if k > 0:  # after a preemption: a wait, or a move to another zone of the region
            return wait_after_preemption(rng, z)
        return residual(rng, z.down_shape, z.down_scale_seconds)


_SPELLS: dict[tuple[ZoneRisk, ...], list[Spells]] = {}


def spells(zones: tuple[ZoneRisk, ...], samples: int) -> list[Spells]:
    """The spells of samples 0..``samples``-1 of a family's mixture (sample i in member i mod
    members: zones or regions), kept for the process: the same members, the same spells,
    whichever family or option asks."""
    table = _SPELLS.setdefault(zones, [])
    for i in range(len(table), samples):
        table.append(Spells(zones[i % len(zones)], i))
    return table


@cache
def strata(samples: int) -> tuple[float, ...]:
    """The standard normal's quantiles at the middle of ``samples`` equal slices: the stratified
    training times of a simulation are ``median * exp(z * log_sigma)``."""
    normal = NormalDist()
    return tuple(normal.inv_cdf((i + 0.5) / samples) for i in range(samples))


def mean_work(median: float, log_sigma: float, samples: int) -> float:
    """The mean training time of ``samples`` stratified samples (``strata``): what a simulation's
    runs would take if nothing ever took their machine away."""
    return sum(median * math.exp(z * log_sigma) for z in strata(samples)) / samples


def quantile(sorted_values: list[float], q: float) -> float:
    """The ``q`` quantile of sorted samples (nearest rank, rounded up: conservative)."""
    index = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[index]


def fraction_within(sorted_values: list[float], limit: float) -> float:
    """Share of sorted samples at or below ``limit``."""
    return bisect.bisect_right(sorted_values, limit) / len(sorted_values)
