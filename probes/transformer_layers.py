"""BERT, GPT-2 and ViT from plain Keras 3 layers, built from their published configurations.

Plain ``keras.layers`` (Embedding, MultiHeadAttention with a causal mask, LayerNormalization,
Dense with GELU, Dropout) plus two small layers of our own for what Keras lacks (learned
positions, a class token, a tied output projection), rather than keras-hub's backbones: no extra
dependency to install (keras-hub pulls in tensorflow-text and its own pins), nothing that
downloads weights or tokenizers, and only ``keras.ops`` inside, so the builders run on any Keras
backend (TensorFlow, JAX, PyTorch). The shapes and their parameter counts are in
``probes.transformers``; tests check the two agree. Keras is imported inside the functions only.
"""

from __future__ import annotations

from typing import Any

from probes import quiet
from probes.transformers import DECODER, ENCODER, VISION, Shape

DROPOUT = 0.1
"""Dropout of BERT, GPT-2 and ViT-B (DeiT trains with stochastic depth instead; same cost)."""


def build_transformer(shape: Shape, name: str) -> Any:
    """An uncompiled ``keras.Model`` of ``shape``: logits out, for a from-logits loss."""
    quiet.prepare_tensorflow()
    import keras

    layers_ = _layer_classes(keras)
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
            self, vocabulary: int, positions: int, hidden: int, segments: bool, **kwargs: Any
        ) -> None:
            super().__init__(**kwargs)
            self.vocabulary, self.positions, self.hidden = vocabulary, positions, hidden
            self.segments = segments

        def build(self, input_shape: Any) -> None:
            init = keras.initializers.TruncatedNormal(stddev=0.02)
            self.tokens = self.add_weight((self.vocabulary, self.hidden), init, name="tokens")
            self.position_table = self.add_weight(
                (self.positions, self.hidden), init, name="positions"
            )
            self.segment_table = (
                self.add_weight((2, self.hidden), init, name="segments") if self.segments else None
            )

        def call(self, inputs: Any, reverse: bool = False) -> Any:
            if reverse:
                return ops.matmul(inputs, ops.transpose(self.tokens))
            length = ops.shape(inputs)[-1]
            x = ops.take(self.tokens, inputs, axis=0) + self.position_table[:length]
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
