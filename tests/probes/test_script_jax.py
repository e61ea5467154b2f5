"""A user's JAX loop (a jitted step applying optax updates), probed with no edit through
``advisor.probe.jax_hook``: real JAX training in a process of its own."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from probes import script

pytestmark = pytest.mark.jax

LOOP = """
    import jax, jax.numpy as jnp, numpy as np, optax

    def loss_fn(p, x, y):
        logits = jax.nn.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    tx = optax.adam(1e-3)

    @jax.jit
    def train_step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    @jax.jit
    def evaluate(params, x, y):  # no updates: not a training step
        return loss_fn(params, x, y)

    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    params = {"w1": jax.random.normal(k1, (784, 256)) * 0.05, "b1": jnp.zeros(256),
              "w2": jax.random.normal(k2, (256, 10)) * 0.05, "b2": jnp.zeros(10)}
    opt_state = tx.init(params)
    x, y = np.random.rand(6400, 784).astype("float32"), np.random.randint(0, 10, 6400)
    for epoch in range(1000):
        for i in range(0, 6400, 128):
            params, opt_state, loss = train_step(params, opt_state, x[i:i+128], y[i:i+128])
        evaluate(params, x[:1000], y[:1000])
"""


def test_a_jitted_optax_step_is_probed_without_an_edit(tmp_path: Path) -> None:
    """The jitted step that applies updates reports each call (the evaluation's jit does not),
    its batch from its last argument, and XLA's FLOPs for it: the forward and backward
    products of a 784-256-10 MLP (4 x 784 x 256 + 6 x 256 x 10 a sample, the first layer's input
    gradient never computed), a few percent more for the optimizer and the activations."""
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(LOOP))
    run = script.run_command([sys.executable, str(path)], budget=6.0)
    script.check_run(run, 6.0)
    events = run.events
    assert events.backend == "jax" and set(events.batches) == {128}
    assert len(events.counted) == 1 and len(events.steps) > 20
    assert events.plan["flops_per_sample"] == pytest.approx(4 * 784 * 256 + 6 * 256 * 10, rel=0.1)
    sizes = script.sizes_of(events, epochs=3, samples=6400, batch_size=None)
    assert (sizes.epochs, sizes.steps, sizes.batch) == (3, 50, 128)
