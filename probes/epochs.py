"""The short-epochs phase in figures: validation step, per-epoch overhead, first-epoch extra.

Pure functions over the ``Stamps`` of a fit of up to ``EPOCHS`` short epochs (``TRAIN_BATCHES``
full batches plus the real partial one, a validation pass of ``VALIDATION_BATCHES`` batches plus
the real partial one); no TensorFlow.
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass

from probes import stats
from probes.timing import Stamps

EPOCHS = 8
"""Short epochs timed: the first pays tracing, the other seven each give one reading of the
per-epoch overhead. A cost that recurs is summed by the mean of the readings, with one wild
reading's influence bounded (``stats.bounded_mean``): enough readings, not a median that would
call a cost paid at half the boundaries zero."""
TRAIN_BATCHES = 2
VALIDATION_BATCHES = 4
FORWARD_SHARE = 1 / 3
"""A validation (forward-only) step as a share of a training step (3 x forward = training)."""
STEPS_PER_EPOCH = TRAIN_BATCHES + 1 + (VALIDATION_BATCHES + 1) * FORWARD_SHARE
"""One short epoch in training steps' worth: its batches and the partial one, its validation
pass's at about a third of a step."""
MIN_EPOCHS = 3
"""Fewest short epochs timed: the first pays tracing, the other two give two readings."""


def count(seconds: float, step: float) -> int:
    """Short epochs that fit ``seconds`` at ``step`` seconds a training step (a validation step
    about a third of one): ``EPOCHS`` for a model whose step is short, fewer, down to
    ``MIN_EPOCHS``, for one whose tracing left its budget little room (ResNet-32 here: a 0.23 s
    step, and a first step that traced for 6 s)."""
    per_epoch = step * STEPS_PER_EPOCH
    if not per_epoch > 0:
        return EPOCHS
    fits = seconds / per_epoch
    if fits >= EPOCHS:  # an unbounded budget included
        return EPOCHS
    if not fits >= MIN_EPOCHS:  # none left, or no reading at all
        return MIN_EPOCHS
    return math.floor(fits)


def boundaries(stamps: Stamps, durations: list[float], step: float) -> list[float]:
    """The work of each epoch boundary the steady fit crossed: the extra seconds of the step
    that began the new epoch, less the seconds it waited with no CPU in use (dropping the old
    epoch's iterator, ``probes.teardown``: the prediction adds that wait at the real run's ages,
    a reading of it here would count it twice)."""
    epochs = stamps.train_epochs
    return [
        durations[i] - step - stamps.step_idle(i)
        for i in range(1, len(durations))
        if epochs[i] != epochs[i - 1]
    ]


def boundary_idle(stamps: Stamps, epoch: int) -> float:
    """Seconds with no CPU in use where a fit drops iterators in ``epoch``: before its first
    step, between its last step and its validation pass, and after the validation pass."""
    indices = [i for i, e in enumerate(stamps.train_epochs) if e == epoch]
    if not indices:
        return 0.0
    first, last = indices[0], indices[-1]
    idle = stamps.idle("train_ends", first, "epoch_begins", epoch)
    if epoch < len(stamps.test_begins):
        idle += stamps.idle("test_begins", epoch, "train_ends", last)
        idle += stamps.idle("epoch_ends", epoch, "test_ends", epoch)
    elif epoch < len(stamps.epoch_ends):
        idle += stamps.idle("epoch_ends", epoch, "train_ends", last)
    return idle


@dataclass(frozen=True)
class EpochPhase:
    """What the short epochs measured."""

    validation_step: float
    validation_interval: tuple[float, float]
    train_overhead: float
    """Per-epoch seconds of the training part beyond its steps (new iterator, shuffle)."""
    validation_overhead: float
    """Per-epoch seconds of the validation pass beyond its steps."""
    overhead_spread: float
    """Width of the overhead's likely range: twice the scaled median absolute deviation of the
    readings (training and validation parts added)."""
    first_epoch_extra: float
    """How much longer the first epoch took: tracing of the partial batch and of validation."""
    train_overhead_readings: tuple[float, ...] = ()
    """Every reading of the training part's per-epoch overhead (one per epoch after the first)."""


def figures(stamps: Stamps, step: float, train_steps: int) -> EpochPhase:
    """Validation step and per-epoch overhead from epochs 2..n (epoch 1 pays the tracing)."""
    totals = [
        end - begin for begin, end in zip(stamps.epoch_begins, stamps.epoch_ends, strict=True)
    ]
    validates = bool(stamps.test_begins)
    val_steps: list[float] = []
    for ends in stamps.test_batch_ends[1:]:
        val_steps += [b - a for a, b in itertools.pairwise(ends)]  # the first carries set-up
    val_stats = stats.steady_stats(val_steps) if val_steps else None
    val_step = val_stats.mean if val_stats else 0.0
    train_over, val_over = [], []
    for e in range(1, len(totals)):
        validation = stamps.test_ends[e] - stamps.test_begins[e] if validates else 0.0
        val_count = len(stamps.test_batch_ends[e]) if validates else 0
        train_over.append(totals[e] - validation - train_steps * step - boundary_idle(stamps, e))
        val_over.append(validation - val_count * val_step)
    train_overhead = max(0.0, stats.bounded_mean(train_over))
    val_overhead = max(0.0, stats.bounded_mean(val_over))
    spread = 2 * (robust_spread(train_over) + robust_spread(val_over))
    if val_stats is None:
        interval = (0.0, 0.0)
    elif math.isinf(val_stats.half_width):
        interval = (val_step * 0.9, val_step * 1.1)
    else:
        interval = val_stats.interval
    first_extra = max(0.0, totals[0] - statistics.median(totals[1:]))
    return EpochPhase(
        val_step, interval, train_overhead, val_overhead, spread, first_extra, tuple(train_over)
    )


def robust_spread(readings: list[float]) -> float:
    """The median absolute deviation scaled to a normal standard deviation (1.4826 x MAD): the
    spread of the readings that one outlier cannot inflate."""
    if len(readings) < 2:
        return 0.0
    middle = statistics.median(readings)
    return 1.4826 * statistics.median(abs(value - middle) for value in readings)
