"""Inside a user's training script under ``advisor probe -- COMMAND``: what its steps report.

``advisor probe`` runs the script with ``ADVISOR_PROBE_EVENTS`` naming a file and this package
installed by ``sitecustomize`` (``probes/script_site``), with no edit to the script:

- Keras (``keras_hook``): every ``Model.fit`` reports its plan (epochs, steps an epoch, batch),
  each training step's end, each epoch's end and the model's layers, counted after its first
  step, on any backend.
- PyTorch (``torch_hook``): every optimizer step (a plain loop, Hugging Face's ``Trainer``,
  Lightning, accelerate), the batches a ``DataLoader`` gave before it and the wait for them,
  an epoch's end when the loader runs out, and one step's FLOPs counted by PyTorch; the epochs
  a Hugging Face or Lightning ``Trainer`` holds (``trainers``).
- JAX (``jax_hook``): each call of a jitted function whose trace applied optax updates (a
  plain optax loop, Flax's ``TrainState``), its batch, and XLA's count of its FLOPs.
- Any of them, at the third step (``events``, ``stacks``): the LLM fine-tuning stack the
  script's imported modules show (Hugging Face, torchtune, torchtitan, NeMo or its AutoModel, Unsloth,
  llm-foundry), where they show one.

A loop neither framework runs marks its steps itself::

    import advisor.probe as ap
    for batch in loader:
        train_step(batch)
        ap.step(batch=len(batch))

Outside a probe (no ``ADVISOR_PROBE_EVENTS``) every call here does nothing. This package imports
nothing but the standard library: it runs in the user's process, under the user's interpreter,
and reaches a framework only once the script has imported it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from typing import Any

from advisor.probe.events import EVENTS, emit, probing

__all__ = ["EVENTS", "install", "plan", "step"]


def step(batch: int | None = None) -> None:
    """One training step has ended (``batch``: the samples it computed, when known)."""
    emit({"event": "step", "batch": batch})


def plan(
    *,
    epochs: int | None = None,
    steps: int | None = None,
    batch: int | None = None,
    flops_per_sample: float | None = None,
) -> None:
    """The run's size as the script knows it: epochs, optimizer steps an epoch, batch; and the
    training FLOPs of one sample (forward and backward), which let other devices be predicted."""
    emit({"event": "plan", "epochs": epochs, "steps": steps, "batch": batch,
          "flops_per_sample": flops_per_sample})  # fmt: skip


def install() -> None:
    """Hook each framework once the script imports it (nothing when no probe is running)."""
    from advisor.probe import jax_hook, keras_hook, torch_hook, trainers

    hooks = {
        "keras": keras_hook.patch,
        "torch": torch_hook.patch,
        "jax": jax_hook.patch_jax,
        "optax": jax_hook.patch_optax,
        "transformers.trainer": trainers.patch_transformers,
        "lightning.pytorch.trainer.trainer": trainers.patch_lightning,
        "pytorch_lightning.trainer.trainer": trainers.patch_lightning,
    }
    if not probing() or any(isinstance(f, _AfterImport) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _AfterImport(hooks))
    for name, patch in hooks.items():
        if name in sys.modules:
            patch(sys.modules[name])


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds a hooked framework as Python would, and patches it once its module has run."""

    def __init__(self, hooks: dict[str, Callable[[Any], None]]) -> None:
        self.hooks = hooks

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        patch = self.hooks.get(name)
        if patch is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            try:
                patch(module)
            except Exception as error:  # never stop the user's script
                sys.stderr.write(f"advisor: the {name} hooks are not installed ({error})\n")

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
