"""Spot lifetimes (``pricing.spot_risk.Lifetimes``, ``spot.lifetime``): draws follow the fitted
mixture, a machine found running lives the length-biased residual of its life, and on a trace of
many short lives and a few long ones the model's first life is what random starts in it see."""

from __future__ import annotations

import math
import random
from statistics import fmean

import pytest

from advisor.fitting.spot_replay import TraceProcess
from advisor.fitting.spot_traces import Trace, weibull_fit, zone_rows
from advisor.recommend import spot
from pricing.spot_risk import Lifetimes, parse

HOUR = 3600.0
LIVES = Lifetimes(0.8, 0.5 * HOUR, 20 * HOUR)


def test_fresh_lives_follow_the_mixture() -> None:
    rng = spot.sample_rng(0)
    draws = sorted(spot.lifetime(rng, LIVES) for _ in range(40_000))
    assert LIVES.mean_seconds == pytest.approx((0.8 * 0.5 + 0.2 * 20) * HOUR)
    assert fmean(draws) == pytest.approx(LIVES.mean_seconds, rel=0.05)
    assert LIVES.survival(LIVES.median_seconds) == pytest.approx(0.5)
    assert draws[len(draws) // 2] == pytest.approx(LIVES.median_seconds, rel=0.03)
    one = Lifetimes(1.0, HOUR, HOUR)
    assert one.median_seconds == pytest.approx(HOUR * math.log(2))
    never = Lifetimes(1.0, math.inf, math.inf)
    assert never.median_seconds == math.inf and spot.lifetime(rng, never, True) == math.inf


def test_a_machine_found_running_lives_the_length_biased_residual() -> None:
    # a random moment falls in a life with odds proportional to its length; what is left of it
    # has mean E[T^2] / (2 E[T]) (Cox 1962, 5.2), for a mixture of exponentials sum p m^2 / mean
    residual = (0.8 * (0.5 * HOUR) ** 2 + 0.2 * (20 * HOUR) ** 2) / LIVES.mean_seconds
    rng = spot.sample_rng(1)
    draws = [spot.lifetime(rng, LIVES, found=True) for _ in range(40_000)]
    assert fmean(draws) == pytest.approx(residual, rel=0.05)
    assert residual > 4 * LIVES.mean_seconds  # most machines found running are long-lived
    assert LIVES.found_short_share == pytest.approx(0.8 * 0.5 / 4.4)
    # one exponential is memoryless: a machine found running lives a fresh life
    assert Lifetimes(1.0, HOUR, HOUR).found_short_share == 1.0


def many_short_a_few_long() -> Trace:
    """Hour ticks: four times ten lives of 1 h then one of 100 h, each followed by 1 h without a
    machine (the K80 traces' shape: most lives short, most of the running time in a few)."""
    ticks = ([0, 1] * 10 + [0] * 100 + [1]) * 4
    family = "aws-k80-availability-2022-10"
    return Trace(family, "aws", "K80", "r", "c0ffee", "z.json", "z", 0, HOUR, ticks, "w")


def first_life_survival(draws: list[float], hours: float) -> float:
    return sum(1 for d in draws if d > hours * HOUR) / len(draws)


def test_the_first_life_is_what_random_starts_in_the_trace_see() -> None:
    trace = many_short_a_few_long()
    row = {key: str(value) for key, value in zone_rows([trace])[0].items()}
    zone = parse([row]).families[trace.family].zones[0]
    # the replay: a start at a random moment of the trace with a machine, its life to preemption
    rng = random.Random(5)
    starts = [TraceProcess(trace, rng.uniform(0, len(trace.ticks) * HOUR)) for _ in range(4000)]
    replayed = [change for available, change in (p.at(0.0) for p in starts) if available]
    # the model: a machine found running
    model = [spot.lifetime(spot.sample_rng(i), zone.lifetimes, True) for i in range(4000)]
    # a Weibull fitted to the same spells, found running the same way (the fit before mixtures)
    up = [float(n) for n in [1] * 39 + [100] * 4]
    shape, scale = weibull_fit(up, [1.0])
    weibull = [spot.residual(spot.sample_rng(i), shape, scale * HOUR) for i in range(4000)]
    for hours in (2, 12, 24):
        seen = first_life_survival(replayed, hours)
        assert first_life_survival(model, hours) == pytest.approx(seen, abs=0.05), hours
        assert first_life_survival(weibull, hours) < seen - 0.05, hours
    assert first_life_survival(weibull, 24) < first_life_survival(replayed, 24) - 0.3
