"""Per-epoch figures from the stamps of three short epochs (no TensorFlow)."""

from __future__ import annotations

import pytest

from probes import epochs
from probes.timing import Stamps


def three_epochs(step: float, val_step: float, overhead: float, trace: float) -> Stamps:
    """Stamps as the callback records them: 3 train steps and 5 validation steps an epoch."""
    stamps, now = Stamps(fit_start=0.0), 0.0
    for epoch in range(3):
        stamps.epoch_begins.append(now)
        now += overhead + (trace if epoch == 0 else 0.0)
        for _ in range(3):
            now += step
            stamps.train_ends.append(now)
            stamps.train_epochs.append(epoch)
        stamps.test_begins.append(now)
        stamps.test_batch_ends.append([])
        now += 0.002  # validation set-up
        for _ in range(5):
            now += val_step
            stamps.test_batch_ends[-1].append(now)
        stamps.test_ends.append(now)
        stamps.epoch_ends.append(now)
    return stamps


def test_figures_recover_the_parts() -> None:
    phase = epochs.figures(three_epochs(0.01, 0.004, 0.05, 1.5), step=0.01, train_steps=3)
    assert phase.validation_step == pytest.approx(0.004)
    assert phase.train_overhead == pytest.approx(0.05)
    assert phase.validation_overhead == pytest.approx(0.002)
    assert phase.first_epoch_extra == pytest.approx(1.5)
    assert phase.overhead_spread == pytest.approx(0.0, abs=1e-9)


def test_boundaries_of_a_long_fit() -> None:
    stamps = three_epochs(0.01, 0.004, 0.05, 0.0)
    durations = stamps.durations()
    extra = epochs.boundaries(stamps, durations, 0.01)
    assert len(extra) == 2  # two epoch starts after the first
    assert extra[0] == pytest.approx(0.05 + 0.002 + 5 * 0.004)  # the boundary carries validation
