"""The software an LLM is fine-tuned with: Hugging Face's, torchtune, torchtitan, NeMo, Unsloth.

An LLM job's speed and memory depend on its stack as much as on its GPU: whether the step is
compiled, how the loss is computed, whether activations are recomputed, the trained weights'
precision and the optimizer. Each stack's defaults are ``data/llm-stacks.csv``'s (sourced in
docs/SOURCES.md, "Training stacks"); what a user says (``--checkpointing``) wins over them. A
stack's speed beyond its recipe is 1 unless a paired published comparison measured it (a speed
fitted to each stack's runs did not carry to its held-out runs: docs/PREDICTION.md); a stack
with no published run of its own is checked as its ``nearest`` and says so. No TensorFlow here.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, replace
from functools import lru_cache

from advisor import display
from advisor.errors import UsageError, did_you_mean
from advisor.locations import shipped
from advisor.workloads.llm import FineTune

STACKS_FILE = "llm-stacks.csv"
DEFAULT = "hf"
"""The stack most people fine-tune with: Hugging Face's Trainer or TRL with PEFT (Axolotl and
LLaMA-Factory run on it)."""
LOSSES = ("plain", "chunked", "fused")


@dataclass(frozen=True)
class TrainingStack:
    """One fine-tuning stack and the recipe it runs unless told otherwise."""

    id: str
    title: str
    aliases: tuple[str, ...]
    engine: str
    """Its kernels in words (``torch.compile, chunked cross-entropy``)."""
    methods: tuple[str, ...]
    compiled: bool
    """The step runs under ``torch.compile`` (``FineTune.compiled``: speed and memory rule)."""
    loss: str
    """``plain`` (fp32 logits), ``chunked`` (over chunks of them) or ``fused`` (one kernel)."""
    checkpointing: bool
    master: str
    optimizer: str
    optimizer_in_backward: bool
    activation_offload: bool
    runs_on: tuple[str, ...]
    """The kinds of accelerator it trains on (``gpu``: NVIDIA's; ``tpu``: through PyTorch/XLA)."""
    fp8: bool
    """It trains in FP8 where the GPU can (Transformer Engine, torchao)."""
    speed: float
    """How much faster its kernels run a step than the recipe's count says: 1 but where a paired
    published comparison (same GPU, model and configuration, another stack) measured it."""
    nearest: str
    """The stack whose published runs stand for its own when it has none."""
    parallel: tuple[str, ...]
    """How it spreads a model over GPUs: ``fsdp``, ``hsdp`` (FSDP within each node), ``tp``
    and ``pp`` (tensor and pipeline parallel)."""
    launch: str
    """Its launch line on one node (``{gpus}``, ``{method}`` filled in)."""
    launch_nodes: str
    """Its launch line on each node of a cluster (SkyPilot's variables)."""
    attention: str
    """Its fused attention kernel (``FineTune.attention``): ``native`` or ``fa2``."""
    kept: str
    """What its layers keep for the backward pass (``llm_memory.layer_kept_bytes``): ``eager``
    (each operation its own inputs, as PyTorch's autograd keeps them) or ``te`` (Megatron-Core on
    Transformer Engine's layers)."""
    loss_in_forward: bool
    """The model's forward computes the loss from labels (Hugging Face's, Megatron-Core's), so a
    compiled model compiles its loss with it (``llm_memory.logit_memory_bytes``)."""

    def recipe(self, tune: FineTune, checkpointing: bool | None = None) -> FineTune:
        """``tune`` as this stack runs it; ``checkpointing`` when the user said."""
        recompute = self.checkpointing if checkpointing is None else checkpointing
        return replace(
            tune,
            stack=self.id,
            compiled=self.compiled,
            chunked_loss=self.loss == "chunked",
            fused_loss=self.loss == "fused",
            checkpointing=recompute,
            master=self.master,
            optimizer=self.optimizer,
            optimizer_in_backward=self.optimizer_in_backward,
            activation_offload=self.activation_offload and recompute,  # offloads what it keeps
            attention=self.attention,
        )

    def describe(self) -> str:
        """``torchtune (compiled recipes): torch.compile, chunked cross-entropy, ...``."""
        return f"{self.title}: {self.engine}"

    def launch_line(self, gpus: int, method: str, nodes: int = 1) -> str:
        """The command that starts the job on a node."""
        if nodes > 1:
            return self.launch_nodes.replace("{method}", _recipe_method(method))
        line = self.launch.replace("{gpus}", str(gpus))
        return line.replace("{method}", _recipe_method(method))


def _recipe_method(method: str) -> str:
    """torchtune names its recipes ``full_...`` and ``lora_...`` (QLoRA runs the LoRA one)."""
    return "full" if method == "full" else "lora"


def _flag(text: str) -> bool:
    """A yes-or-no column of the shipped table: anything else is a fault of the table, not a no."""
    word = text.strip()
    if word not in ("yes", "no"):
        raise ValueError(f"{STACKS_FILE}: a flag reads {text!r}, not yes or no")
    return word == "yes"


@lru_cache(maxsize=1)
def stacks() -> dict[str, TrainingStack]:
    """Every stack of the shipped table, by id."""
    with shipped(STACKS_FILE).open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    found = {}
    for row in rows:
        found[row["id"]] = TrainingStack(
            row["id"], row["title"], tuple(row["aliases"].split()), row["engine"],
            tuple(row["methods"].split()), _flag(row["compiled"]), row["loss"],
            _flag(row["checkpointing"]), row["master"], row["optimizer"],
            _flag(row["optimizer_in_backward"]), _flag(row["activation_offload"]),
            tuple(row["runs_on"].split()), _flag(row["fp8"]), float(row["speed"]), row["nearest"],
            tuple(row["parallel"].split()), row["launch"],
            row["launch_nodes"], row["attention"], row["kept"], _flag(row["loss_in_forward"]),
        )  # fmt: skip
    return found


def names() -> list[str]:
    """Every id and alias a user may type."""
    return sorted({name for s in stacks().values() for name in (s.id, *s.aliases)})


def find(name: str) -> TrainingStack | None:
    key = name.strip().lower()
    for stack in stacks().values():
        if key == stack.id or key in stack.aliases:
            return stack
    return None


def get(name: str) -> TrainingStack:
    """The stack called ``name`` (id or alias, any case), or a usage error naming the choices."""
    stack = find(name)
    if stack is None:
        hint = did_you_mean(name, names()) or f"; choose one of {', '.join(stacks())}"
        raise UsageError(f"unknown stack {display.quoted(name)}{hint}")
    return stack


def check_method(stack: TrainingStack, method: str) -> None:
    if method not in stack.methods:
        raise UsageError(
            f"{stack.title} does not fine-tune with {method}: it runs {', '.join(stack.methods)}"
        )
