"""A custom loop with gradient accumulation (4 micro-batches of 32 a step) and a learning-rate
schedule, its optimizer steps marked with advisor.probe."""

import keras
import numpy as np
import tensorflow as tf
from _args import sizes

import advisor.probe as ap

args = sizes(epochs=3, samples=12_800)
MICRO, ACCUMULATE = 32, 4
x = np.random.rand(args.samples, 28, 28, 1).astype("float32")
y = np.random.randint(0, 10, args.samples)
data = tf.data.Dataset.from_tensor_slices((x, y)).batch(MICRO)
model = keras.Sequential(
    [
        keras.Input((28, 28, 1)),
        keras.layers.Conv2D(16, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(10),
    ]
)
steps = args.samples // (MICRO * ACCUMULATE)
schedule = keras.optimizers.schedules.CosineDecay(1e-3, decay_steps=steps * args.epochs)
optimizer = keras.optimizers.Adam(learning_rate=schedule)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def gradients(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb, training=True)) / ACCUMULATE
    return tape.gradient(loss, model.trainable_weights)


ap.plan(epochs=args.epochs, steps=steps, batch=MICRO * ACCUMULATE)
for _epoch in range(args.epochs):
    summed = None
    for i, (xb, yb) in enumerate(data):
        grads = gradients(xb, yb)
        summed = grads if summed is None else [s + g for s, g in zip(summed, grads, strict=False)]
        if (i + 1) % ACCUMULATE == 0:
            optimizer.apply_gradients(zip(summed, model.trainable_weights, strict=False))
            summed = None
            ap.step(batch=MICRO * ACCUMULATE)
