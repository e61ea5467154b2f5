"""Per-epoch figures from the stamps of three short epochs (no TensorFlow)."""

from __future__ import annotations

import math

import pytest

from probes import epochs
from probes.timing import Stamps


def three_epochs(
    step: float,
    val_step: float,
    overhead: float,
    trace: float,
    *,
    wild: dict[int, float] | None = None,
) -> Stamps:
    """Stamps as the callback records them: 3 train steps and 5 validation steps an epoch, for
    ``epochs.EPOCHS`` epochs; ``wild`` adds seconds to the overhead of the epochs it names."""
    stamps, now = Stamps(fit_start=0.0), 0.0
    for epoch in range(epochs.EPOCHS):
        stamps.epoch_begins.append(now)
        now += overhead + (trace if epoch == 0 else 0.0) + (wild or {}).get(epoch, 0.0)
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
    crossed = epochs.boundaries(stamps, durations, 0.01)
    assert len(crossed) == epochs.EPOCHS - 1  # every epoch start after the first
    assert crossed[0] == pytest.approx(0.05 + 0.002 + 5 * 0.004)  # it carries validation


def test_one_wild_epoch_boundary_is_kept_but_bounded() -> None:
    """A garbage collection at one boundary (1.2 s beside a 60 ms overhead) is a real cost of
    that run: it is not dropped, but one reading among seven cannot carry the prediction."""
    calm = epochs.figures(three_epochs(0.01, 0.004, 0.06, 1.5), step=0.01, train_steps=3)
    wild = epochs.figures(
        three_epochs(0.01, 0.004, 0.06, 1.5, wild={2: 1.2}), step=0.01, train_steps=3
    )
    added = wild.train_overhead - calm.train_overhead
    readings = epochs.EPOCHS - 1
    assert 0 < added < 0.5 * 1.2 / readings  # kept, at under half of a plain mean's weight
    assert wild.first_epoch_extra == pytest.approx(calm.first_epoch_extra)


def test_a_cost_at_half_the_boundaries_counts_half_per_epoch() -> None:
    """A slow first step at every other epoch boundary costs, on average, half of it per epoch;
    a median of the readings would say nothing (or all of it)."""
    slow = {epoch: 0.8 for epoch in range(1, epochs.EPOCHS) if epoch % 2 == 0}
    phase = epochs.figures(three_epochs(0.01, 0.004, 0.05, 1.5, wild=slow), step=0.01,
                           train_steps=3)  # fmt: skip
    share = len(slow) / (epochs.EPOCHS - 1)
    assert phase.train_overhead == pytest.approx(0.05 + share * 0.8)


def test_the_spread_is_robust_to_one_outlier() -> None:
    assert epochs.robust_spread([1.0, 1.0, 1.0, 9.0]) == pytest.approx(0.0)
    assert epochs.robust_spread([1.0, 2.0, 3.0]) == pytest.approx(1.4826)
    assert epochs.robust_spread([5.0]) == 0.0


def with_cpu(stamps: Stamps, idle: dict[int, float]) -> Stamps:
    """CPU stamps for ``stamps``: the CPU busy all along, except ``idle`` seconds (no CPU in use)
    at the start of the epochs it names, as when a dropped iterator makes ``fit`` wait."""
    waits = [(stamps.epoch_begins[e], seconds) for e, seconds in idle.items()]

    def cpu(t: float) -> float:
        return t - sum(seconds for at, seconds in waits if at < t)

    for name in ("train_ends", "epoch_begins", "epoch_ends", "test_begins", "test_ends"):
        stamps.cpu[name] = [cpu(t) for t in getattr(stamps, name)]
    return stamps


def test_a_wait_with_no_cpu_is_left_to_the_teardown_model() -> None:
    """A boundary that waits (no CPU in use: a dropped iterator, probes.teardown) is not read
    as per-epoch work: the prediction adds that wait at the real run's epoch ages instead."""
    calm = epochs.figures(
        with_cpu(three_epochs(0.01, 0.004, 0.06, 1.5), {}), step=0.01, train_steps=3
    )
    stalled = epochs.figures(
        with_cpu(three_epochs(0.01, 0.004, 0.06, 1.5, wild={3: 2.0}), {3: 2.0}),
        step=0.01, train_steps=3,
    )  # fmt: skip
    assert stalled.train_overhead == pytest.approx(calm.train_overhead)
    busy = epochs.figures(  # the same 2 s with the CPU working: per-epoch work, kept
        with_cpu(three_epochs(0.01, 0.004, 0.06, 1.5, wild={3: 2.0}), {}),
        step=0.01, train_steps=3,
    )  # fmt: skip
    assert busy.train_overhead > calm.train_overhead


def test_the_steady_fits_boundaries_leave_out_their_idle_wait() -> None:
    stamps = with_cpu(three_epochs(0.01, 0.004, 0.05, 0.0, wild={2: 1.0}), {2: 1.0})
    crossed = epochs.boundaries(stamps, stamps.durations(), 0.01)
    assert crossed[1] == pytest.approx(crossed[0])  # the 1 s wait before epoch 2 is not work


def test_fewer_short_epochs_where_tracing_left_the_budget_little_room() -> None:
    """A small model's short epochs take a fraction of a second: all eight. ResNet-32 here
    (a 0.23 s step, 6 s of tracing) has seconds left for three, the fewest that still give two
    readings of the per-epoch overhead."""
    assert epochs.count(6.0, 0.01) == epochs.EPOCHS
    assert epochs.count(0.5, 0.23) == epochs.MIN_EPOCHS
    assert epochs.count(-3.0, 0.23) == epochs.MIN_EPOCHS  # already over: the fewest
    per_epoch = 0.23 * (epochs.TRAIN_BATCHES + 1 + (epochs.VALIDATION_BATCHES + 1) / 3)
    assert epochs.count(5 * per_epoch + 0.01, 0.23) == 5
    # a probe called with an unbounded budget, or from readings that are not numbers
    assert epochs.count(math.inf, 0.23) == epochs.EPOCHS
    assert epochs.count(math.nan, 0.23) == epochs.MIN_EPOCHS
    assert epochs.count(6.0, math.nan) == epochs.EPOCHS


@pytest.mark.parametrize("budget", [0.0, -1.0, math.nan, math.inf])
def test_a_probe_refuses_a_budget_that_is_not_a_finite_positive_number(budget: float) -> None:
    """The phases share out the budget (the short epochs count what is left of it): a budget
    that is not a number is one clear error before anything is built."""
    from advisor.errors import AdvisorError
    from probes.run import probe

    with pytest.raises(AdvisorError, match="finite number of seconds"):
        probe("mnist_mlp", budget_seconds=budget)
