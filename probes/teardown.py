"""The wait a real ``model.fit`` pays when it lets go of a tf.data iterator.

Dropping a Keras (TensorFlow backend) iterator that gave batches sometimes waits for its
autotuning thread's next wake-up (10 ms after the first batch, then doubling to at most 60 s),
so the wait grows with the iterator's age: an epoch in a real run, a fraction of a second in a
probe. For each iterator the real run drops, the expected wait is the chance a drop waits
(``TeardownRates``, ``data/fit-teardown.json``) times the mean wait to the next wake-up over the
run-to-run spread of the age. Pure functions; no TensorFlow (docs/PREDICTION.md, "Here first:
the whole `model.fit` on this machine"; docs/SOURCES.md, "Iterator teardown")."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from advisor.locations import shipped

FIRST_PERIOD = 0.010
"""Seconds of the autotuning thread's first sleep (TensorFlow's kOptimizationPeriodMinMs)."""
LONGEST_PERIOD = 60.0
"""Seconds of its longest sleep, once doubling reaches it (kOptimizationPeriodMaxMs)."""
AGE_LOG_SIGMA = 0.15
"""How much an epoch's length varies between runs on a shared machine, in log units (identical
runs here differ by 20-50%; a probe cannot know the real run's age closer than that)."""
_QUADRATURE = 41


def next_wake(age: float) -> float:
    """Seconds from an iterator's start to its autotuning thread's first wake-up at or after
    ``age``: wake-ups come at 10 ms x (2^n - 1) until the sleep reaches 60 s, then every 60 s."""
    wake, period = 0.0, FIRST_PERIOD
    while wake < age and period < LONGEST_PERIOD:
        wake += period
        period *= 2
    if wake < age:
        wake += math.ceil((age - wake) / LONGEST_PERIOD) * LONGEST_PERIOD
    return wake


def wait_if_stalled(age: float) -> float:
    """The wait of dropping an iterator of ``age`` seconds when the drop does wait."""
    return next_wake(age) - age if age > 0 else 0.0


def mean_wait(age: float, log_sigma: float = AGE_LOG_SIGMA) -> float:
    """``wait_if_stalled`` averaged over a log-normal age around ``age``: the sawtooth is too
    sharp to evaluate at one predicted age (a 5.0 s epoch waits 0.1 s, a 5.2 s one 5 s)."""
    if age <= 0:
        return 0.0
    if log_sigma <= 0:
        return wait_if_stalled(age)
    total = weights = 0.0
    for i in range(_QUADRATURE):  # +-3 sigma on an even grid, normal weights
        z = -3 + 6 * i / (_QUADRATURE - 1)
        weight = math.exp(-z * z / 2)
        total += weight * wait_if_stalled(age * math.exp(z * log_sigma))
        weights += weight
    return total / weights


@dataclass(frozen=True)
class TeardownRates:
    """Chance that dropping an iterator waits, for each kind of iterator a fit drops."""

    training: float
    """An epoch's training iterator, dropped at the next epoch's first step or when ``fit``
    returns; its age is the epoch with its validation pass."""
    validation: float
    """A validation pass's iterator, dropped when the pass returns."""
    source: str = ""

    def per_epoch(self, epoch_seconds: float, validation_seconds: float) -> float:
        """Expected teardown seconds of one epoch: its training and its validation iterator."""
        wait = self.training * mean_wait(epoch_seconds)
        if validation_seconds > 0:
            wait += self.validation * mean_wait(validation_seconds)
        return wait


NO_TEARDOWN = TeardownRates(0.0, 0.0, "not modelled")


def shipped_rates() -> TeardownRates:
    """The rates fitted on timed real fits (``data/fit-teardown.json``)."""
    data = json.loads(shipped("fit-teardown.json").read_text(encoding="utf-8"))
    rates = data["rates"]
    return TeardownRates(
        float(rates["training"]), float(rates["validation"]), str(data.get("source", ""))
    )
