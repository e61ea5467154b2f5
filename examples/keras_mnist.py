"""A Keras training script as people write it (keras-io's "Simple MNIST convnet", on arrays of
MNIST's shapes so that it runs without a download). Probe it without editing it:

    advisor probe -- python examples/keras_mnist.py
    advisor recommend --model keras_mnist --deadline 1h

``benchmarks/own_scripts.py`` runs it too, smaller (``--epochs``, ``--samples``).
"""

import argparse

import keras
import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=15)
parser.add_argument("--samples", type=int, default=60_000)
args = parser.parse_args()
x = np.random.rand(args.samples, 28, 28, 1).astype("float32")
y = keras.utils.to_categorical(np.random.randint(0, 10, args.samples), 10)
model = keras.Sequential(
    [
        keras.Input(shape=(28, 28, 1)),
        keras.layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
        keras.layers.MaxPooling2D(pool_size=(2, 2)),
        keras.layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
        keras.layers.MaxPooling2D(pool_size=(2, 2)),
        keras.layers.Flatten(),
        keras.layers.Dropout(0.5),
        keras.layers.Dense(10, activation="softmax"),
    ]
)
model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
model.fit(x, y, batch_size=128, epochs=args.epochs, validation_split=0.1, verbose=2)
