"""A CIFAR-10-shaped convnet fed by a tf.data pipeline that augments on the host (random crop
and flip in ``map``, shuffled, batched, prefetched), as keras-io's data-augmentation examples."""

import keras
import numpy as np
import tensorflow as tf
from _args import sizes

args = sizes(epochs=3, samples=4_000)
images = np.random.randint(0, 255, (args.samples, 32, 32, 3)).astype("uint8")
labels = np.random.randint(0, 10, args.samples)


def augment(image, label):
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.resize_with_crop_or_pad(image, 40, 40)
    image = tf.image.random_crop(image, (32, 32, 3))
    return tf.image.random_flip_left_right(image), label


data = (
    tf.data.Dataset.from_tensor_slices((images, labels))
    .shuffle(4096)
    .map(augment, num_parallel_calls=tf.data.AUTOTUNE)
    .batch(64)
    .prefetch(tf.data.AUTOTUNE)
)
model = keras.Sequential(
    [
        keras.Input((32, 32, 3)),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ]
)
model.compile("rmsprop", "sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(data, epochs=args.epochs, verbose=2)
