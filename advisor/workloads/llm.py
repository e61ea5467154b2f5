"""Open LLMs to fine-tune, and what one training step of a fine-tuning method does with them.

No TensorFlow here: the shapes are the published configurations in ``data/llm-architectures.csv``
(``advisor.workloads.transformers.Shape`` of kind ``causal-lm``), and a ``FineTune`` counts what a
step of full fine-tuning, LoRA or QLoRA does, per token of a sequence of ``sequence`` tokens.
FLOPs per token, N the matrices every token multiplies (the layers' and the output projection):

* forward ``2N``; backward to the inputs ``2N`` (adapters sit in every layer); backward to the
  weights ``2N`` for full fine-tuning, nothing for frozen weights; a LoRA adapter of rank r on a
  d_in x d_out matrix ``6 r (d_in + d_out)``;
* causal FlashAttention: ``2 T d_attn`` per layer forward, 2.5 times that backward;
* activation checkpointing runs each layer's forward again in the backward pass.

QLoRA's frozen projections are stored as 4-bit NF4 (0.5625 bytes a weight; ``int4`` for GPTQ)
and expanded to 16 bits before each pass's products: ``dequant_bytes`` is that traffic, whatever
the batch. The memory a step holds is ``advisor.workloads.llm_memory``'s (the counts' sources:
docs/SOURCES.md, "LLM fine-tuning")."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache

from advisor.errors import UsageError, did_you_mean
from advisor.locations import shipped
from advisor.workloads.transformers import CAUSAL_LM, Shape

METHODS = ("full", "lora", "qlora")
METHOD_TITLES = {"full": "full fine-tuning", "lora": "LoRA", "qlora": "QLoRA (4-bit NF4 base)"}
TARGETS = {
    "all": ("q", "k", "v", "o", "gate", "up", "down"),
    "attention": ("q", "k", "v", "o"),
    "qkv": ("q", "k", "v"),
    "qv": ("q", "v"),
}
"""Which projections of every layer get adapters (``all``: every linear layer of a block, PEFT's
``all-linear`` without the output projection)."""
QUANTISED_BYTES = {"nf4": 0.5625, "int4": 0.5625, "none": 2.0}
"""Bytes a frozen projection weight is stored in: 4 bits and an fp32 scale per 64 weights."""
DEQUANTISED_BYTES = 2.0
"""A 16-bit copy of a weight, written before its product and read by it."""
ATTENTION_BACKWARD = 2.5
"""FlashAttention-2's backward FLOPs over its forward's (five products against two)."""
DEFAULT_RANK = 16
DEFAULT_SEQUENCE = 2048


@dataclass(frozen=True)
class Model:
    """An open LLM as published: its shape, names and where the numbers come from."""

    id: str
    """``llama3.1-8b``, ``qwen2.5-7b``, ...: ``data/llm-architectures.csv``'s model_id."""
    repository: str
    """Its Hugging Face repository (``meta-llama/Llama-3.1-8B``)."""
    shape: Shape
    """At ``DEFAULT_SEQUENCE`` tokens (a ``FineTune`` sets its own)."""
    context: int
    """Longest sequence it was trained for (max_position_embeddings)."""
    role: str
    """``target``, ``target (small sibling)`` or ``extra`` (models of published runs)."""
    published_parameters: int
    source: str

    @property
    def title(self) -> str:
        """Its repository, and why it is listed when it is not one of the targets."""
        name = self.repository if "/" in self.repository else f"MosaicML {self.id.upper()}"
        if self.role == "target":
            return name
        return f"{name} ({'small sibling' if 'sibling' in self.role else 'in published runs'})"

    @property
    def aliases(self) -> tuple[str, ...]:
        """Other names a user may type: ``llama3-8b`` for ``llama3.1-8b``, the repository."""
        names = set()
        if "/" in self.repository:
            names = {self.repository.lower(), self.repository.split("/")[-1].lower()}
        if self.id.startswith("llama3.1-"):
            names.add(self.id.replace("llama3.1-", "llama3-"))
        return tuple(sorted(names - {self.id}))


def _int(text: str) -> int:
    """The leading whole number of a cell (``131072``, ``8,030,261,248``), 0 when it has none
    (MPT's context is ``per run``)."""
    match = re.match(r"[\d,]+", text.strip())
    return int(match.group().replace(",", "")) if match else 0


def _shape(row: dict[str, str]) -> Shape:
    heads, hidden = _int(row["num_attention_heads"]), _int(row["hidden_size"])
    mlp = row["mlp_type"].lower()
    return Shape(
        CAUSAL_LM, _int(row["num_layers"]), hidden, heads, DEFAULT_SEQUENCE,
        vocabulary=_int(row["vocab_size"]), kv_heads=_int(row["num_kv_heads"]),
        head_dim=_int(row["head_dim"]), intermediate=_int(row["intermediate_size"]),
        gated="glu" in mlp, tied=row["tied_embeddings"].strip() == "yes",
        qkv_bias=row["qkv_bias"].strip() == "yes",
        norms=4 if "4 per layer" in row["norm"] else 2,
    )  # fmt: skip


@lru_cache(maxsize=1)
def models() -> dict[str, Model]:
    """Every LLM of the shipped table, by id."""
    with shipped("llm-architectures.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    found = {}
    for row in rows:
        context = _int(row["max_position_embeddings"]) or 65_536  # MPT: ALiBi, any length
        found[row["model_id"]] = Model(
            row["model_id"], row["hf_repo"], _shape(row), context, row["role"],
            _int(row["params_computed"]), row["source"],
        )  # fmt: skip
    return found


def names() -> list[str]:
    """Every id and alias a user may type."""
    return sorted({name for m in models().values() for name in (m.id, *m.aliases)})


def find(name: str) -> Model | None:
    """The LLM called ``name`` (id, alias or repository, any case), or None."""
    key = name.strip().lower()
    for model in models().values():
        if key == model.id or key in model.aliases:
            return model
    return None


def get(name: str) -> Model:
    model = find(name)
    if model is None:
        raise UsageError(f"unknown LLM {name!r}{did_you_mean(name, names())}")
    return model


@dataclass(frozen=True)
class FineTune:
    """One fine-tuning step's configuration: the model, the method and the recipe's switches."""

    shape: Shape
    """The model at the job's sequence length (``shape.sequence`` tokens a sequence)."""
    method: str = "lora"
    """``full``, ``lora`` or ``qlora``."""
    rank: int = DEFAULT_RANK
    targets: str = "all"
    """A key of ``TARGETS``."""
    quantisation: str = ""
    """How the frozen projections are stored: ``nf4``, ``int4`` or ``none`` (empty: NF4 for
    QLoRA, 16 bits otherwise)."""
    checkpointing: bool = True
    """Activation checkpointing: keep each layer's input only, run its forward again."""
    master: str = "fp32"
    """The trained weights' precision: ``fp32`` (mixed precision: an fp32 master copy, fp32
    gradients and optimizer state) or ``bf16`` (pure bf16, as torchtune trains)."""
    optimizer: str = "adamw"
    """``adamw`` (two slots in the master precision) or ``adamw8bit`` (bitsandbytes: two bytes)."""
    optimizer_in_backward: bool = False
    """Each weight is updated as its gradient arrives (torchtune): no gradient buffer."""
    chunked_loss: bool = False
    """Cross-entropy over chunks of the logits (torchtune, Liger): no fp32 copy of them all."""
    activation_offload: bool = False
    """Checkpointed layer inputs wait in host memory (torchtune's activation offloading)."""
    fp32_adapters: bool = False
    """The adapters' path runs in fp32: PEFT keeps adapters in fp32 (``autocast_adapter_dtype``)
    and casts each adapted input to their dtype; a loop without autocast then multiplies in fp32
    and adds an fp32 result back (Hugging Face's Trainer with ``bf16=True`` autocasts: 16 bits)."""
    fused_loss: bool = False
    """Cross-entropy in one fused kernel over the 16-bit logits (flash-attn's, llm-foundry's
    default): no fp32 copy, a 16-bit gradient."""
    frozen_fp32: bool = False
    """The frozen weights left unquantised are stored in fp32 and cast to 16 bits for their
    products: a model loaded in fp32 and trained under mixed precision (PEFT's ``examples/sft``
    without 4-bit storage; FSDP gathers them in 16 bits)."""
    stack: str = "hf"
    """The software it runs under (``advisor.workloads.stacks``): its own fitted speed."""
    compiled: bool = False
    """The layers and the loss run under ``torch.compile`` (torchtune's ``compile=True``): the
    step keeps what the count names, and peaks at the larger of the loss's and the layers'
    phases (``advisor.estimate.memory.llm_lines``). An eager step also keeps each operation's
    own intermediates (fp32 upcasts in norms and rotary embeddings, a shifted copy of the
    logits), for which its count adds the two phases' working sets together."""
    fp8_weights: bool = False
    """The trained weights are built in FP8 for the products (Transformer Engine's
    ``fp8_model_init``, NeMo's ``fp8_params``) beside their master copy, which the optimizer
    holds: a byte a weight, and a byte for the FP8 transpose Transformer Engine keeps."""
    attention: str = "native"
    """Its fused attention kernel: ``native`` (written for the GPU's generation: cuDNN's,
    Transformer Engine's) or ``fa2`` (FlashAttention-2, written for Ampere: about half the
    native rate on Hopper and later, ``advisor.estimate.machine.FA2_SHARE``)."""

    @property
    def adapted(self) -> bool:
        return self.method in ("lora", "qlora")

    @property
    def storage(self) -> str:
        if self.quantisation:
            return self.quantisation
        return "nf4" if self.method == "qlora" else "none"

    def projection_parameters(self) -> int:
        """Weights of every layer's projections (the ones QLoRA quantises)."""
        per_layer = sum(i * o for _, i, o in self.shape.projections())
        return self.shape.layers * per_layer

    def adapter_parameters(self) -> int:
        """Each adapted projection's two factors: rank x (its input + its output) a layer."""
        return self.shape.layers * self.rank * sum(self.adapted_widths())

    def adapted_widths(self) -> tuple[int, int]:
        """Elements a token brings into and gets out of one layer's adapted projections."""
        if not self.adapted:
            return 0, 0
        wanted = TARGETS[self.targets]
        chosen = [(i, o) for name, i, o in self.shape.projections() if name in wanted]
        return sum(i for i, _ in chosen), sum(o for _, o in chosen)

    def trainable_parameters(self) -> int:
        return self.adapter_parameters() if self.adapted else self.shape.parameters()

    def frozen_parameters(self) -> int:
        return self.shape.parameters() if self.adapted else 0

    def attention_flops_per_token(self) -> float:
        """FlashAttention's causal FLOPs per token: forward, backward and any recomputation."""
        forward = 2.0 * self.shape.sequence * self.shape.query_width * self.shape.layers
        passes = 1 + ATTENTION_BACKWARD + (1 if self.checkpointing else 0)
        return forward * passes

    def flops_per_token(self) -> float:
        """Training FLOPs per token, attention included."""
        layers = self.projection_parameters()
        n = layers + self.shape.vocabulary * self.shape.hidden
        adapters = 6.0 * self.adapter_parameters()
        weights = 0.0 if self.adapted else 2.0 * n
        recompute = 2.0 * layers + adapters / 3 if self.checkpointing else 0.0
        return 4.0 * n + weights + adapters + recompute + self.attention_flops_per_token()

    def dequant_bytes(self) -> float:
        """Bytes a step moves expanding 4-bit projections to 16 bits, once per pass (forward,
        backward, and the recomputed forward under checkpointing)."""
        if self.storage == "none":
            return 0.0
        passes = 3 if self.checkpointing else 2
        per_weight = QUANTISED_BYTES[self.storage] + DEQUANTISED_BYTES
        return passes * per_weight * self.projection_parameters()

    def describe(self) -> str:
        text = METHOD_TITLES[self.method]
        if self.adapted:
            text += f", rank {self.rank} on {'+'.join(TARGETS[self.targets])}"
        if self.adapted and self.fp32_adapters:
            text += " (fp32, no autocast)"
        text += f", {self.shape.sequence} tokens a sequence"
        return text + (", activation checkpointing" if self.checkpointing else "")


def check_method(method: str) -> None:
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
