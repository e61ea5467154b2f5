"""A real ``model.fit`` of a workload's configuration, timed as its user would time it: what a
probe's prediction is held against (``benchmarks/local_accuracy.py`` here,
``benchmarks/gpu/accelerator_check.py`` on a GPU)."""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict
from typing import Any


def user_fit_arguments(prepared: Any, config: Any) -> dict[str, Any]:
    """The arguments of ``model.fit`` as a user gives them: NumPy arrays of the configured sizes,
    shuffled, with the validation arrays, quiet. Every benchmark that times a real fit uses them."""
    from probes.fitting import arrays

    x, y = arrays(prepared, config.samples, config.batch_size, seed=0)
    validation = None
    if config.validation_samples:
        validation = arrays(prepared, config.validation_samples, config.batch_size, seed=2)
    return {"x": x, "y": y, "batch_size": config.batch_size, "epochs": config.epochs,
            "shuffle": True, "validation_data": validation, "verbose": 0}  # fmt: skip


def real_fit(spec: Any) -> dict[str, Any]:
    """Train ``spec``'s configuration for real, as a user would: build and compile (timed on
        their own), then a stopwatch around ``model.fit`` on NumPy arrays, shuffled, with validation.
        The only callback of ours has epoch hooks and no batch hook, so Keras dispatches the steps
        as it would for the user; ``epochs`` are the spans between epoch ends (the first from the
        call), ``tail`` what ``fit`` took after its last epoch ended, ``steps_per_epoch`` the steps an
    epoch of those arrays took."""
    import keras

    from probes.loading import prepare

    begin = time.perf_counter()
    prepared = prepare(spec)
    build = time.perf_counter() - begin
    arguments = user_fit_arguments(prepared, spec.config)

    class Epochs(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.ends: list[float] = []

        def on_epoch_end(self, epoch: int, logs: object = None) -> None:
            self.ends.append(time.perf_counter())

    epochs = Epochs()
    start = time.perf_counter()
    prepared.model.fit(**arguments, callbacks=[epochs])
    returned = time.perf_counter()
    from probes.data import row_count

    rows = row_count(arguments["x"]) or spec.config.samples
    return {
        "build": build,
        # an epoch of the arrays fit ran: fewer steps than configured where a synthetic-input
        # workload (the ImageNet convnets) steps a pool of 8 batches (``probes.data.rows_for``)
        "steps_per_epoch": -(-rows // spec.config.batch_size),
        "fit": returned - start,
        "epochs": [b - a for a, b in zip([start, *epochs.ends], epochs.ends, strict=False)],
        "tail": returned - epochs.ends[-1],
        "config": asdict(spec.config),
    }


def real_run(spec: Any) -> dict[str, Any]:
    """Train ``spec``'s configuration for real (``real_fit``). Its step is
    the median of the epochs after the first (tracing, compilation) over the steps an epoch of
    its arrays took, and its per-epoch figure that step times the configured epoch's steps: an
    ImageNet convnet's synthetic arrays are a pool of 8 batches, not the configured epoch (the
    check of 2026-11-26 divided by the configured steps and read those runs 5-20x too fast)."""
    run = real_fit(spec)
    step = statistics.median(run["epochs"][1:]) / run["steps_per_epoch"]
    per_epoch = step * spec.config.steps_per_epoch
    return {**run, "total": run["fit"], "step": step, "per_epoch": per_epoch}
