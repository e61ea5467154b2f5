"""BERT, GPT-2, ViT and Llama-style LLMs from plain Keras 3 layers, from their configurations.

Plain ``keras.layers`` (Embedding, MultiHeadAttention with a causal mask, LayerNormalization,
Dense with GELU, Dropout) plus small layers of our own (learned positions, a class token, a tied
output projection); a causal LM takes ``GroupQueryAttention``, ``RMSNormalization``, a gated
feed-forward, no rotary positions, and Keras's own LoRA (``enable_lora``, the rest frozen). Only
``keras.ops`` inside, so any backend runs them; nothing is downloaded; Keras is imported inside
the functions. Shapes and counts: ``advisor.workloads.transformers`` (why not keras-hub, and
why no rotary positions: docs/PREDICTION.md, "Transformers (BERT, GPT-2, ViT-B/16)")."""

from __future__ import annotations

from typing import Any

from advisor.workloads.transformers import CAUSAL_LM, DECODER, ENCODER, VISION, Shape
from probes import quiet

DROPOUT = 0.1
"""Dropout of BERT, GPT-2 and ViT-B (DeiT trains with stochastic depth instead; same cost)."""


def build_transformer(shape: Shape, name: str) -> Any:
    """An uncompiled ``keras.Model`` of ``shape``: logits out, for a from-logits loss."""
    quiet.prepare_tensorflow()
    import keras

    layers_ = _layer_classes(keras)
    if shape.kind == CAUSAL_LM:
        return _causal_lm(keras, layers_, shape, name)
    if shape.kind == VISION:
        inputs = keras.Input((shape.image, shape.image, 3))
        x = keras.layers.Conv2D(shape.hidden, shape.patch, strides=shape.patch)(inputs)
        x = keras.layers.Reshape(((shape.image // shape.patch) ** 2, shape.hidden))(x)
        x = layers_["ClassTokenAndPositions"]()(x)
    else:
        inputs = keras.Input((shape.sequence,), dtype="int32")
        embed = layers_["TokenEmbedding"](
            shape.vocabulary, shape.positions, shape.hidden, segments=shape.kind == ENCODER
        )
        x = embed(inputs)
    if shape.kind == ENCODER:
        x = keras.layers.LayerNormalization(epsilon=1e-12)(x)
        x = keras.layers.Dropout(DROPOUT)(x)
    for _ in range(shape.layers):
        x = (
            _post_norm_block(keras, x, shape)
            if shape.kind == ENCODER
            else _pre_norm_block(keras, x, shape, causal=shape.kind == DECODER)
        )
    if shape.kind == DECODER:
        outputs = embed(keras.layers.LayerNormalization(epsilon=1e-5)(x), reverse=True)
    elif shape.kind == VISION:
        x = keras.layers.LayerNormalization(epsilon=1e-6)(x)
        outputs = keras.layers.Dense(shape.head_units)(x[:, 0, :])
    elif shape.pooled:  # BERT sequence classification: pooled [CLS] token
        pooled = keras.layers.Dense(shape.hidden, activation="tanh")(x[:, 0, :])
        outputs = keras.layers.Dense(shape.head_units)(keras.layers.Dropout(DROPOUT)(pooled))
    else:  # SQuAD: start and end logits over the positions, (batch, 2, sequence)
        outputs = keras.layers.Permute((2, 1))(keras.layers.Dense(shape.head_units)(x))
    return keras.Model(inputs, outputs, name=name)


def _attention(keras: Any, shape: Shape) -> Any:
    return keras.layers.MultiHeadAttention(
        shape.heads, key_dim=shape.hidden // shape.heads, dropout=DROPOUT
    )


def _feed_forward(keras: Any, x: Any, shape: Shape) -> Any:
    x = keras.layers.Dense(shape.ffn, activation="gelu")(x)
    return keras.layers.Dropout(DROPOUT)(keras.layers.Dense(shape.hidden)(x))


def _post_norm_block(keras: Any, x: Any, shape: Shape) -> Any:
    """BERT's block: attention, add, LayerNorm; feed-forward, add, LayerNorm."""
    attended = keras.layers.Dropout(DROPOUT)(_attention(keras, shape)(x, x))
    x = keras.layers.LayerNormalization(epsilon=1e-12)(keras.layers.Add()([x, attended]))
    fed = _feed_forward(keras, x, shape)
    return keras.layers.LayerNormalization(epsilon=1e-12)(keras.layers.Add()([x, fed]))


def _pre_norm_block(keras: Any, x: Any, shape: Shape, causal: bool) -> Any:
    """GPT-2's and ViT's block: LayerNorm first, residual around attention and feed-forward."""
    y = keras.layers.LayerNormalization(epsilon=1e-5)(x)
    y = keras.layers.Dropout(DROPOUT)(_attention(keras, shape)(y, y, use_causal_mask=causal))
    x = keras.layers.Add()([x, y])
    y = _feed_forward(keras, keras.layers.LayerNormalization(epsilon=1e-5)(x), shape)
    return keras.layers.Add()([x, y])


LLM_INITIALIZER = "zeros"
"""How a causal LM's weights start: a probe times its steps and never learns with them, and
filling a billion weights with random numbers takes a 2-vCPU machine ten seconds (one Llama
3.1 70B layer); a product of zeros costs the CPU what any other does."""


def _causal_lm(keras: Any, layers_: dict[str, Any], shape: Shape, name: str) -> Any:
    """A Llama-style decoder: token embedding, pre-norm blocks of grouped-query attention and a
    gated (or plain) feed-forward, a final RMSNorm, logits tied to the embedding or not."""
    inputs = keras.Input((shape.sequence,), dtype="int32")
    embed = layers_["TokenEmbedding"](
        shape.vocabulary, 0, shape.hidden, segments=False, initializer=LLM_INITIALIZER
    )
    x = embed(inputs)
    head_dim = shape.query_width // shape.heads
    for index in range(shape.layers):
        y = keras.layers.RMSNormalization(epsilon=1e-5, name=f"attention_norm_{index}")(x)
        attention = keras.layers.GroupQueryAttention(
            head_dim, shape.heads, shape.kv_heads or shape.heads, use_bias=False,
            kernel_initializer=LLM_INITIALIZER, name=f"attention_{index}",
        )  # fmt: skip
        y = attention(y, y, use_causal_mask=True)
        if shape.norms > 2:  # Gemma 2: norms after the attention and the feed-forward too
            y = keras.layers.RMSNormalization(epsilon=1e-5)(y)
        x = keras.layers.Add()([x, y])
        y = keras.layers.RMSNormalization(epsilon=1e-5, name=f"feed_norm_{index}")(x)
        y = _gated(keras, y, shape, index)
        if shape.norms > 2:
            y = keras.layers.RMSNormalization(epsilon=1e-5)(y)
        x = keras.layers.Add()([x, y])
    x = keras.layers.RMSNormalization(epsilon=1e-5, name="final_norm")(x)
    if shape.tied:
        outputs = embed(x, reverse=True)
    else:
        outputs = keras.layers.Dense(
            shape.vocabulary, use_bias=False, kernel_initializer=LLM_INITIALIZER, name="head"
        )(x)
    return keras.Model(inputs, outputs, name=name)


def _gated(keras: Any, x: Any, shape: Shape, index: int) -> Any:
    """SwiGLU (gate, up, down) or a plain feed-forward (up, down), no biases."""
    init = LLM_INITIALIZER
    up = keras.layers.Dense(shape.ffn, use_bias=False, kernel_initializer=init, name=f"up_{index}")(
        x
    )
    if shape.gated:
        gate = keras.layers.Dense(
            shape.ffn, activation="silu", use_bias=False, kernel_initializer=init,
            name=f"gate_{index}",
        )(x)  # fmt: skip
        up = keras.layers.Multiply()([gate, up])
    else:
        up = keras.layers.Activation("gelu")(up)
    down = keras.layers.Dense(
        shape.hidden, use_bias=False, kernel_initializer=init, name=f"down_{index}"
    )
    return down(up)


def add_adapters(model: Any, rank: int, targets: tuple[str, ...]) -> None:
    """LoRA of ``rank`` on the ``targets`` projections (``q``, ``k``, ``v``, ``o``, ``gate``,
    ``up``, ``down``) of a causal LM built here, every other weight frozen."""
    import keras

    projections = {
        "q": "_query_dense",
        "k": "_key_dense",
        "v": "_value_dense",
        "o": "_output_dense",
    }
    for layer in model.layers:
        if isinstance(layer, keras.layers.GroupQueryAttention):
            for target, attribute in projections.items():
                _adapt(getattr(layer, attribute), rank, target in targets)
        elif isinstance(layer, keras.layers.Dense):
            _adapt(layer, rank, layer.name.split("_")[0] in targets)
        elif layer.weights:
            layer.trainable = False  # the token embedding and the norms


def _adapt(layer: Any, rank: int, targeted: bool) -> None:
    if targeted:
        layer.enable_lora(rank)  # freezes the kernel, trains the two rank-r factors
    else:
        layer.trainable = False


_CLASSES: dict[str, Any] = {}


def _layer_classes(keras: Any) -> dict[str, Any]:
    """The two custom layers, defined once Keras is imported (this module imports it lazily)."""
    if _CLASSES:
        return _CLASSES
    ops = keras.ops

    class TokenEmbedding(keras.layers.Layer):
        """Token + learned position (+ BERT's segment 0) embeddings; ``reverse=True`` projects
        hidden states back onto the vocabulary with the same table (GPT-2's tied head)."""

        def __init__(
            self, vocabulary: int, positions: int, hidden: int, segments: bool,
            initializer: Any = None, **kwargs: Any,
        ) -> None:  # fmt: skip
            super().__init__(**kwargs)
            self.vocabulary, self.positions, self.hidden = vocabulary, positions, hidden
            self.segments = segments
            self.initializer = initializer or keras.initializers.TruncatedNormal(stddev=0.02)

        def build(self, input_shape: Any) -> None:
            init = self.initializer
            self.tokens = self.add_weight((self.vocabulary, self.hidden), init, name="tokens")
            self.position_table = (
                self.add_weight((self.positions, self.hidden), init, name="positions")
                if self.positions
                else None
            )
            self.segment_table = (
                self.add_weight((2, self.hidden), init, name="segments") if self.segments else None
            )

        def call(self, inputs: Any, reverse: bool = False) -> Any:
            if reverse:
                return ops.matmul(inputs, ops.transpose(self.tokens))
            length = ops.shape(inputs)[-1]
            x = ops.take(self.tokens, inputs, axis=0)
            if self.position_table is not None:  # a causal LM's positions are rotary
                x = x + self.position_table[:length]
            return x + self.segment_table[0] if self.segment_table is not None else x

    class ClassTokenAndPositions(keras.layers.Layer):
        """ViT: a learned class token in front of the patch tokens, plus learned positions."""

        def build(self, input_shape: Any) -> None:
            tokens, hidden = input_shape[1] + 1, input_shape[2]
            init = keras.initializers.TruncatedNormal(stddev=0.02)
            self.class_token = self.add_weight((1, 1, hidden), init, name="class_token")
            self.position_table = self.add_weight((1, tokens, hidden), init, name="positions")

        def call(self, inputs: Any) -> Any:
            batch = ops.shape(inputs)[0]
            first = ops.broadcast_to(self.class_token, (batch, 1, ops.shape(inputs)[2]))
            return ops.concatenate([first, inputs], axis=1) + self.position_table

    _CLASSES.update(TokenEmbedding=TokenEmbedding, ClassTokenAndPositions=ClassTokenAndPositions)
    return _CLASSES
