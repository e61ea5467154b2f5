"""Absolute accuracy: each published run's own figure against the device model's, no ratio.

A ratio between two rows of one source cancels every error the two share, a wrong level of all
GPUs included: that is how a model that made one A100 train ResNet-50 in 6 hours passed every
pair benchmark. Here each row stands alone: its device, batch, precision and software give the
model's time per sample, compared with the row's own figure.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from advisor.estimate.parameters import Calibration, across_kinds, sigma_of
from advisor.estimate.prediction import Prediction
from advisor.fitting.validate import INTERVAL, Run, percentile


@dataclass(frozen=True)
class RowResult:
    """One published figure predicted in absolute terms."""

    source: str
    workload: str
    label: str
    kind: str
    """``cpu`` or ``gpu``: the device the row measured."""
    family: str
    predicted: float
    """In the row's own metric."""
    actual: float
    log_error: float
    """log(predicted time / measured time): positive when predicted too slow."""
    log_sigma: float

    @property
    def factor(self) -> float:
        """How far off, as a factor either way (1.25: 25% too slow or too fast)."""
        return math.exp(abs(self.log_error))

    @property
    def inside_interval(self) -> bool:
        predicted = Prediction(seconds=math.exp(self.log_error), log_sigma=self.log_sigma)
        return predicted.quantile(INTERVAL[0]) <= 1.0 <= predicted.quantile(INTERVAL[1])


def absolute_results(runs: Sequence[Run], calibration: Calibration) -> list[RowResult]:
    """Every run's figure as the device model predicts it (the spread of a prediction from a
    probe of the other kind: what a user's CPU probe gets for a GPU)."""
    results = []
    for run in runs:
        modelled = run.modelled(calibration)
        results.append(
            RowResult(
                source=run.source,
                workload=run.workload,
                label=run.label,
                kind=run.kind,
                family=run.facts.family,
                predicted=run.figure(modelled),
                actual=run.value,
                log_error=math.log(modelled / run.seconds_per_sample),
                log_sigma=sigma_of(calibration.log_sigma, across_kinds(run.kind), run.facts.family),
            )
        )
    return results


def summarise_rows(results: Sequence[RowResult]) -> dict[str, Any]:
    """Median, p90 and worst error as factors, the median signed error (positive: predictions
    too slow) and the 80% interval's coverage."""
    if not results:
        return {"n_rows": 0}
    factors = [r.factor for r in results]
    signed = percentile([r.log_error for r in results], 50)
    return {
        "n_rows": len(results),
        "median_factor": round(percentile(factors, 50), 3),
        "p90_factor": round(percentile(factors, 90), 3),
        "worst_factor": round(max(factors), 3),
        "median_signed_pct": round(100 * (math.exp(signed) - 1), 1),
        "too_fast": sum(r.log_error < 0 for r in results),
        "interval_coverage": round(sum(r.inside_interval for r in results) / len(results), 4),
    }


def by(results: Sequence[RowResult], key: str) -> dict[str, dict[str, Any]]:
    """``summarise_rows`` for each value of a field (``source``, ``workload``, ``kind`` ...)."""
    groups: dict[str, list[RowResult]] = defaultdict(list)
    for result in results:
        groups[str(getattr(result, key))].append(result)
    return {name: summarise_rows(group) for name, group in sorted(groups.items())}
