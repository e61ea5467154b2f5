"""What the benchmarks share about a user's training: models of kinds the zoo lacks, and a real
``model.fit`` timed the way the user would time it.

``benchmarks/local_accuracy.py`` (probe vs real run here) and ``benchmarks/accelerator_check.py``
(CPU probe vs real run on a GPU) both train the same user-style models for real; the models are
saved as ``.keras`` files and probed through the safe-mode loader, like a user's own.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any


def make_user_models(folder: Path) -> None:
    """User-style models of kinds the zoo lacks, saved as .keras files (run in a worker)."""
    import keras
    from keras import Input, Model, Sequential, layers

    def save(model: Any, optimizer: Any, loss: str) -> None:
        model.compile(optimizer, loss)
        model.save(folder / f"{model.name}.keras")

    dense = [layers.Dense(1024, activation="relu"), layers.Dense(512, activation="relu")]
    save(Sequential([Input((300,)), *dense, layers.Dense(10, activation="softmax")],
                    name="tabular"), "adam", "sparse_categorical_crossentropy")  # fmt: skip
    wide = [layers.Dense(2048, activation="relu"), layers.Dense(2048, activation="relu")]
    save(Sequential([Input((2048,)), *wide, layers.Dense(100, activation="softmax")],
                    name="wide_dense"),
         keras.optimizers.SGD(0.01, momentum=0.9), "sparse_categorical_crossentropy")  # fmt: skip
    save(Sequential([Input((80,), dtype="int32"), layers.Embedding(10_000, 64), layers.GRU(96),
                     layers.Dense(1, activation="sigmoid")], name="gru"),
         "adam", "binary_crossentropy")  # fmt: skip

    tokens = Input((64,), dtype="int32")
    x = layers.Embedding(8_000, 128)(tokens)
    attended = layers.MultiHeadAttention(num_heads=4, key_dim=32)(x, x)
    x = layers.LayerNormalization()(layers.add([x, attended]))
    x = layers.LayerNormalization()(
        layers.add([x, layers.Dense(128)(layers.Dense(256, activation="relu")(x))])
    )
    outputs = layers.Dense(5, activation="softmax")(layers.GlobalAveragePooling1D()(x))
    save(Model(tokens, outputs, name="attention"), "adam", "sparse_categorical_crossentropy")

    save(Sequential([Input((256, 8)), layers.Conv1D(64, 7, activation="relu"),
                     layers.MaxPooling1D(2), layers.Conv1D(128, 5, activation="relu"),
                     layers.GlobalMaxPooling1D(), layers.Dense(1)], name="conv1d"),
         "adam", "mse")  # fmt: skip


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
