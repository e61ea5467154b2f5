"""Step-time statistics: where warm-up ends, how well the steady step time is known.

Pure functions over lists of wall-clock step durations (seconds); no TensorFlow. The probe calls
them after every step to decide when to stop, and once more at the end for the result.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

WINDOW = 5
"""Steps in the rolling window that decides whether warm-up is over."""
STABLE_WITHIN = 0.10
"""A window is steady when its median is within this fraction of the later steps' median."""
MIN_STEADY = 12
"""Fewest steady steps before an interval is reported."""

# Two-sided 95% Student t quantiles, by degrees of freedom (no SciPy in the engine).
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
         16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042}  # fmt: skip


def t_quantile(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        return math.inf
    if df in _T975:
        return _T975[df]
    if df > 30:
        return 1.96 + 2.4 / df  # within 0.2% of the exact value from 30 on
    below = max(k for k in _T975 if k < df)
    return _T975[below]


def warmup_end(durations: Sequence[float]) -> int | None:
    """Index of the first steady step, or None while the steps are not steady yet.

    Warm-up is over at the first step whose rolling median (``WINDOW`` steps) is within
    ``STABLE_WITHIN`` of the median of all steps after it, and which itself is no slow outlier.
    """
    n = len(durations)
    for start in range(n - WINDOW * 2 + 1):
        rest = statistics.median(durations[start:])
        window = statistics.median(durations[start : start + WINDOW])
        if abs(window - rest) <= STABLE_WITHIN * rest and durations[start] <= 1.5 * rest:
            return start
    return None


@dataclass(frozen=True)
class SteadyStats:
    """What the steady steps say about the step time."""

    mean: float
    median: float
    half_width: float
    """Half-width of the 95% confidence interval of the mean (batch means)."""
    steps: int

    @property
    def relative_half_width(self) -> float:
        return self.half_width / self.mean if self.mean > 0 else math.inf

    @property
    def interval(self) -> tuple[float, float]:
        return (max(self.mean - self.half_width, 0.0), self.mean + self.half_width)


def steady_stats(steady: Sequence[float]) -> SteadyStats:
    """Mean step time and its 95% interval from the method of batch means.

    Neighbouring steps are correlated (a background process slows several in a row), so the
    steps are grouped into up to 10 consecutive batches and the interval comes from the batch
    means, whose correlation is much weaker than that of single steps.
    """
    n = len(steady)
    if n == 0:
        raise ValueError("no steady steps")
    mean = statistics.fmean(steady)
    median = statistics.median(steady)
    batches = min(10, n // 3)
    if batches < 2:
        return SteadyStats(mean, median, math.inf, n)
    size = n // batches
    means = [statistics.fmean(steady[i * size : (i + 1) * size]) for i in range(batches)]
    half = t_quantile(batches - 1) * statistics.stdev(means) / math.sqrt(batches)
    return SteadyStats(mean, median, half, n)


def bounded_mean(readings: Sequence[float], bound: float = 3.0) -> float:
    """The mean of ``readings`` with the influence of any one bounded: each reading is clipped
    to ``bound`` spreads around the median, then all are averaged.

    A cost that recurs is summed by its mean: readings of 0 at three boundaries and X at two
    average 0.4 X, where the median says 0. The spread is the larger of the scaled median
    absolute deviation and the mean absolute deviation from the median, so a cost that comes at
    a few of the boundaries is inside the bound, while one wild reading among n counts at most
    about ``bound`` / n of itself: more readings, less influence, none discarded."""
    if not readings:
        raise ValueError("no readings")
    middle = statistics.median(readings)
    deviations = [abs(r - middle) for r in readings]
    spread = max(1.4826 * statistics.median(deviations), statistics.fmean(deviations))
    low, high = middle - bound * spread, middle + bound * spread
    return statistics.fmean(min(max(r, low), high) for r in readings)


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares ``y = a + b x``; returns ``(a, b)``. Needs two distinct x values."""
    if len(set(xs)) < 2:
        raise ValueError("a line needs two distinct points")
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    return my - b * mx, b


def drift(steady: Sequence[float]) -> float:
    """Relative change of the mean step time between the first and second half of the steady
    steps: a sign that the machine's load changed during the probe (the interval of the mean
    cannot see that, a full run will pay it)."""
    half = len(steady) // 2
    if half < WINDOW:
        return 0.0
    first, second = statistics.fmean(steady[:half]), statistics.fmean(steady[half:])
    return abs(second - first) / statistics.fmean(steady)
