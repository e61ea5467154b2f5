"""What the benchmarks share about a user's training: models of kinds the zoo lacks (their real
``model.fit``, timed the way the user would time it, is ``probes.real``).

``benchmarks/local_accuracy.py`` (probe vs real run here) and ``benchmarks/gpu/accelerator_check.py``
(CPU probe vs real run on a GPU) both train the same user-style models for real; the models are
saved as ``.keras`` files and probed through the safe-mode loader, like a user's own.
"""

from __future__ import annotations

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
