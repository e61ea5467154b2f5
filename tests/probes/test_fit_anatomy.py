"""Reading the teardown waits of a timed real fit (``advisor.fitting.teardown``): which
iterator each wait belongs to, and its age counted from its first batch (no TensorFlow)."""

from __future__ import annotations

import pytest

from advisor.fitting.teardown import fit_rates, observations
from probes.teardown import wait_if_stalled


def stamps(stalls: tuple[float, float, float]) -> list[list]:
    """A two-epoch fit, 1 s steps, validation: the first step traces for 2 s, and the waits at
    the second epoch's start, the validation ends and ``fit``'s return are ``stalls``."""
    at_start, at_validation, at_return = stalls
    events, clock, cpu = [], 0.0, 0.0

    def stamp(name: str, busy: float = 0.0, idle: float = 0.0) -> None:
        nonlocal clock, cpu
        clock, cpu = clock + busy + idle, cpu + busy
        events.append([name, clock, cpu])

    stamp("fit")
    for epoch in range(2):
        stamp("epoch_begin", busy=0.1)
        stamp("first_batch_begin", idle=at_start if epoch else 0.0)
        for step in range(5):
            stamp("batch_end", busy=3.0 if epoch == 0 and step == 0 else 1.0)
        stamp("test_begin", busy=0.1)
        stamp("test_end", busy=0.5)
        stamp("epoch_end", idle=at_validation)
    stamp("train_end", busy=0.1)
    stamp("return", idle=at_return)
    return events


def test_a_training_iterators_age_starts_at_its_first_batch() -> None:
    """The first step's tracing comes before the iterator's first batch, and a wait at an
    epoch's start before the next epoch's: neither is in the age."""
    rows = observations(stamps((4.0, 0.0, 0.0)))
    start = next(r for r in rows if r["place"] == "epoch_start")
    end = next(r for r in rows if r["place"] == "fit_end")
    # first epoch: its first batch at the end of the 3 s first step less a 1 s step; then four
    # steps, 0.6 s of validation, 0.1 s to the next epoch's start
    assert start["age"] == pytest.approx(1 + 4 + 0.1 + 0.5 + 0.1)
    assert start["iterator"] == "training" and start["idle"] == pytest.approx(4.0)
    assert end["age"] == pytest.approx(5 + 0.1 + 0.5 + 0.1)  # not the 4 s wait before it
    assert [r["iterator"] for r in rows].count("validation") == 2


def test_the_rate_is_the_share_of_the_full_waits_paid() -> None:
    stalled = {"events": stamps((wait_if_stalled(5.7), 0.0, wait_if_stalled(5.7)))}
    quiet = {"events": stamps((0.0, 0.0, 0.0))}
    assert fit_rates([stalled])["rates"]["training"] == pytest.approx(1.0, abs=0.01)
    assert fit_rates([stalled, quiet])["rates"]["training"] == pytest.approx(0.5, abs=0.01)
    assert fit_rates([quiet])["detail"]["training"]["stalled"] == 0
