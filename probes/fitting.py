"""The building blocks every probe phase shares: synthetic arrays, a self-stopping fit, cancel.

``run`` (the probe), ``scaling`` (heavy workloads at smaller batches) and ``threads`` (a fresh
process per thread count) all time real ``model.fit`` calls the same way; they meet here, so none
of them reaches into another's private functions. TensorFlow is never imported by this module:
the prepared model brings it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from advisor.errors import Cancelled
from probes import data, stats
from probes.loading import Prepared, trained_equivalent
from probes.timing import Stamps, StopRule, Timer, make_timer


@dataclass(frozen=True)
class ProbeProgress:
    """A snapshot for progress displays (the app draws a sparkline from ``recent``)."""

    phase: str
    """``build``, ``steady``, ``epochs`` or ``done``."""
    steps: int
    recent: tuple[float, ...]
    """The latest step durations (seconds), oldest first."""
    relative_half_width: float | None
    """Current 95% half-width of the step time, relative; None until enough steady steps."""
    elapsed_seconds: float
    eta_seconds: float | None


Progress = Callable[[ProbeProgress], None]


@dataclass(frozen=True)
class Measurement:
    """The timed part of a probe, as a phase found it (``run`` adds the model's facts)."""

    step_seconds: float
    step_interval: tuple[float, float]
    validation_step_seconds: float
    epoch_overhead_seconds: float
    startup_seconds: float
    predicted_seconds: float
    predicted_interval: tuple[float, float]
    batch_scaling: dict[int, float]
    """Batch size -> steady step seconds, for every batch size measured."""
    extrapolated: bool = False
    teardown_seconds: float = 0.0
    """Modelled waits of dropped tf.data iterators (``probes.teardown``), in the prediction."""
    arrays: tuple[object, object] | None = None
    """The steady fit's inputs and targets, kept for the op profile (None when extrapolated)."""


def quiet(_: ProbeProgress) -> None:
    """A progress callback that draws nothing."""


def arrays(prepared: Prepared, samples: int, batch: int, seed: int) -> tuple[object, object]:
    """Synthetic inputs and targets of ``prepared``'s shapes, ``samples`` rows (or a pool-sized
    tile of them), after checking they fit in memory."""
    specs = [*prepared.inputs, prepared.target]
    rows = data.rows_for(specs, samples, batch, pool=prepared.pool)
    data.check_memory(
        data.training_bytes(trained_equivalent(prepared.model), specs, rows, batch),
        f"{prepared.model.name} with {rows:,} samples of batch {batch}",
    )
    xs = [data.make(spec, rows, seed + i) for i, spec in enumerate(prepared.inputs)]
    return data.as_inputs(xs), data.make(prepared.target, rows, seed + 99)


def fit(
    model: Any,
    x: object,
    y: object,
    batch: int,
    started: float,
    deadline: float,
    report: Progress = quiet,
    cancel: threading.Event | None = None,
    *,
    min_seconds: float = 0.0,
    reserve_steps: float = 0.0,
    reserve_seconds: float = 0.0,
) -> Timer:
    """One ``model.fit`` (a compiled Keras model) that stops itself when the steady step time is known (``StopRule``),
    reporting progress as it goes; returns the timer with every step's stamp."""

    def on_check(stamps: Stamps, steady: stats.SteadyStats | None) -> None:
        durations = stamps.durations()
        now = time.perf_counter()
        eta = max(0.0, deadline - now)
        if steady is not None and steady.relative_half_width < math.inf:
            needed = steady.steps * (steady.relative_half_width / 0.02) ** 2
            eta = min(eta, max(0.0, needed - steady.steps) * steady.mean)
        rel = steady.relative_half_width if steady else None
        report(
            ProbeProgress("steady", len(durations), tuple(durations[-40:]), rel, now - started, eta)
        )

    rule = StopRule(deadline=deadline, cancel=cancel, on_check=on_check, min_seconds=min_seconds,
                    reserve_steps=reserve_steps, reserve_seconds=reserve_seconds)  # fmt: skip
    timer = make_timer(rule)
    model.fit(x, y, batch_size=batch, epochs=1_000_000, shuffle=True, verbose=0, callbacks=[timer])
    if timer.cancelled:
        raise Cancelled("probe cancelled; nothing was stored")
    check_cancel(cancel)
    return timer


def steady_steps(timer: Timer) -> tuple[list[float], int]:
    """The steady steps of a fit and the index of its first steady step (where the warm-up ends;
    the first steps are dropped when the fit never became steady). Steps that began an epoch
    carry its boundary and are left out, unless every step began one (epochs of one batch):
    then the steps after the warm-up stand in."""
    durations = timer.stamps.durations()
    start = stats.warmup_end(durations)
    if start is None:
        start = min(2, len(durations) - 1) if len(durations) > 2 else 1
    steps = timer.stamps.steady_durations(start) or durations[start:] or durations[-1:]
    return steps, start


def steady_of(timer: Timer) -> tuple[stats.SteadyStats, int]:
    """The steady step statistics of a fit and the index of its first steady step."""
    steps, start = steady_steps(timer)
    return stats.steady_stats(steps), start


def check_cancel(cancel: threading.Event | None) -> None:
    """Raise ``Cancelled`` once ``cancel`` is set."""
    if cancel is not None and cancel.is_set():
        raise Cancelled("probe cancelled; nothing was stored")
