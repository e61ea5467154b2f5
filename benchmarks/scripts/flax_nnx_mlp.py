"""A Flax NNX training loop as Flax's MNIST tutorial writes one: an ``nnx.Module`` MLP with
dropout, an ``nnx.Optimizer`` over optax's AdamW, a train step under ``nnx.jit`` taking
``nnx.value_and_grad``, shuffled batches of 128 from NumPy arrays, an evaluation pass each epoch.
Nothing in it mentions advisor: NNX's optimizer applies optax updates inside the jitted step,
which is how the step is found."""

import jax.numpy as jnp
import numpy as np
import optax
from _args import sizes
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, rngs: nnx.Rngs) -> None:
        self.hidden = nnx.Linear(784, 512, rngs=rngs)
        self.dropout = nnx.Dropout(0.2, rngs=rngs)
        self.middle = nnx.Linear(512, 512, rngs=rngs)
        self.out = nnx.Linear(512, 10, rngs=rngs)

    def __call__(self, x):
        x = self.dropout(nnx.relu(self.hidden(x)))
        return self.out(nnx.relu(self.middle(x)))


def loss_fn(model, x, y):
    return optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()


@nnx.jit
def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss


@nnx.jit
def accuracy(model, x, y):
    return jnp.mean(jnp.argmax(model(x), axis=-1) == y)


args = sizes(epochs=10, samples=30_000)
model = MLP(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)
x = np.random.rand(args.samples, 784).astype("float32")
y = np.random.randint(0, 10, args.samples)
rng = np.random.default_rng(0)
for _epoch in range(args.epochs):
    model.train()
    order = rng.permutation(args.samples)
    for start in range(0, args.samples - 127, 128):
        batch = order[start : start + 128]
        train_step(model, optimizer, x[batch], y[batch])
    model.eval()
    float(accuracy(model, x[:2000], y[:2000]))
