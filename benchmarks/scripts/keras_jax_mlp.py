"""The MNIST MLP under Keras's JAX backend (KERAS_BACKEND=jax set before Keras is imported)."""

import os

os.environ["KERAS_BACKEND"] = "jax"

import keras
import numpy as np
from _args import sizes

args = sizes(epochs=6, samples=30_000)
x = np.random.rand(args.samples, 784).astype("float32")
y = np.random.randint(0, 10, args.samples)
model = keras.Sequential(
    [
        keras.Input((784,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ]
)
model.compile("rmsprop", "sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x, y, batch_size=128, epochs=args.epochs, validation_split=0.1, verbose=2)
