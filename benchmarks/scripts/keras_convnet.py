"""keras-io's "Simple MNIST convnet": two convolutions, max pooling, dropout, Adam."""

import keras
import numpy as np
from _args import sizes

args = sizes(epochs=3, samples=8_000)
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
