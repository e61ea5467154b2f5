"""The LLM fine-tuning stack a probed script runs on, as the modules it imported say.

Read once, at the third training step (``events``): by then the script has imported what it
trains with. Each stack's evidence, most specific first (a wrapper before what it wraps):

- ``unsloth``: Unsloth (it patches Hugging Face's models and ``trl``);
- ``hf``: Axolotl and LLaMA-Factory, which train through Hugging Face's ``Trainer``;
- ``torchtune``, ``torchtitan``: PyTorch's own recipes;
- ``automodel``: NVIDIA NeMo AutoModel (FSDP2 on Hugging Face's models);
- ``nemo``: NVIDIA NeMo, or Megatron's ``core`` or ``bridge``;
- ``llm-foundry``: MosaicML's ``llmfoundry``, or its ``composer``;
- ``hf``: ``transformers`` with ``trl``, ``peft`` or its ``Trainer`` (``transformers.trainer``).

A plain PyTorch, Keras or JAX loop is none of them. Only ``sys.modules`` is read: nothing is
imported, and the names looked up are a fixed few.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

_SPECIFIC = (
    ("unsloth", ("unsloth",)),
    ("hf", ("axolotl",)),
    ("hf", ("llamafactory",)),
    ("torchtune", ("torchtune",)),
    ("torchtitan", ("torchtitan",)),
    ("automodel", ("nemo_automodel",)),
    ("nemo", ("nemo", "megatron.core", "megatron.bridge")),
    ("llm-foundry", ("llmfoundry", "composer")),
)
"""Stacks a module of their own names, most specific first, with the modules that say it."""
_HF_WITH = ("trl", "peft", "transformers.trainer")
"""What ``transformers`` needs beside it to be a fine-tuning stack (not a model borrowed)."""


def detect(modules: Mapping[str, object] | None = None) -> tuple[str, list[str]] | None:
    """The stack ``modules`` (``sys.modules``) say and the module names that say it, or None."""
    imported = sys.modules if modules is None else modules
    for stack, names in _SPECIFIC:
        found = [name for name in names if name in imported]
        if found:
            return stack, found
    if "transformers" in imported:
        found = [name for name in _HF_WITH if name in imported]
        if found:
            return "hf", ["transformers", *found]
    return None
