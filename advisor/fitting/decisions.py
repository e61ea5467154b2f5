"""Decisions judged by measurements: the device a prediction chooses against the one measured best.

The decision benchmark (``benchmarks/decision_quality.py``) builds the scenarios: each published
source's devices at their prices, with measured and predicted times.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from advisor.fitting.validate import percentile

TIE = 0.01
"""Measured costs closer than this to the cheapest are equally right choices."""


@dataclass(frozen=True)
class Option:
    """One device of a scenario: its price and its measured and predicted time per sample."""

    device: str
    usd_per_hour: float
    measured_s: float
    predicted_s: float

    @property
    def measured_cost(self) -> float:
        return self.measured_s * self.usd_per_hour

    @property
    def predicted_cost(self) -> float:
        return self.predicted_s * self.usd_per_hour


@dataclass(frozen=True)
class Decision:
    cheapest_right: bool
    fastest_right: bool
    regret_pct: float
    """Extra measured cost of the predicted-cheapest device over the measured-cheapest, in %."""
    chosen: str
    best: str


def decide(options: Sequence[Option]) -> Decision:
    """Choose from predicted times and judge the choice by measured times."""
    chosen = min(options, key=lambda o: o.predicted_cost)
    best = min(options, key=lambda o: o.measured_cost)
    fastest_chosen = min(options, key=lambda o: o.predicted_s)
    fastest = min(options, key=lambda o: o.measured_s)
    regret = (chosen.measured_cost / best.measured_cost - 1) * 100
    return Decision(
        cheapest_right=regret <= TIE * 100,
        fastest_right=fastest_chosen.measured_s <= fastest.measured_s * (1 + TIE),
        regret_pct=regret,
        chosen=chosen.device,
        best=best.device,
    )


def summary(decisions: Sequence[Decision]) -> dict[str, float]:
    n = len(decisions)
    regrets = [d.regret_pct for d in decisions]
    return {
        "scenarios": n,
        "cheapest_right": round(sum(d.cheapest_right for d in decisions) / n, 4) if n else math.nan,
        "fastest_right": round(sum(d.fastest_right for d in decisions) / n, 4) if n else math.nan,
        "median_regret_pct": round(percentile(regrets, 50), 2),
        "p90_regret_pct": round(percentile(regrets, 90), 2),
    }
