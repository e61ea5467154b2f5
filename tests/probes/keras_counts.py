"""Save one model of each layer kind ``advisor.workloads.weights`` counts; print each one's name and Keras'
own parameter count (run by ``test_weights.test_counts_match_keras`` in a process of its own)."""

from __future__ import annotations

import sys
from pathlib import Path


def main(folder: Path) -> None:
    import keras

    layers = keras.layers

    def sequential(*stack: object, shape: tuple[int, ...]) -> keras.Model:
        return keras.Sequential([keras.Input(shape=shape), *stack])

    models = {
        "dense": sequential(layers.Dense(7), layers.Dense(3, use_bias=False), shape=(5,)),
        "conv": sequential(
            layers.Conv2D(8, 3),
            layers.BatchNormalization(),
            layers.DepthwiseConv2D(3, depth_multiplier=2),
            layers.SeparableConv2D(4, 3),
            layers.Conv2D(4, 3, groups=2),
            layers.Conv2DTranspose(3, 2),
            layers.GlobalAveragePooling2D(),
            layers.Dense(2),
            shape=(16, 16, 3),
        ),
        "conv1d": sequential(layers.Conv1D(6, 5), layers.LayerNormalization(), shape=(20, 4)),
        "recurrent": sequential(
            layers.Embedding(100, 8),
            layers.LSTM(5, return_sequences=True),
            layers.GRU(4, return_sequences=True),
            layers.GRU(3, reset_after=False, return_sequences=True),
            layers.SimpleRNN(2, return_sequences=True),
            layers.Bidirectional(layers.LSTM(3)),
            shape=(10,),
        ),
        "time_distributed": sequential(layers.TimeDistributed(layers.Dense(4)), shape=(6, 3)),
        "nested": sequential(sequential(layers.Dense(4), shape=(3,)), layers.Dense(2), shape=(3,)),
    }
    query, value = keras.Input(shape=(7, 12)), keras.Input(shape=(4, 9))
    attended = layers.MultiHeadAttention(num_heads=3, key_dim=4, value_dim=6)(query, value)
    models["attention"] = keras.Model([query, value], layers.Dense(1)(attended))
    for name, model in models.items():
        model.compile(optimizer="adam", loss="mse")
        model.save(folder / f"{name}.keras")
        print(name, model.count_params())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
