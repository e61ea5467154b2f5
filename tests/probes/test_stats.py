"""The statistics behind the stopping rule: warm-up detection, batch-means intervals."""

from __future__ import annotations

import random

import pytest

from probes import stats


def test_warmup_end_skips_a_slow_start() -> None:
    rng = random.Random(1)
    durations = [3.0, 0.5, 0.3] + [0.1 * rng.uniform(0.97, 1.03) for _ in range(40)]
    assert stats.warmup_end(durations) == 3


def test_warmup_end_finds_a_late_settling_phase() -> None:
    durations = [2.0] + [0.07] * 25 + [0.037] * 60
    start = stats.warmup_end(durations)
    assert start is not None and 24 <= start <= 26


def test_warmup_end_waits_for_enough_steps() -> None:
    assert stats.warmup_end([1.0, 0.1, 0.1]) is None


def test_interval_covers_the_true_mean_and_shrinks_with_more_steps() -> None:
    rng = random.Random(7)
    short = [rng.gauss(0.05, 0.002) for _ in range(30)]
    long = [rng.gauss(0.05, 0.002) for _ in range(600)]
    a, b = stats.steady_stats(short), stats.steady_stats(long)
    assert a.interval[0] <= 0.05 <= a.interval[1]
    assert b.half_width < a.half_width
    assert b.relative_half_width < 0.02


def test_too_few_steps_give_an_infinite_interval() -> None:
    assert stats.steady_stats([0.1, 0.1, 0.1, 0.1]).relative_half_width == float("inf")
    with pytest.raises(ValueError):
        stats.steady_stats([])


def test_t_quantiles() -> None:
    assert stats.t_quantile(9) == pytest.approx(2.262)
    assert stats.t_quantile(27) == pytest.approx(2.060)  # conservative: the df 25 value
    assert stats.t_quantile(200) == pytest.approx(1.972, abs=0.002)


def test_linear_fit() -> None:
    a, b = stats.linear_fit([2, 4, 8], [1.2, 2.2, 4.2])
    assert a == pytest.approx(0.2) and b == pytest.approx(0.5)
    with pytest.raises(ValueError):
        stats.linear_fit([4, 4], [1.0, 2.0])
