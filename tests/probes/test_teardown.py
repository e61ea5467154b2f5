"""The iterator-teardown model: the wake-up schedule, the expected wait, and where the probe adds
it (no TensorFlow)."""

from __future__ import annotations

import pytest

from probes import teardown
from probes.fitting import Measurement
from probes.result import WorkloadConfig
from probes.run import with_teardown


def test_wake_ups_double_from_10_ms_then_come_every_minute() -> None:
    assert teardown.next_wake(0.005) == pytest.approx(0.010)
    assert teardown.next_wake(0.011) == pytest.approx(0.030)  # 10 + 20 ms
    assert teardown.next_wake(5.0) == pytest.approx(5.11)  # 10 ms x (2^9 - 1)
    assert teardown.next_wake(6.0) == pytest.approx(10.23)
    beyond = teardown.next_wake(200.0)
    assert 200.0 <= beyond < 260.0
    assert teardown.next_wake(beyond + 1) == pytest.approx(beyond + 60.0)


def test_a_stalled_drop_waits_to_the_next_wake_up() -> None:
    """Measured here: a 6 s epoch's iterator, when its drop stalls, waits about 4.2 s."""
    assert teardown.wait_if_stalled(6.0) == pytest.approx(4.23)
    assert teardown.wait_if_stalled(5.1) == pytest.approx(0.01)
    assert teardown.wait_if_stalled(0.0) == 0.0


def test_the_mean_wait_grows_with_the_age_and_smooths_the_sawtooth() -> None:
    assert teardown.mean_wait(6.0, log_sigma=0.0) == teardown.wait_if_stalled(6.0)
    # just under and just over a wake-up: far apart as a sawtooth, close once averaged
    under, over = teardown.mean_wait(5.05), teardown.mean_wait(5.2)
    assert abs(under - over) < 0.3 * max(under, over)
    waits = [teardown.mean_wait(age) for age in (0.5, 2.0, 8.0, 30.0)]
    assert waits == sorted(waits) and waits[0] < 0.5 and 1.0 < waits[2] < 8.0


def measurement(step: float, overhead: float = 0.0) -> Measurement:
    return Measurement(
        step_seconds=step, step_interval=(step, step), validation_step_seconds=step / 3,
        epoch_overhead_seconds=overhead, startup_seconds=1.0, predicted_seconds=100.0,
        predicted_interval=(90.0, 110.0), batch_scaling={32: step},
    )  # fmt: skip


def test_the_wait_is_added_at_the_real_epochs_age() -> None:
    """The probe's own short epochs live a fraction of a second; the real run's iterators live a
    whole epoch, and that is the age the prediction uses. Each epoch drops one training
    iterator: every epoch but the last at the next one's start (the repeating part), the last
    when ``fit`` returns (the one-time part)."""
    rates = teardown.TeardownRates(training=0.5, validation=0.0)
    config = WorkloadConfig("w", samples=600 * 32, validation_samples=0, epochs=4, batch_size=32)
    measured = with_teardown(measurement(0.01), config, rates)  # a 6 s epoch
    per_epoch = 0.5 * teardown.mean_wait(6.0)
    assert measured.predicted_seconds == pytest.approx(100.0 + 3 * per_epoch)
    assert measured.startup_seconds == pytest.approx(1.0 + per_epoch)
    assert measured.teardown_seconds == pytest.approx(4 * per_epoch)
    assert measured.predicted_interval == pytest.approx((90.0 + 3 * per_epoch,
                                                        110.0 + 3 * per_epoch))  # fmt: skip

    short = with_teardown(measurement(0.0001), config, rates)  # a 60 ms epoch: almost nothing
    assert short.predicted_seconds - 100.0 < 0.01 * (measured.predicted_seconds - 100.0)


def test_the_validation_pass_adds_its_own_iterator_at_its_own_age() -> None:
    rates = teardown.TeardownRates(training=0.0, validation=1.0)
    config = WorkloadConfig("w", samples=600 * 32, validation_samples=300 * 32, epochs=2,
                            batch_size=32)  # fmt: skip
    measured = with_teardown(measurement(0.03), config, rates)  # 18 s epochs, 3 s validation
    assert measured.teardown_seconds == pytest.approx(2 * teardown.mean_wait(3.0))


def test_no_rates_add_nothing() -> None:
    config = WorkloadConfig("w", samples=6400, validation_samples=640, epochs=3, batch_size=32)
    same = with_teardown(measurement(0.02), config, teardown.NO_TEARDOWN)
    assert same.predicted_seconds == 100.0 and same.startup_seconds == 1.0
    assert same.predicted_interval == (90.0, 110.0)


def test_the_shipped_rates_are_chances_with_a_source() -> None:
    rates = teardown.shipped_rates()
    for rate in (rates.training, rates.validation):
        assert 0.0 <= rate <= 1.0
    assert "fit_anatomy.py" in rates.source
