"""Where a step's time goes, by op class, from TensorFlow's profiler (a few extra steps).

The profiler writes an XSpace (``*.xplane.pb``); every TensorFlow op it records on the host is
named ``scope/name:Type``. Ops are classed by type and scope (an op inside an LSTM/GRU loop is
``recurrent`` whatever its type); control-flow containers are skipped so that their bodies are
not counted twice. Shares are of the profiled steps' wall time; what no op accounts for is
``overhead`` (Python, Keras, the executor). TensorFlow is imported inside the function only.

Backends without such a profiler here (JAX, PyTorch: ``probes.backend``) take the split from the
model's layers instead (``layer_split``): each layer's forward FLOPs, classed by layer type. It
has no ``overhead`` share; the host's dispatch the probe measures stands for it downstream.
"""

from __future__ import annotations

import glob
import math
import os
import shutil
import tempfile
import time
from collections.abc import Iterable
from typing import Any

CLASSES = ("matmul_conv", "elementwise", "recurrent", "embedding", "input_pipeline", "overhead")
_CONTAINERS = {"While", "StatelessWhile", "If", "StatelessIf", "PartitionedCall",
               "StatefulPartitionedCall", "Case", "StatelessCase", "_Retval", "_Arg"}  # fmt: skip
_MATMUL_CONV = ("MatMul", "Conv", "Einsum", "_FusedConv", "_MklFused", "_MklConv", "_MklMatMul",
                "_MklNativeConv", "_MklNativeFused", "DepthwiseConv")  # fmt: skip
_EMBEDDING = ("Gather", "Scatter", "SparseSegment", "UnsortedSegment", "EmbeddingLookup")
_RECURRENT_SCOPES = ("lstm", "gru", "rnn", "/while/")

STEPS = 4
"""Training steps the op profile times (a probe leaves time for them, ``probes.run``)."""


def classify(name: str, op_type: str) -> str | None:
    """The class of one op event, or None for containers and untyped events."""
    if not name or not op_type or op_type in _CONTAINERS or " " in op_type or name.endswith(":"):
        return None  # framework activity (``ExecutorState::Process``) or a container
    lowered = name.lower()
    if op_type.startswith("IteratorGetNext"):
        return "input_pipeline"
    if any(scope in lowered for scope in _RECURRENT_SCOPES):
        return "recurrent"
    if any(part in op_type for part in _EMBEDDING) or "embedding" in lowered:
        return "embedding"
    if any(op_type.startswith(part) or part in op_type for part in _MATMUL_CONV):
        return "matmul_conv"
    return "elementwise"


def shares(events: Iterable[tuple[str, float]], wall_seconds: float) -> dict[str, float]:
    """Share of ``wall_seconds`` per class from ``(name:Type, seconds)`` op events."""
    totals = dict.fromkeys(CLASSES, 0.0)
    for full_name, seconds in events:
        name, _, op_type = full_name.rpartition(":")
        kind = classify(name, op_type)
        if kind is not None:
            totals[kind] += seconds
    busy = sum(totals.values())
    scale = min(1.0, wall_seconds / busy) if busy > 0 else 0.0  # overlapping ops: cap at wall
    result = {k: v * scale / wall_seconds for k, v in totals.items() if k != "overhead"}
    result["overhead"] = max(0.0, 1.0 - sum(result.values()))
    return {k: round(v, 4) for k, v in result.items()}


def steps_wall(steps: int, step_seconds: float | None, fit_wall: float) -> float:
    """The wall time the profiled steps stand for.

    A short ``fit()`` call also pays its own set-up (iterator, callbacks, epoch hooks), which a
    real epoch spreads over hundreds of steps: counted against four steps it would show up as
    most of a step's time, "overhead" that does not exist in training. So when the probe measured
    the steady step time, the shares are of ``steps x step_seconds``; otherwise of the call."""
    return steps * step_seconds if step_seconds else fit_wall


def op_split(
    model: Any, x: Any, y: Any, batch: int, steps: int = STEPS, step_seconds: float | None = None
) -> dict[str, float]:
    """Profile ``steps`` training steps of an already-traced ``model`` (empty on failure: the
    split is a refinement, never a reason for a probe to fail). ``step_seconds``: the probe's
    steady step time at ``batch`` (see ``steps_wall``). Called through the TensorFlow backend
    (``probes.backend``) on a model it built: the framework is prepared and imported already."""
    import tensorflow as tf

    rows = min(len(x) if hasattr(x, "__len__") else batch * steps, batch * steps)
    folder = tempfile.mkdtemp(prefix="advisor-profile-")
    try:
        tf.profiler.experimental.start(folder)
        begin = time.perf_counter()
        model.fit(x[:rows], y[:rows], batch_size=batch, epochs=1, verbose=0, shuffle=True)
        wall = time.perf_counter() - begin
        tf.profiler.experimental.stop()
        return shares(_host_op_events(folder), steps_wall(-(-rows // batch), step_seconds, wall))
    except Exception:  # a profiler that cannot start (one already running, no plugin)
        return {}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _host_op_events(folder: str) -> list[tuple[str, float]]:
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    events: list[tuple[str, float]] = []
    for path in glob.glob(os.path.join(folder, "**", "*.xplane.pb"), recursive=True):
        space = xplane_pb2.XSpace()
        with open(path, "rb") as handle:
            space.ParseFromString(handle.read())
        for plane in space.planes:
            if not plane.name.startswith("/host:"):
                continue
            names = {key: meta.name for key, meta in plane.event_metadata.items()}
            for line in plane.lines:
                for event in line.events:
                    name = names.get(event.metadata_id, "")
                    if ":" in name:
                        events.append((name, event.duration_ps / 1e12))
    return events


_RECURRENT_LAYERS = ("LSTM", "GRU", "SimpleRNN", "RNN", "Bidirectional", "ConvLSTM")
_MATMUL_CONV_LAYERS = ("Dense", "EinsumDense", "Conv", "DepthwiseConv", "SeparableConv")


def layer_split(model: Any) -> dict[str, float]:
    """Share of a step by op class from the model's layers alone: each layer's forward FLOPs
    (``layer_flops``), classed by its type. A split for backends with no profiler here: it
    cannot see the executor's overhead or a slow kernel, only where the arithmetic is."""
    totals = dict.fromkeys(CLASSES, 0.0)
    for layer in leaf_layers(model):
        kind, flops = layer_class(layer), layer_flops(layer)
        totals[kind] += flops
    busy = sum(totals.values())
    if busy <= 0:
        return {}
    return {k: round(v / busy, 4) for k, v in totals.items()}


def layer_class(layer: Any) -> str:
    name = type(layer).__name__
    if any(part in name for part in _RECURRENT_LAYERS):
        return "recurrent"
    if "Embedding" in name:
        return "embedding"
    if any(name.startswith(part) for part in _MATMUL_CONV_LAYERS):
        return "matmul_conv"
    return "elementwise"


def layer_flops(layer: Any) -> float:
    """Forward FLOPs of one sample through ``layer``: 2 x weights x output positions for dense
    and convolution layers (a kernel's weights are used once per output position), 2 x weights
    x time steps for recurrent layers, one per output value for the rest (elementwise work)."""
    output = _shape(getattr(layer, "output", None))
    values = math.prod(output) if output else 0
    weights = sum(math.prod(w.shape) for w in layer.trainable_weights)
    kind = layer_class(layer)
    if kind == "recurrent":
        steps = _shape(getattr(layer, "input", None))
        return 2.0 * weights * (steps[0] if steps else 1)
    if kind == "matmul_conv" and output:
        positions = math.prod(output[:-1]) if len(output) > 1 else 1
        return 2.0 * weights * positions
    return float(values)


def _shape(tensor: Any) -> tuple[int, ...]:
    """A tensor's shape without its batch axis (unknown axes as 1); () when it has none."""
    shape = getattr(tensor, "shape", None)
    if shape is None:
        return ()
    return tuple(int(d) if d is not None else 1 for d in tuple(shape)[1:])


def leaf_layers(model: Any) -> list[Any]:
    """Every layer that does the work itself (nested models and a Bidirectional's wrapped
    layers counted once, as the wrapper)."""
    found = []
    for layer in getattr(model, "layers", []):
        if hasattr(layer, "layers") and layer_class(layer) != "recurrent":
            found.extend(leaf_layers(layer))
        else:
            found.append(layer)
    return found
