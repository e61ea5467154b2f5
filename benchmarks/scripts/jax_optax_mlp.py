"""A JAX training loop as optax's and Flax's MNIST examples write one: an MLP's parameters in a
dict, a jitted step taking value_and_grad and applying Adam's updates with optax, shuffled
batches of 128 from NumPy arrays, an evaluation pass each epoch. Nothing in it mentions advisor:
the jitted step is found because its trace applies optax updates."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
from _args import sizes


def loss_fn(params, x, y):
    hidden = jax.nn.relu(x @ params["w1"] + params["b1"])
    hidden = jax.nn.relu(hidden @ params["w2"] + params["b2"])
    logits = hidden @ params["w3"] + params["b3"]
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


tx = optax.adam(1e-3)


@jax.jit
def train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


@jax.jit
def accuracy(params, x, y):
    hidden = jax.nn.relu(jax.nn.relu(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"])
    return jnp.mean(jnp.argmax(hidden @ params["w3"] + params["b3"], axis=-1) == y)


args = sizes(epochs=10, samples=30_000)
keys = jax.random.split(jax.random.PRNGKey(0), 3)
shapes = [(784, 512), (512, 512), (512, 10)]
params = {}
for n, (key, shape) in enumerate(zip(keys, shapes, strict=True), start=1):
    params[f"w{n}"] = jax.random.normal(key, shape) * (2 / shape[0]) ** 0.5
    params[f"b{n}"] = jnp.zeros(shape[1])
opt_state = tx.init(params)
x = np.random.rand(args.samples, 784).astype("float32")
y = np.random.randint(0, 10, args.samples)
rng = np.random.default_rng(0)
for _epoch in range(args.epochs):
    order = rng.permutation(args.samples)
    for start in range(0, args.samples - 127, 128):
        batch = order[start : start + 128]
        params, opt_state, loss = train_step(params, opt_state, x[batch], y[batch])
    float(accuracy(params, x[:2000], y[:2000]))
