"""A user's JAX loop (a jitted step applying optax updates, by hand or through Flax NNX's
optimizer), probed with no edit through ``advisor.probe.jax_hook``: real JAX training in a
process of its own."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from advisor.probe import jax_hook
from probes import script

pytestmark = pytest.mark.jax
SCRIPTS = Path(__file__).resolve().parents[2] / "benchmarks" / "scripts"
PRODUCTS = 4 * 784 * 512 + 6 * 512 * 512 + 6 * 512 * 10
"""Training FLOPs a sample of the loops' 784-512-512-10 MLP: the forward and backward
products, the first layer's input gradient never computed."""


@pytest.mark.parametrize(
    ("loop", "budget", "slack"),
    [
        ("jax_optax_mlp.py", 6.0, 0.1),  # Adam's update and the activations: a few percent
        ("flax_nnx_mlp.py", 8.0, 0.15),  # AdamW's weight decay and dropout's masks besides
    ],
)
def test_a_jitted_step_that_applies_optax_updates_is_probed_without_an_edit(
    loop: str, budget: float, slack: float
) -> None:
    """The benchmarks' JAX loops, probed as written: optax's MNIST-style loop (params in a
    dict, Adam, an accuracy pass each epoch) and Flax NNX's tutorial loop (an ``nnx.Module``
    with dropout, ``nnx.Optimizer`` over optax's AdamW, the step under ``nnx.jit``, whose
    optimizer applies optax's updates inside it). The jitted step that applies updates reports
    each call (the accuracy's jit does not), its batch from its last argument, and XLA's FLOPs
    for it."""
    command = [sys.executable, str(SCRIPTS / loop), "--epochs", "1000", "--samples", "6400"]
    run = script.run_command(command, budget=budget)
    script.check_run(run, budget)
    events = run.events
    assert events.backend == "jax" and set(events.batches) == {128}
    assert len(events.counted) == 1 and len(events.steps) > 20
    assert events.plan["flops_per_sample"] == pytest.approx(PRODUCTS, rel=slack)
    sizes = script.sizes_of(events, epochs=3, samples=6400, batch_size=None)
    assert (sizes.epochs, sizes.steps, sizes.batch) == (3, 50, 128)


DONATING = """
import functools, sys
import jax, jax.numpy as jnp, optax

optimizer = optax.sgd(0.01)


@functools.partial(jax.jit, donate_argnums=(0, 1))
def train_step(params, state, x):
    grads = jax.grad(lambda p: jnp.mean((x @ p) ** 2))(params)
    updates, state = optimizer.update(grads, state)
    return optax.apply_updates(params, updates), state


params = jnp.ones((256, 256)) / 256
state = optimizer.init(params)
for _ in range(int(sys.argv[1])):
    params, state = train_step(params, state, jnp.ones((32, 256)))
print("trained", float(params.sum()))
"""


def test_a_step_that_donates_all_it_returns_is_still_timed_step_by_step(tmp_path: Path) -> None:
    """A step is said once later ones are dispatched, waiting for its outputs; a step that
    returns only what the next one donates (``donate_argnums``) leaves none of them to wait
    for, so the hook waits for a later step's, which needed them. Every step but the last
    ``IN_FLIGHT`` is said, and the script ends as it would unwatched."""
    path = tmp_path / "donating.py"
    path.write_text(DONATING)
    run = script.run_command([sys.executable, str(path), "60"], budget=30.0)
    assert not run.ended_by_probe and run.returncode == 0
    assert any("trained" in line for line in run.output_tail)
    events = run.events
    assert len(events.steps) == 60 - jax_hook.IN_FLIGHT and set(events.batches) == {32}
    assert len(events.counted) == 1 and events.plan["flops_per_sample"] > 0
    assert all(later > earlier for earlier, later in itertools.pairwise(events.steps))
