"""Transformer shapes as plain facts: parameter counts, training FLOPs and activation memory.

No TensorFlow here: the zoo, ``advisor models`` and the estimation layer read these counts
without building a model. ``probes.networks`` builds the same shapes from plain Keras 3 layers,
and tests check that the built models' weights match these counts exactly at tiny sizes. Counts
(their published sources: docs/SOURCES.md, "Transformer workloads"):

* parameters: embeddings + ``layers`` x (attention 4(h^2 + h), feed-forward 2hf + f + h, two
  LayerNorms 4h) + the task head;
* training FLOPs per sample of T tokens, ``6 N T + 6 L T^2 h``: N counts the weights that
  multiply activations (every layer weight, the ViT patch projection, GPT-2's tied vocabulary
  projection), never a lookup table;
* activations kept for the backward pass: ``s h (34 + 5 a s / h)`` bytes per layer and sample in
  16-bit training (``5 a s^2`` is attention), twice that in fp32.

A ``CAUSAL_LM`` is today's open LLM (Llama, Qwen, Mistral, Gemma; MPT): grouped-query attention
(``kv_heads`` key and value heads of ``head_dim``, q/k/v biases in Qwen), a gated feed-forward
of ``intermediate`` units (three matrices) or a plain one (two), RMSNorm (``norms`` per layer),
rotary positions (no table) and an output projection of its own or tied to the token embedding.
Its counts reproduce ``data/llm-architectures.csv``; what a fine-tuning method does with them is
``advisor.workloads.llm``'s."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

ENCODER = "encoder"
"""BERT: bidirectional self-attention, post-LayerNorm, token + position + segment embeddings."""
DECODER = "decoder"
"""GPT-2: causal self-attention, pre-LayerNorm, output projection tied to the token embedding."""
VISION = "vision"
"""ViT: 16x16 patches projected to tokens, a class token, pre-LayerNorm, a linear head."""
CAUSAL_LM = "causal-lm"
"""Llama-style decoder: grouped-query attention, gated feed-forward, RMSNorm, rotary positions."""


@dataclass(frozen=True)
class Shape:
    """A transformer's published configuration (hidden size, layers, heads, vocabulary, ...)."""

    kind: str
    layers: int
    hidden: int
    heads: int
    sequence: int
    """Tokens per sample: the sequence length, or patches + 1 (class token) for a ViT."""
    vocabulary: int = 0
    """Token vocabulary (0 for a ViT)."""
    positions: int = 0
    """Rows of the learned position table (BERT 512, GPT-2 1024; a ViT's is ``sequence``)."""
    head_units: int = 0
    """Outputs of the task head: 2 for SQuAD start/end logits, classes for a classifier; a
    decoder's head is its tied vocabulary projection (0 here)."""
    pooled: bool = False
    """A sequence classifier (BERT's pooled first token -> head) instead of a per-token head."""
    image: int = 0
    patch: int = 0
    kv_heads: int = 0
    """Key and value heads of grouped-query attention (0: as many as ``heads``)."""
    head_dim: int = 0
    """Width of one attention head (0: ``hidden / heads``; Gemma 2's 256 is wider)."""
    intermediate: int = 0
    """Feed-forward width (0: 4 x hidden, as in BERT, GPT-2, ViT and MPT)."""
    gated: bool = False
    """A gated feed-forward (SwiGLU, GeGLU): gate, up and down matrices instead of two."""
    tied: bool = True
    """A causal LM's output projection is the token embedding (False: a matrix of its own)."""
    qkv_bias: bool = False
    """Biases on the query, key and value projections (Qwen); no other layer has one."""
    norms: int = 2
    """RMSNorms per layer of a causal LM (Gemma 2 has four)."""

    @property
    def ffn(self) -> int:
        """Feed-forward width: 4 x hidden in BERT, GPT-2 and ViT."""
        return self.intermediate or 4 * self.hidden

    @property
    def query_width(self) -> int:
        """Units of all the query heads together (the attention's width)."""
        return self.heads * (self.head_dim or self.hidden // self.heads)

    @property
    def kv_width(self) -> int:
        """Units of the key (or the value) heads together."""
        return (self.kv_heads or self.heads) * (self.head_dim or self.hidden // self.heads)

    def projections(self) -> tuple[tuple[str, int, int], ...]:
        """A causal LM layer's matrices as (name, inputs, outputs): what an adapter can target."""
        h, q, kv, f = self.hidden, self.query_width, self.kv_width, self.ffn
        attention = (("q", h, q), ("k", h, kv), ("v", h, kv), ("o", q, h))
        feed = (("gate", h, f), ("up", h, f), ("down", f, h)) if self.gated else (
            ("up", h, f), ("down", f, h))  # fmt: skip
        return attention + feed

    def layer_parameters(self) -> int:
        h, f = self.hidden, self.ffn
        if self.kind == CAUSAL_LM:
            weights = sum(inputs * outputs for _, inputs, outputs in self.projections())
            biases = self.query_width + 2 * self.kv_width if self.qkv_bias else 0
            return weights + biases + self.norms * h
        return 4 * (h * h + h) + (2 * h * f + f + h) + 4 * h

    def embedding_parameters(self) -> int:
        """Lookup tables and the ViT patch projection, class token and positions."""
        h = self.hidden
        if self.kind == VISION:
            return (3 * self.patch * self.patch * h + h) + h + self.sequence * h
        if self.kind == CAUSAL_LM:
            return self.vocabulary * h + h  # + the final norm; positions are rotary
        segments = 2 * h if self.kind == ENCODER else 0
        return self.vocabulary * h + self.positions * h + segments + 2 * h  # + LayerNorm

    def head_parameters(self) -> int:
        h = self.hidden
        if self.kind == CAUSAL_LM:
            return 0 if self.tied else self.vocabulary * h
        if self.kind == DECODER:
            return 0  # tied to the token embedding; its final LayerNorm is counted with it
        pooler = h * h + h if self.pooled else 0
        final_norm = 2 * h if self.kind == VISION else 0
        return pooler + final_norm + h * self.head_units + self.head_units

    def parameters(self) -> int:
        return (
            self.embedding_parameters() + self.layers * self.layer_parameters()
        ) + self.head_parameters()

    def flop_parameters(self) -> int:
        """N of the FLOP count: weights that multiply every token's activations."""
        n = self.layers * self.layer_parameters()
        if self.kind in (DECODER, CAUSAL_LM):
            n += self.vocabulary * self.hidden  # the logits projection, tied or not
        if self.kind == VISION:
            n += 3 * self.patch * self.patch * self.hidden
        if self.kind == ENCODER and not self.pooled:
            n += self.hidden * self.head_units  # the per-token span head
        return n

    def train_flops_per_sample(self) -> float:
        t = self.sequence
        return 6.0 * self.flop_parameters() * t + 6.0 * self.layers * t * t * self.query_width

    def activation_bytes_16bit(self) -> float:
        """Activations one sample keeps for the backward pass, 16-bit training (Korthikanti)."""
        logits = 4.0 * self.sequence * self.vocabulary if self.kind == DECODER else 0.0
        return self.layers * 34 * self.sequence * self.hidden + self.score_bytes_16bit() + logits

    def score_bytes_16bit(self) -> float:
        """The part of ``activation_bytes_16bit`` in attention scores, sequence x sequence per
        head: the softmax's output, the dropout mask and its output (Korthikanti's 5 a s^2)."""
        return self.layers * 5.0 * self.heads * self.sequence**2

    def proxy(self, layers: int, sequence: int) -> Shape:
        """The same width and heads at fewer layers, a shorter sequence and at most
        ``PROXY_VOCABULARY`` tokens: what a probe can step on a small CPU within its budget (GPT-2
        large's 64M-weight vocabulary table alone would dwarf two of its layers)."""
        if self.kind == VISION:
            side = max(1, round((sequence - 1) ** 0.5))
            return Shape(
                VISION, layers, self.hidden, self.heads, side * side + 1,
                head_units=self.head_units, image=side * self.patch, patch=self.patch,
            )  # fmt: skip
        return replace(
            self, layers=layers, sequence=sequence,
            vocabulary=min(self.vocabulary, PROXY_VOCABULARY),
            positions=max(self.positions, sequence) if self.positions else 0,
        )  # fmt: skip

    def narrowed(self) -> Shape:
        """A causal LM's layer at half its width: half the hidden units, the feed-forward units
        and the query and key/value heads, each head as wide as the real one's (what a probe
        steps when the real width would not fit its memory bound or its budget)."""
        kv = max(1, self.kv_heads // 2) if self.kv_heads else 0
        return replace(
            self, hidden=self.hidden // 2, heads=self.heads // 2, kv_heads=kv,
            head_dim=self.head_dim or self.hidden // self.heads,
            intermediate=self.ffn // 2,
        )  # fmt: skip

    def can_narrow(self) -> bool:
        """Whether ``narrowed`` keeps whole heads and at least ``PROXY_MIN_WIDTH`` units."""
        return (
            self.kind == CAUSAL_LM
            and self.heads % 2 == 0
            and self.hidden % 2 == 0
            and self.hidden // 2 >= PROXY_MIN_WIDTH
        )


PROXY_LAYERS = 2
"""Layers of a probe's proxy: two, so that a layer hands its output to another."""
PROXY_MIN_SEQUENCE = 64
LLM_MIN_SEQUENCE = 16
"""Shortest sequence of a causal LM's one-layer proxy: a Llama 3.1 70B layer (855M weights)
at 64 tokens takes seconds a sample on two vCPUs."""
PROXY_MIN_WIDTH = 256
"""Narrowest hidden size of a causal LM's proxy: below it a layer's step is all dispatch."""
PROXY_VOCABULARY = 8192
"""Vocabulary of a proxy: the logits' matmul is counted in the FLOP ratio, the table's optimizer
pass in the parameter ratio, so a smaller table changes what is scaled, not what is predicted."""


def probe_shape(full: Shape, flop_budget: float | None, max_parameters: int | None = None) -> Shape:
    """What a probe steps for ``full``: itself when two samples cost at most ``flop_budget``
    training FLOPs (or no budget is given), else ``PROXY_LAYERS`` layers of the same width,
    heads and vocabulary, at the longest sequence (halved from the real one, at least
    ``PROXY_MIN_SEQUENCE``; a ViT keeps its image) whose two samples fit the budget; a causal
    LM's layer alone when two of them at that sequence would not, down to ``LLM_MIN_SEQUENCE``
    tokens, then narrower (``narrow``) until it fits the budget and ``max_parameters``."""
    budget = math.inf if flop_budget is None else flop_budget
    fits = 2 * full.train_flops_per_sample() <= budget
    if fits and (max_parameters is None or full.parameters() <= max_parameters):
        return full
    layers = min(full.layers, PROXY_LAYERS)
    sequence = full.sequence
    shape = full.proxy(layers, sequence)
    while (
        full.kind != VISION
        and 2 * shape.train_flops_per_sample() > budget
        and sequence // 2 >= PROXY_MIN_SEQUENCE
    ):
        sequence //= 2
        shape = full.proxy(layers, sequence)
    if full.kind == CAUSAL_LM and 2 * shape.train_flops_per_sample() > budget:
        shape = full.proxy(1, sequence)  # an LLM's layer at its real width, alone if need be
        while 2 * shape.train_flops_per_sample() > budget and sequence > LLM_MIN_SEQUENCE:
            sequence //= 2
            shape = full.proxy(1, sequence)
    return narrow(shape, budget, max_parameters)


def narrow(shape: Shape, flop_budget: float, max_parameters: int | None) -> Shape:
    """A causal LM's proxy halved in width (``Shape.narrowed``) until two samples cost at most
    ``flop_budget`` training FLOPs and its weights number at most ``max_parameters``, as far
    as whole heads allow: a probe on a CPU gives the GPU predictions the host's dispatch,
    which no width changes, and a 70B layer at its real width (855M weights, 14 GiB with
    AdamW's slots) outgrows a probe's memory and budget."""
    most = math.inf if max_parameters is None else max_parameters
    while shape.can_narrow() and (
        2 * shape.train_flops_per_sample() > flop_budget or shape.parameters() > most
    ):
        shape = shape.narrowed()
    return shape


def describe_proxy(proxy: Shape, full: Shape) -> str:
    text = f"{proxy.layers} of {full.layers} layers"
    if proxy.hidden != full.hidden:
        text += f" {proxy.hidden} of {full.hidden} wide"
    if proxy.sequence != full.sequence:
        text += f", {proxy.sequence} of {full.sequence} tokens"
    return text


def bert(
    layers: int, hidden: int, heads: int, sequence: int, head_units: int, pooled: bool
) -> Shape:
    """BERT (Devlin et al. 2019): WordPiece vocabulary 30,522, 512 positions."""
    return Shape(ENCODER, layers, hidden, heads, sequence, 30_522, 512, head_units, pooled)


def gpt2(layers: int, hidden: int, heads: int) -> Shape:
    """GPT-2 (Radford et al. 2019): BPE vocabulary 50,257, context 1,024."""
    return Shape(DECODER, layers, hidden, heads, 1024, 50_257, 1024)


def vit(layers: int, hidden: int, heads: int, image: int, patch: int, classes: int) -> Shape:
    """ViT (Dosovitskiy et al. 2021): (image / patch)^2 patches and a class token."""
    tokens = (image // patch) ** 2 + 1
    return Shape(
        VISION, layers, hidden, heads, tokens, head_units=classes, image=image, patch=patch
    )
