"""What the host pays to dispatch one training step, whatever the step computes.

A training step that does almost nothing (one weight, a batch of one) still runs the whole loop:
Keras' callbacks, the compiled step's call, the executor, the optimizer's update, the batch's
copy in. Timed here, that is the host's per-step dispatch, the least any accelerator step can
take (``advisor.estimate.floor``). It is not the intercept of step time against batch size,
which also holds a CPU's batch-independent work. ``layer_seconds`` times a chain of tiny layers
beside the one-weight model: the host work each layer adds, large under an eager backend
(PyTorch), small under a compiled graph (docs/PREDICTION.md, "The host part on an accelerator")."""

from __future__ import annotations

import threading
from typing import Any

from probes import quiet
from probes.fitting import Progress, fit, steady_of
from probes.fitting import quiet as no_progress

ROWS = 512
CHAIN_BLOCKS = 8
"""Blocks of the layer chain, each a dense layer, a batch normalisation and an activation: the
three kinds that make up most of a convnet's layers."""


def dispatch_seconds(
    started: float,
    deadline: float,
    report: Progress = no_progress,
    cancel: threading.Event | None = None,
) -> float:
    """Seconds of one training step of a one-weight model at batch 1 on this host: the lower
    quartile of its steady steps (``_floor_step``)."""
    quiet.prepare()
    import keras

    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)], name="dispatch")
    return _floor_step(model, 1, started, deadline, report, cancel)


def layer_seconds(
    started: float,
    deadline: float,
    dispatch: float,
    report: Progress = no_progress,
    cancel: threading.Event | None = None,
) -> float:
    """Host seconds a training step pays per layer beyond ``dispatch`` (the one-weight model's
    step): a chain of ``CHAIN_BLOCKS`` dense, normalisation and activation layers at batch 1,
    whose arithmetic is nothing, stepped like the one-weight model; its lower-quartile step less
    ``dispatch``, over its layers (never below 0)."""
    quiet.prepare()
    import keras

    layers: list[object] = [keras.Input((8,))]
    for _ in range(CHAIN_BLOCKS):
        layers += [keras.layers.Dense(8), keras.layers.BatchNormalization(), keras.layers.ReLU()]
    model = keras.Sequential(layers, name="layer_chain")
    step = _floor_step(model, 8, started, deadline, report, cancel)
    return max(0.0, step - dispatch) / len(model.layers)


def _floor_step(
    model: Any,
    width: int,
    started: float,
    deadline: float,
    report: Progress,
    cancel: threading.Event | None,
) -> float:
    """The lower quartile of ``model``'s steady steps at batch 1 on zeros ``width`` wide (a floor
    is what the host pays at least; a collection or a neighbour's burst only adds time, and one
    such burst must not move the floor)."""
    import numpy as np

    model.compile(optimizer="sgd", loss="mse")
    x = np.zeros((ROWS, width), dtype="float32")
    timer = fit(model, x, x, 1, started, deadline, report, cancel)
    _, start = steady_of(timer)
    steps = sorted(timer.stamps.steady_durations(start) or timer.stamps.durations()[-1:])
    return steps[len(steps) // 4]
