"""What one GPU holds while it fine-tunes an LLM, by component, before sharding and batch.

Counted from the shape and the method (``advisor.workloads.llm.FineTune``);
``advisor.estimate.memory`` shards it over a node and adds the tokens of a micro-batch:

* weights as stored (frozen in 16 bits, QLoRA's projections in 4, 32 when loaded in fp32 under
  mixed precision, ``FineTune.frozen_fp32``; trained in their master precision), plus the
  16-bit copy mixed precision computes with, or the FP8 weights and their transpose that
  Transformer Engine computes with beside a master copy (``FineTune.fp8_weights``);
* gradients of the trained weights (none with the optimizer in the backward pass) and the
  optimizer's state (AdamW's two slots in the master precision, two bytes for 8-bit AdamW);
* activations kept per token, 16-bit, for a Llama block under FlashAttention: 8h + 4 d_q +
  4 d_kv + 8 d_ff (4 d_ff for a plain feed-forward); under Megatron-Core's Transformer Engine
  layers 8h + 4 d_q + 4 d_kv + 6 d_ff, and 6h + 5 d_q + 4 d_kv + 5 d_ff with the products in
  FP8 (``layer_kept_bytes``); under checkpointing each layer's input (2h) and one layer's full
  set while it is recomputed; fp32 adapters without autocast add 4 bytes an adapted input element;
* the logits: 10 bytes each in bf16, 2 over a chunked loss, 4 under one fused kernel, 6 when
  the model's forward computes its loss and compiles with it; and a
  trained output projection's gradient while the loss's backward pass builds it (twice its size
  under a chunked loss).

The logits die before the first layer is recomputed, and the gradients are born as the kept
activations die: ``advisor.estimate.memory.llm_lines`` takes the larger of the two phases for a
compiled step and adds the loss's and one recomputed layer's working sets for an eager one
(``FineTune.compiled``; docs/PREDICTION.md and docs/SOURCES.md, "LLM fine-tuning")."""

from __future__ import annotations

from dataclasses import dataclass, replace

from advisor.workloads import stacks
from advisor.workloads.llm import QUANTISED_BYTES, FineTune

LOGIT_BYTES = 10.0
"""Bytes a logit costs at the loss: bf16 logits, their fp32 copy and its fp32 gradient."""
CHUNKED_LOGIT_BYTES = 2.0
"""The same when the loss runs over chunks of the sequence: only the bf16 logits stay."""
FUSED_LOGIT_BYTES = 4.0
"""The same under a fused cross-entropy kernel: the bf16 logits and their bf16 gradient."""
COMPILED_LOGIT_BYTES = 6.0
"""The same when the model's forward computes its loss and compiles with it (Hugging Face's
model under ``torch.compile``): AOTAutograd saves the bf16 logits for the backward pass, which
recomputes the softmax from them, and makes a zero gradient for the logits the forward also
returns; with the logits' bf16 gradient, three 16-bit copies (traced on CPU by
``benchmarks/research/compiled_loss_memory.py``; docs/PREDICTION.md)."""
_MASTER_BYTES = {"fp32": 4.0, "bf16": 2.0}
_SLOT_BYTES = {"adamw": None, "adamw8bit": 1.0}
"""Bytes of one optimizer slot a weight (None: the master precision)."""


@dataclass(frozen=True)
class Footprint:
    """Bytes of a fine-tuning step by component (unsharded, for a micro-batch of 0 tokens)."""

    weights: float
    """Every weight as stored (frozen 16- or 4-bit, trained in the master precision)."""
    compute_copy: float
    """16-bit copies of fp32 master weights, kept through the forward pass."""
    gradients: float
    optimizer: float
    layer_weights: float
    """One layer's 16-bit weights: what sharded data parallelism gathers at a time."""
    gathered: float
    """Every weight as a pass reads it: frozen ones as stored, trained ones as 16-bit copies
    (what sharded data parallelism gathers, layer by layer, in each pass)."""
    kept_per_token: float
    """Activations kept from the forward to the backward pass, per token."""
    loss_per_token: float
    """The logits at the loss, per token."""
    recomputed_per_token: float
    """One layer's activations while checkpointing recomputes it, per token (0 without)."""
    output_gradient: float
    """The output projection's weight gradient at the loss (0 when it is frozen)."""
    compiled: bool
    """The step is compiled (``FineTune.compiled``): it peaks at one phase, not at their sum."""

    @property
    def working_per_token(self) -> float:
        """Per token at the peak of an eager step's backward pass: the logits at the loss and
        one recomputed layer, counted together."""
        return self.loss_per_token + self.recomputed_per_token

    @property
    def shardable(self) -> float:
        """What FSDP / ZeRO-3 splits across a node's GPUs."""
        return self.weights + self.gradients + self.optimizer

    def split(self, tensor: int, pipeline: int, virtual: int = 1) -> Footprint:
        """What one GPU of a model split ``tensor`` x ``pipeline`` ways holds: a share of every
        weight, gradient and optimizer slot; a tensor share of each token's activations, which
        sequence parallelism splits too. A pipeline's first stage keeps its layers' activations
        for as many micro-batches as there are stages (1F1B), so the pipeline does not divide
        them; interleaved over ``virtual`` chunks a stage, it keeps 1 + (p - 1) / (p v) times
        as many (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
        Models", 2022, sections 4.2 and 4.2.3)."""
        if tensor * pipeline == 1:
            return self
        share = tensor * pipeline
        interleaved = 1 + (pipeline - 1) / (pipeline * virtual) if virtual > 1 else 1.0
        return replace(
            self,
            weights=self.weights / share,
            compute_copy=self.compute_copy / share,
            gradients=self.gradients / share,
            optimizer=self.optimizer / share,
            layer_weights=self.layer_weights / tensor,
            gathered=self.gathered / share,
            kept_per_token=self.kept_per_token * interleaved / tensor,
            loss_per_token=self.loss_per_token / tensor,
            recomputed_per_token=self.recomputed_per_token / tensor,
            output_gradient=self.output_gradient / tensor,
        )


def layer_activation_bytes(tune: FineTune) -> float:
    """16-bit activations one token keeps in one layer, FlashAttention (no scores), as eager
    PyTorch keeps them (and as the step's activation traffic counts them)."""
    shape = tune.shape
    feed = (8 if shape.gated else 4) * shape.ffn
    return 8 * shape.hidden + 4 * shape.query_width + 4 * shape.kv_width + feed


def layer_kept_bytes(tune: FineTune, fp8: bool = False) -> float:
    """Bytes one token keeps in one layer for the backward pass, as the stack's layers keep
    them (its stack's ``kept``, ``data/llm-stacks.csv``). Eager: ``layer_activation_bytes``. Megatron-Core's Transformer
    Engine layers: a fused SwiGLU keeps its input alone, the gate's and the up projection's
    outputs, and recomputes the SiLU and the product from them (2 d_ff bytes fewer); with the
    products in FP8 each linear layer keeps its input in FP8: the QKV's and the first
    feed-forward product's normed inputs and the SwiGLU's output in 8 bits, beside which the
    output projection keeps an FP8 copy of the attention's output, which the attention keeps
    too (docs/SOURCES.md, "Training stacks": ``nemo``)."""
    kept = layer_activation_bytes(tune) + adapter_copy_bytes(tune)
    if stacks.get(tune.stack).kept != "te":
        return kept
    shape = tune.shape
    if shape.gated:
        kept -= 2 * shape.ffn
    if fp8:
        kept -= 2 * shape.hidden + shape.ffn - shape.query_width
    return kept


def logit_memory_bytes(tune: FineTune) -> float:
    """Bytes a logit holds at the loss, by how the loss runs."""
    if tune.chunked_loss:
        return CHUNKED_LOGIT_BYTES
    if tune.fused_loss:
        return FUSED_LOGIT_BYTES
    if tune.compiled and stacks.get(tune.stack).loss_in_forward:
        return COMPILED_LOGIT_BYTES
    return LOGIT_BYTES


def _computes_on_a_copy(tune: FineTune) -> bool:
    """The trained weights' products read another copy of them, two bytes a weight: mixed
    precision's 16-bit one of an fp32 master, or FP8 weights and their FP8 transpose."""
    return not tune.adapted and (tune.master == "fp32" or tune.fp8_weights)


def adapter_copy_bytes(tune: FineTune) -> float:
    """Bytes one token keeps in one layer for fp32 adapters: the fp32 copy of each adapted
    input that the adapter's first product reads again in the backward pass."""
    return 4.0 * tune.adapted_widths()[0] if tune.fp32_adapters else 0.0


def footprint(tune: FineTune, fp8: bool = False) -> Footprint:
    """``tune``'s bytes by component; ``fp8``: its products run in FP8."""
    shape = tune.shape
    master = _MASTER_BYTES[tune.master]
    slot = _SLOT_BYTES.get(tune.optimizer) or master
    trained = tune.trainable_parameters()
    if tune.adapted:
        quantised = tune.projection_parameters() if tune.storage != "none" else 0
        unquantised = tune.frozen_parameters() - quantised
        gathered = unquantised * 2.0 + quantised * QUANTISED_BYTES[tune.storage]
        frozen = gathered + unquantised * 2.0 if tune.frozen_fp32 else gathered
    else:
        frozen = gathered = 0.0
    per_layer = layer_kept_bytes(tune, fp8)
    if tune.checkpointing:
        kept = 0.0 if tune.activation_offload else shape.layers * 2.0 * shape.hidden
        recomputed = per_layer
    else:
        kept, recomputed = shape.layers * per_layer, 0.0
    output_gradient = 0.0
    if not tune.adapted:
        output_gradient = shape.vocabulary * shape.hidden * master
        output_gradient *= 2 if tune.chunked_loss else 1
    return Footprint(
        weights=frozen + trained * master,
        compute_copy=trained * 2.0 if _computes_on_a_copy(tune) else 0.0,
        gradients=0.0 if tune.optimizer_in_backward else trained * master,
        optimizer=2 * slot * trained,
        layer_weights=2.0 * shape.layer_parameters(),
        gathered=gathered + trained * 2.0,
        kept_per_token=kept,
        loss_per_token=shape.vocabulary * logit_memory_bytes(tune),
        recomputed_per_token=recomputed,
        output_gradient=output_gradient,
        compiled=tune.compiled,
    )
