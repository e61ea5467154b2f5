"""keras-io's "Writing a training loop from scratch" (TensorFlow): a GradientTape step in a
tf.function over a tf.data dataset, its steps marked with advisor.probe (two lines)."""

import keras
import numpy as np
import tensorflow as tf
from _args import sizes

import advisor.probe as ap

args = sizes(epochs=4, samples=20_000)
x = np.random.rand(args.samples, 784).astype("float32")
y = np.random.randint(0, 10, args.samples)
data = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1024).batch(64)
model = keras.Sequential(
    [
        keras.Input((784,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10),
    ]
)
optimizer = keras.optimizers.SGD(learning_rate=1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb, training=True))
    grads = tape.gradient(loss, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights, strict=False))
    return loss


ap.plan(epochs=args.epochs, steps=-(-args.samples // 64), batch=64)
for _epoch in range(args.epochs):
    for xb, yb in data:
        train_step(xb, yb)
        ap.step(batch=64)
