"""A user's JAX loop (a jitted step applying optax updates), probed with no edit through
``advisor.probe.jax_hook``: real JAX training in a process of its own."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from probes import script

pytestmark = pytest.mark.jax
LOOP = Path(__file__).resolve().parents[2] / "benchmarks" / "scripts" / "jax_optax_mlp.py"


def test_a_jitted_optax_step_is_probed_without_an_edit() -> None:
    """The benchmark's JAX loop (a 784-512-512-10 MLP, Adam through optax, an accuracy pass
    each epoch): the jitted step that applies updates reports each call (the accuracy's jit
    does not), its batch from its last argument, and XLA's FLOPs for it: the forward and
    backward products, 4 x 784 x 512 + 6 x 512 x 512 + 6 x 512 x 10 a sample (the first
    layer's input gradient never computed), a few percent more for Adam and the activations."""
    command = [sys.executable, str(LOOP), "--epochs", "1000", "--samples", "6400"]
    run = script.run_command(command, budget=6.0)
    script.check_run(run, 6.0)
    events = run.events
    assert events.backend == "jax" and set(events.batches) == {128}
    assert len(events.counted) == 1 and len(events.steps) > 20
    products = 4 * 784 * 512 + 6 * 512 * 512 + 6 * 512 * 10
    assert events.plan["flops_per_sample"] == pytest.approx(products, rel=0.1)
    sizes = script.sizes_of(events, epochs=3, samples=6400, batch_size=None)
    assert (sizes.epochs, sizes.steps, sizes.batch) == (3, 50, 128)


def test_a_flax_nnx_loop_is_probed_through_the_optax_update_its_optimizer_applies() -> None:
    """Flax NNX's tutorial loop (an ``nnx.Module`` MLP with dropout, ``nnx.Optimizer`` over
    optax's AdamW, the step under ``nnx.jit``): NNX's optimizer applies optax's updates inside
    the jitted step, which is found and counted as a plain JAX loop's, with no edit."""
    nnx_loop = LOOP.with_name("flax_nnx_mlp.py")
    command = [sys.executable, str(nnx_loop), "--epochs", "1000", "--samples", "6400"]
    run = script.run_command(command, budget=8.0)
    script.check_run(run, 8.0)
    events = run.events
    assert events.backend == "jax" and set(events.batches) == {128}
    assert len(events.counted) == 1 and len(events.steps) > 20
    products = 4 * 784 * 512 + 6 * 512 * 512 + 6 * 512 * 10
    assert events.plan["flops_per_sample"] == pytest.approx(products, rel=0.15)
