"""The minimiser the fits share: a coordinate search in log space over named parameters.

Each parameter in turn is multiplied and divided by a step (2, then 1.4, 1.15, 1.05) while that
lowers the loss; a parameter never goes above its ceiling (1 for a share of a peak). No SciPy:
the losses are cheap, a few hundred evaluations find the minimum, and the order is fixed, so a
fit is the same on every machine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from advisor.estimate.parameters import Calibration

STEPS = (2.0, 1.4, 1.15, 1.05)


def coordinate_search(
    start: Calibration,
    names: Sequence[str],
    loss: Callable[[Calibration], float],
    ceiling: Callable[[str], float],
) -> Calibration:
    """The calibration the search ends at from ``start``, moving only ``names``."""
    best, best_loss = start, loss(start)
    for step in STEPS:
        improved = True
        while improved:
            improved = False
            for name in names:
                for factor in (step, 1 / step):
                    value = getattr(best, name) * factor
                    if value > ceiling(name):
                        continue
                    trial = replace(best, **{name: value})
                    trial_loss = loss(trial)
                    if trial_loss < best_loss - 1e-9:
                        best, best_loss, improved = trial, trial_loss, True
    return best
