"""What a built Keras 3 model's layers say about its work: FLOPs, recurrent layers, activations.

Counted from layer configs and built shapes only (kernel shapes, the shapes on each layer's call
nodes), never from a backend's graph, so it works under any Keras backend; nothing here imports
Keras. Conventions (forward pass, one sample; a multiply-add is 2 FLOPs):

- Dense: ``2 x inputs x units`` at every position of its input (``Dense`` on a sequence).
- Convolutions (1D/2D/3D, transposed, depthwise, separable): ``2 x kernel size`` (the kernel
  tensor's elements: spatial x inputs per group x filters) at every output position (input
  position for a transposed convolution).
- Embedding: 0 (a gather).
- LSTM / GRU / SimpleRNN: per time step ``gates x 2 x (inputs + units) x units``, gates 4, 3, 1.
- MultiHeadAttention: the four projections, plus ``2 x seq_q x seq_k x heads x (key_dim +
  value_dim)`` for the scores and their weighted sum.
- Everything else (normalisation, activations, pooling, merges, dropout): a few FLOPs per
  element (``_ELEMENTWISE``), small beside the products.

Training is three forward passes (``TRAINING_PASSES``: gradients for a layer's inputs and its
weights, each as large as the forward), the convention of ``advisor.workloads.zoo``'s published
counts (docs/PREDICTION.md, "A user's model: its layers read in the probe"; the citation:
docs/SOURCES.md, "CPU<->GPU validation suite")."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from probes.data import UNKNOWN_LENGTH
from probes.result import GATES, TRAINING_PASSES, Architecture, RecurrentLayer

_CELLS = {"LSTM": "lstm", "GRU": "gru", "SimpleRNN": "vanilla"}
_CELL_CLASSES = {"LSTMCell": "lstm", "GRUCell": "gru", "SimpleRNNCell": "vanilla"}
_ELEMENTWISE = {
    "BatchNormalization": 4,
    "LayerNormalization": 5,
    "GroupNormalization": 5,
    "UnitNormalization": 3,
    "Softmax": 5,
    "Dropout": 1,
    "Activation": 1,
    "ReLU": 1,
    "LeakyReLU": 1,
    "PReLU": 2,
    "ELU": 3,
    "Add": 1,
    "Subtract": 1,
    "Multiply": 1,
    "Average": 1,
    "Maximum": 1,
    "Minimum": 1,
}
"""FLOPs per output element of elementwise layers (rough: they matter for memory, not FLOPs)."""
_FREE = frozenset(
    {
        "InputLayer", "Flatten", "Reshape", "Permute", "RepeatVector", "Concatenate",
        "Cropping1D", "Cropping2D", "Cropping3D", "ZeroPadding1D", "ZeroPadding2D",
        "ZeroPadding3D", "Embedding", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D",
        "GaussianNoise", "GaussianDropout", "AlphaDropout", "ActivityRegularization", "Identity",
        "Masking", "UpSampling1D", "UpSampling2D", "UpSampling3D",
    }
)  # fmt: skip
"""Layers that move or copy data and do no arithmetic worth counting."""
_MODELS = ("Sequential", "Functional", "Model")
"""Nested models: their own layers are walked."""


@dataclass
class _Tally:
    """Counts accumulated over a walk of the layers (forward, one sample)."""

    flops: float = 0.0
    winograd_flops: float = 0.0
    conv_flops: float = 0.0
    conv_flops_per_channel: float = 0.0
    """Sum over convolutions of their FLOPs over their output channels (the width of the
    product a convolution is: batch x pixels by channels)."""
    dense_flops: float = 0.0
    dense_row_flops: float = 0.0
    """Sum over dense layers of their FLOPs times the rows a sample gives their product (every
    position of a sequence a ``Dense`` runs on)."""
    activations: float = 0.0
    recurrent: list[RecurrentLayer] = field(default_factory=list)
    uncounted: set[str] = field(default_factory=set)


Shape = tuple[int | None, ...]
"""A shape without its batch axis."""


def read(model: Any) -> Architecture:
    """The architecture facts of a built Keras model (a layer it cannot count is named in
    ``uncounted`` and counted as nothing; the reader never raises on an unusual model)."""
    tally = _Tally()
    try:
        _walk(model, tally, 1.0)
    except Exception:  # a user's odd model must never cost the probe it ran
        return Architecture(0.0, uncounted=(type(model).__name__,))
    return Architecture(
        train_flops_per_sample=TRAINING_PASSES * tally.flops,
        winograd_share=tally.winograd_flops / tally.flops if tally.flops else 0.0,
        conv_share=tally.conv_flops / tally.flops if tally.flops else 0.0,
        conv_channels=(
            tally.conv_flops / tally.conv_flops_per_channel if tally.conv_flops_per_channel else 0.0
        ),
        activation_elements=tally.activations,
        recurrent=tuple(tally.recurrent),
        uncounted=tuple(sorted(tally.uncounted)),
        input_bytes=_input_bytes(model),
        matmul_rows=tally.dense_row_flops / tally.dense_flops if tally.dense_flops else 0.0,
    )


def _input_bytes(model: Any) -> float:
    """Bytes of one sample of ``model``'s inputs; 0 when an input's shape is not fixed."""
    import numpy as np

    try:
        total = 0.0
        for tensor in model.inputs:
            shape = _shape(tensor)
            if any(size is None for size in shape):
                return 0.0
            total += math.prod(shape) * np.dtype(tensor.dtype).itemsize  # type: ignore[arg-type]
        return total
    except (AttributeError, TypeError, ValueError):
        return 0.0


def _walk(model: Any, tally: _Tally, repeats: float) -> None:
    """Every call of every layer in ``model``'s graph (a model that runs ``repeats`` times a
    sample). The graph's own nodes, not each layer's ``_inbound_nodes``: a loaded or rebuilt
    ``Sequential`` keeps stale nodes there from earlier builds."""
    graph = getattr(model, "_functional", None)
    graph = model if graph is None else graph
    by_depth = getattr(graph, "_nodes_by_depth", None)
    if not by_depth:  # a subclassed model: no graph to walk
        tally.uncounted.add(type(model).__name__)
        return
    for depth in sorted(by_depth, reverse=True):
        for node in by_depth[depth]:
            layer = node.operation
            if type(layer).__name__ == "InputLayer":
                continue
            try:
                inputs = [_shape(t) for t in node.arguments.keras_tensors]
                outputs = [_shape(t) for t in node.outputs]
                _layer(layer, inputs, outputs, tally, repeats)
            except (AttributeError, TypeError, ValueError, KeyError, IndexError):
                tally.uncounted.add(type(layer).__name__)


def _shape(tensor: Any) -> Shape:
    return tuple(tensor.shape)[1:]


def _layer(
    layer: Any, inputs: Sequence[Shape], outputs: Sequence[Shape], tally: _Tally, repeats: float
) -> None:
    """Add one call of ``layer`` (its input and output shapes) to the tally."""
    name = type(layer).__name__
    if name in _MODELS:
        _walk(layer, tally, repeats)
        return
    tally.activations += repeats * sum(_elements(shape) for shape in outputs)
    if name == "TimeDistributed":
        _wrapped(layer.layer, inputs[0][1:], outputs[0][1:], tally, repeats * _dim(inputs[0][0]))
    elif name == "Bidirectional":
        _wrapped(layer.forward_layer, inputs[0], outputs[0], tally, repeats, directions=2)
    elif name == "MultiHeadAttention":
        tally.flops += repeats * _attention(layer, inputs)
    else:
        _wrapped(layer, inputs[0] if inputs else (), outputs[0] if outputs else (), tally, repeats)


def _wrapped(
    layer: Any,
    inputs: Shape,
    outputs: Shape,
    tally: _Tally,
    repeats: float,
    directions: int = 1,
) -> None:
    """A layer seen through its wrappers: ``repeats`` sequences a sample, ``directions``."""
    name = type(layer).__name__
    if name in _CELLS or (name == "RNN" and type(layer.cell).__name__ in _CELL_CLASSES):
        recurrent = _recurrent(layer, inputs, directions, repeats)
        tally.recurrent.append(recurrent)
        tally.flops += recurrent.forward_flops
        tally.activations += (
            repeats
            * directions
            * recurrent.timesteps
            * recurrent.units
            * (GATES[recurrent.cell] + 2)
        )
        return
    if name in ("Bidirectional", "TimeDistributed", *_MODELS):
        tally.uncounted.add(name)  # nested wrappers: rare, not counted
        return
    flops = _products(layer, inputs, outputs)
    if flops is None:
        flops = _ELEMENTWISE.get(name, 0) * _elements(outputs) + _pooling(layer, inputs, outputs)
        if layer.weights and name not in _ELEMENTWISE and name not in _FREE:
            tally.uncounted.add(name)
    tally.flops += repeats * directions * flops
    if name == "Dense":
        tally.dense_flops += repeats * directions * flops
        tally.dense_row_flops += repeats * directions * flops * _elements(outputs[:-1])
    if _winograd(layer):
        tally.winograd_flops += repeats * directions * flops
    channels = _conv_channels(layer)
    if channels:
        tally.conv_flops += repeats * directions * flops
        tally.conv_flops_per_channel += repeats * directions * flops / channels


def _products(layer: Any, inputs: Shape, outputs: Shape) -> float | None:
    """Forward FLOPs of a layer's matrix products or convolutions (None: it has none)."""
    name = type(layer).__name__
    if name == "Dense":
        rows, cols = layer.kernel.shape
        return 2.0 * rows * cols * _elements(outputs[:-1]) + 2.0 * _elements(outputs)
    if name.startswith("SeparableConv"):
        positions = _elements(outputs[:-1]) if _channels_last(layer) else _elements(outputs[1:])
        kernels = _elements(layer.depthwise_kernel.shape) + _elements(layer.pointwise_kernel.shape)
        return 2.0 * positions * kernels
    if name.startswith("DepthwiseConv"):
        positions = _elements(outputs[:-1]) if _channels_last(layer) else _elements(outputs[1:])
        return 2.0 * positions * _elements(layer.kernel.shape)
    if name.startswith("Conv") and hasattr(layer, "kernel"):
        transposed = "Transpose" in name
        shape = inputs if transposed else outputs
        positions = _elements(shape[:-1]) if _channels_last(layer) else _elements(shape[1:])
        return 2.0 * positions * _elements(layer.kernel.shape) + 2.0 * _elements(outputs)
    return None


def _pooling(layer: Any, inputs: Shape, outputs: Shape) -> float:
    """One FLOP per pooled input element: a window per output, or the whole input."""
    name = type(layer).__name__
    if name.startswith("Global") and "Pooling" in name:
        return float(_elements(inputs))
    if "Pooling" in name:
        return float(_elements(outputs) * _elements(tuple(layer.pool_size)))
    return 0.0


def _conv_channels(layer: Any) -> int:
    """A convolution's output channels (0 for any other layer)."""
    name = type(layer).__name__
    if not (
        (name.startswith(("Conv", "SeparableConv", "DepthwiseConv")) and hasattr(layer, "kernel"))
        or name.startswith("SeparableConv")
    ):
        return 0
    config = layer.get_config()
    filters = config.get("filters")
    if filters is None:  # a depthwise convolution: as many outputs as inputs x multiplier
        return int(layer.kernel.shape[-2]) * int(config.get("depth_multiplier", 1))
    return int(filters)


def _winograd(layer: Any) -> bool:
    """A 3x3 or 5x5, stride-1, undilated, ungrouped 2D convolution: cuDNN's Winograd case."""
    if type(layer).__name__ != "Conv2D":
        return False
    config = layer.get_config()
    return (
        tuple(config.get("kernel_size", ())) in ((3, 3), (5, 5))
        and tuple(config.get("strides", ())) == (1, 1)
        and tuple(config.get("dilation_rate", (1, 1))) == (1, 1)
        and config.get("groups", 1) == 1
    )


def _attention(layer: Any, inputs: Sequence[Shape]) -> float:
    """Forward FLOPs of multi-head attention: four projections, scores and their weighted sum."""
    query = inputs[0]
    value = inputs[1] if len(inputs) > 1 else query
    key = inputs[2] if len(inputs) > 2 else value
    seq_q, seq_k = _elements(query[:-1]), _elements(key[:-1])
    heads, key_dim = layer.num_heads, layer.key_dim
    value_dim = layer.value_dim or key_dim
    projections = 2.0 * (
        seq_q * _elements(layer._query_dense.kernel.shape)
        + seq_k * _elements(layer._key_dense.kernel.shape)
        + seq_k * _elements(layer._value_dense.kernel.shape)
        + seq_q * _elements(layer._output_dense.kernel.shape)
    )
    scores = 2.0 * seq_q * seq_k * heads * (key_dim + value_dim)
    return projections + scores + 5.0 * seq_q * seq_k * heads  # softmax over the scores


def _recurrent(layer: Any, inputs: Shape, directions: int, sequences: float) -> RecurrentLayer:
    """One recurrent layer (an LSTM, GRU or SimpleRNN, or ``RNN`` around their cell)."""
    name = type(layer).__name__
    cell = _CELLS.get(name) or _CELL_CLASSES[type(layer.cell).__name__]
    units = int(layer.cell.units)
    features = int(layer.cell.kernel.shape[0])
    timesteps = _dim(inputs[0]) if inputs else 0
    return RecurrentLayer(
        cell=cell,
        units=units,
        inputs=features,
        timesteps=timesteps,
        directions=directions,
        sequences=max(1, round(sequences)),
        cudnn=name in ("LSTM", "GRU") and cudnn_eligible(cell, layer.get_config()),
    )


def cudnn_eligible(cell: str, config: dict[str, Any]) -> bool:
    """Whether Keras 3 runs this LSTM/GRU layer as cuDNN's fused kernel on a GPU: only with the
    default activations (tanh, sigmoid), no recurrent dropout, not unrolled, with a bias, not
    ``use_cudnn=False``, and for a GRU ``reset_after`` (keras/src/layers/rnn/lstm.py and gru.py,
    ``backend.cudnn_ok``). A SimpleRNN always runs the generic loop."""
    if cell not in ("lstm", "gru"):
        return False
    return (
        _activation_name(config.get("activation")) == "tanh"
        and _activation_name(config.get("recurrent_activation")) == "sigmoid"
        and not config.get("recurrent_dropout", 0.0)
        and not config.get("unroll", False)
        and bool(config.get("use_bias", True))
        and config.get("use_cudnn", "auto") is not False
        and (cell != "gru" or bool(config.get("reset_after", True)))
    )


def _activation_name(value: object) -> str:
    """``tanh`` from a config's activation, a string or a serialised ``{"config": ...}``."""
    if isinstance(value, dict):
        value = value.get("config", {}).get("name") or value.get("class_name")
    return str(value).rsplit(">", 1)[-1].lower() if value is not None else ""


def _channels_last(layer: Any) -> bool:
    return getattr(layer, "data_format", "channels_last") != "channels_first"


def _dim(value: int | None) -> int:
    """A shape's length on one axis; an open (None) axis at the length the probe feeds it."""
    return UNKNOWN_LENGTH if value is None else int(value)


def _elements(shape: Iterable[int | None]) -> int:
    return math.prod(_dim(d) for d in shape)
