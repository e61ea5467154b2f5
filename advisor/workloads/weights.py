"""How much memory a model's weights take to train, counted before anything is built.

Keras allocates every weight of a loaded model before it reads a stored one, so the layers of
its ``config.json`` are read here as plain JSON (no Keras, no TensorFlow) and their weights
counted from each layer's config and saved input shape (``build_config``). Training holds each
weight four times or more, 4 bytes each: the weight, its gradient and the optimizer's slots (Adam
two, SGD with momentum one; ``compile_config``, else Adam). A layer this reader does not know
counts as none: the count is a floor, so a model is refused only when what is certainly there
does not fit (the case it guards against: docs/BENCHMARKS.md, "Robustness, round three")."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from advisor.errors import AdvisorError

BYTES_PER_WEIGHT = 4
"""float32: a mixed-precision policy still keeps its weights and slots in float32."""
MAX_CONFIG_BYTES = 16 * 1024**2
"""A .keras file's ``config.json`` read at most: a model of thousands of layers is under 2 MB."""
MAX_DEPTH = 64
"""Models nested in models followed at most (a real one nests two or three)."""

_GATES = {"LSTM": 4, "GRU": 3, "SimpleRNN": 1}
SLOTS = {"sgd": 0, "momentum": 1, "rmsprop": 1, "adagrad": 1, "lion": 1, "adam": 2, "adamw": 2,
         "adamax": 2, "nadam": 2, "adadelta": 2, "ftrl": 2, "lamb": 2}  # fmt: skip
"""Per-weight state tensors of each optimizer (``momentum``: SGD with momentum), the one table
the probe's memory count, the step model's optimizer traffic and a checkpoint's size read."""


@dataclass(frozen=True)
class Count:
    """The weights a model's layers declare and the optimizer's slots per weight."""

    parameters: int
    slots: int = 2
    optimizer: str = "adam"

    @property
    def training_bytes(self) -> int:
        """Weights, gradients and optimizer slots: what training holds before any data."""
        return training_bytes(self.parameters, self.slots)

    def describe(self) -> str:
        return (
            f"{self.parameters:,} weights, their gradients and {self.slots} {self.optimizer} "
            f"slot{'s' if self.slots != 1 else ''}, {BYTES_PER_WEIGHT} bytes each"
        )


def training_bytes(parameters: int, slots: int = 2) -> int:
    return parameters * BYTES_PER_WEIGHT * (2 + slots)


def gib(size: int) -> str:
    """``23.8 GiB``; ``1.2e+03 GiB`` for what no machine has."""
    value = size / 1024**3
    return f"{value:,.1f} GiB" if value < 1e6 else f"{value:.2g} GiB"


def read_config(data: bytes, name: str) -> dict[str, Any]:
    """A .keras file's ``config.json``, parsed (one ``AdvisorError`` line when it is not)."""
    try:
        config = json.loads(data)
    except RecursionError:
        raise AdvisorError(f"{name}: its config.json is nested too deeply to read") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise AdvisorError(f"{name}: its config.json is not JSON ({str(exc)[:80]})") from None
    if not isinstance(config, dict):
        raise AdvisorError(f"{name}: its config.json is not a Keras model's config")
    return config


def count(config: dict[str, Any]) -> Count:
    """The weights ``config`` (a model's ``config.json``) declares, and its optimizer's slots."""
    total = sum(_layer_weights(layer) for layer in _layers(config, 0))
    optimizer, slots = _optimizer(config.get("compile_config"))
    return Count(total, slots, optimizer)


SIZE_FIELDS = ("units", "filters", "input_dim", "output_dim", "num_heads", "key_dim")
"""A layer's sizes that Keras needs as positive whole numbers to build it."""


def bad_size(config: dict[str, Any]) -> str | None:
    """The first layer size of ``config`` that is not a positive whole number, said with its
    layer and value (``layer 'dense' has units -3``), or None: Keras refuses such a layer only
    while building it, seconds later, in its own words without the value."""
    for layer in _layers(config, 0):
        inner = _table(layer.get("config"))
        wrapped = _table(_table(inner.get("layer")).get("config"))
        for settings in (inner, wrapped):
            name = str(settings.get("name") or layer.get("class_name") or "?")[:60]
            sizes = [(field, settings[field]) for field in SIZE_FIELDS if field in settings]
            if "kernel_size" in settings:
                sizes += [("kernel_size", k) for k in _listed(settings["kernel_size"])]
            for field, value in sizes:
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    return f"layer {name!r} has {field} {repr(value)[:40]}"
    return None


def _layers(model: Any, depth: int) -> Iterator[dict[str, Any]]:
    """Every layer of ``model`` and of the models nested in it."""
    config = model.get("config") if isinstance(model, dict) else None
    layers = config.get("layers") if isinstance(config, dict) else None
    if depth > MAX_DEPTH or not isinstance(layers, list):
        return
    for layer in layers:
        if not isinstance(layer, dict):
            continue
        inner = layer.get("config")
        if isinstance(inner, dict) and isinstance(inner.get("layers"), list):
            yield from _layers(layer, depth + 1)
        else:
            yield layer


def _layer_weights(layer: dict[str, Any]) -> int:
    kind = str(layer.get("class_name", ""))
    config, build = _table(layer.get("config")), _table(layer.get("build_config"))
    shape = _shape(build.get("input_shape"))
    if kind in ("Bidirectional", "TimeDistributed"):
        inner = config.get("layer")
        if not isinstance(inner, dict):
            return 0
        if kind == "TimeDistributed":
            shape = shape[:1] + shape[2:]
        wrapped = {**inner, "build_config": {"input_shape": list(shape)}}
        return (2 if kind == "Bidirectional" else 1) * _layer_weights(wrapped)
    if kind == "Embedding":
        return _whole(config.get("input_dim")) * _whole(config.get("output_dim"))
    if kind == "MultiHeadAttention":
        return _attention(config, build)
    if not shape:
        return 0  # not built when saved: nothing known to count
    return _shaped(kind, config, shape)


def _shaped(kind: str, config: dict[str, Any], shape: tuple[int, ...]) -> int:
    """Weights of a layer whose input shape is known."""
    first = config.get("data_format") == "channels_first"
    channels = shape[1] if first and len(shape) > 1 else shape[-1]
    bias = 1 if config.get("use_bias", True) else 0
    if kind == "Dense":
        units = _whole(config.get("units"))
        return channels * units + bias * units
    if kind in _GATES:
        units, gates = _whole(config.get("units")), _GATES[kind]
        biases = 2 if kind == "GRU" and config.get("reset_after", True) else 1
        return gates * units * (channels + units + bias * biases)
    if kind in ("BatchNormalization", "LayerNormalization"):
        per = 4 if kind == "BatchNormalization" else 2
        return per * channels
    kernel = math.prod(_whole(k) for k in _listed(config.get("kernel_size")))
    filters = _whole(config.get("filters"))
    multiplier = _whole(config.get("depth_multiplier", 1))
    if kind.startswith(("Conv", "Convolution")):
        groups = max(_whole(config.get("groups", 1)), 1)
        return kernel * (channels // groups) * filters + bias * filters
    if kind.startswith("DepthwiseConv"):
        return kernel * channels * multiplier + bias * channels * multiplier
    if kind.startswith("SeparableConv"):
        inner = channels * multiplier
        return kernel * inner + inner * filters + bias * filters
    return 0


def _attention(config: dict[str, Any], build: dict[str, Any]) -> int:
    build = _table(build.get("shapes_dict")) or build  # Keras 3 saves the shapes of each input
    heads, key = _whole(config.get("num_heads")), _whole(config.get("key_dim"))
    value = _whole(config.get("value_dim")) or key
    query_dim = (_shape(build.get("query_shape")) or (0,))[-1]
    value_dim = (_shape(build.get("value_shape")) or (0,))[-1]
    key_dim = (_shape(build.get("key_shape")) or (value_dim,))[-1]
    bias = 1 if config.get("use_bias", True) else 0
    projections = (query_dim + key_dim) * heads * key + value_dim * heads * value
    output = query_dim
    return projections + bias * heads * (2 * key + value) + heads * value * output + bias * output


def of_workload(parameters: int, optimizer: str) -> Count:
    """The count of a zoo workload (its optimizer named as the zoo names it)."""
    return Count(parameters, *_optimizer({"optimizer": optimizer})[::-1])


def _optimizer(compiled: object) -> tuple[str, int]:
    """The optimizer's name and its slots per weight (Adam's two when not said)."""
    optimizer = compiled.get("optimizer") if isinstance(compiled, dict) else None
    settings: dict[str, Any] = {}
    if isinstance(optimizer, dict):
        settings = _table(optimizer.get("config"))
        optimizer = optimizer.get("class_name")
    name = str(optimizer).lower() if isinstance(optimizer, str) else "adam"
    if name not in SLOTS:
        return "adam", 2
    slots = SLOTS[name]
    if name == "sgd" and settings.get("momentum"):
        slots = 1
    if name == "rmsprop":
        slots += bool(settings.get("momentum")) + bool(settings.get("centered"))
    return name, slots


def _shape(value: object) -> tuple[int, ...]:
    """A saved shape, batch axis first, unknown sizes (``None``, nonsense) as 0."""
    if not isinstance(value, list) or not value or isinstance(value[0], list):
        return ()
    return tuple(_whole(v) for v in value)


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _listed(value: object) -> list[object]:
    return value if isinstance(value, list) else [value]


def _whole(value: object) -> int:
    """A size from a config: a whole number >= 0, else 0 (unknown)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value
