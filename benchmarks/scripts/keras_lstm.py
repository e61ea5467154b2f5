"""keras-io's IMDB bidirectional LSTM shape: token ids, Embedding, two Bidirectional LSTMs."""

import keras
import numpy as np
from _args import sizes

args = sizes(epochs=2, samples=2_000)
x = np.random.randint(0, 20_000, (args.samples, 200))
y = np.random.randint(0, 2, args.samples)
inputs = keras.Input(shape=(None,), dtype="int32")
h = keras.layers.Embedding(20_000, 128)(inputs)
h = keras.layers.Bidirectional(keras.layers.LSTM(64, return_sequences=True))(h)
h = keras.layers.Bidirectional(keras.layers.LSTM(64))(h)
model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(h))
model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
model.fit(x, y, batch_size=32, epochs=args.epochs, validation_split=0.1, verbose=2)
