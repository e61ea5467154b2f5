"""What the host pays to dispatch one training step, whatever the step computes.

A training step that does almost nothing (one weight, a batch of one) still runs the whole loop:
Keras' callbacks, the compiled step's call, the executor, the optimizer's update, the batch's
copy in. Timed here, that is the host's per-step dispatch: on an accelerator the host runs the
same loop for every step, so no step there can take less (``advisor.estimate.floor``). It is not
the intercept of step time against batch size, which also holds a CPU's batch-independent work
(a recurrent layer's time steps run one after another whatever the batch).
"""

from __future__ import annotations

import threading

from probes import quiet
from probes.fitting import Progress, fit, steady_of
from probes.fitting import quiet as no_progress

ROWS = 512


def dispatch_seconds(
    started: float,
    deadline: float,
    report: Progress = no_progress,
    cancel: threading.Event | None = None,
) -> float:
    """Seconds of one training step of a one-weight model at batch 1 on this host: the lower
    quartile of its steady steps (a floor is what the host pays at least; a collection or a
    neighbour's burst only adds time, and one such burst must not move the floor)."""
    quiet.prepare()
    import keras
    import numpy as np

    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)], name="dispatch")
    model.compile(optimizer="sgd", loss="mse")
    x = np.zeros((ROWS, 1), dtype="float32")
    timer = fit(model, x, x, 1, started, deadline, report, cancel)
    _, start = steady_of(timer)
    steps = sorted(timer.stamps.steady_durations(start) or timer.stamps.durations()[-1:])
    return steps[len(steps) // 4]  # a floor: noise only adds time, so its lower quartile
