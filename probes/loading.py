"""Turn a probe spec into a compiled Keras model and the specs of its synthetic data.

A user's ``.keras`` file is loaded in Keras' safe mode: a file that would need arbitrary code
(Lambda layers, unregistered custom objects) is refused, never executed. Keras is imported
inside the functions only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.errors import AdvisorError
from advisor.workloads import transformers
from probes import architecture, backend, networks, quiet
from probes.data import UNKNOWN_LENGTH, InputSpec, available_bytes
from probes.limits import LLM_PROBE_MEMORY_BYTES
from probes.spec import ProbeSpec

PROXY_BLOCKS = 16
"""Residual blocks of a deep ResNet's proxy, about: ResNet-50's 16, whose first step (its graph
traced) takes 7 s of a 20 s budget on the 2-vCPU development VM where ResNet-152's 50 take 20 s
(2026-11-26)."""


@dataclass(frozen=True)
class Prepared:
    """A compiled model plus what its synthetic inputs and targets look like."""

    model: Any
    inputs: list[InputSpec]
    target: InputSpec
    flops_per_sample: float
    """Training FLOPs per sample (zoo figure; 0 when unknown)."""
    pool: bool
    """True for synthetic-data workloads: a small pool of batches, not a full-size array."""
    scale: float = 1.0
    """Training FLOPs of the real workload per FLOP of the model built here: above 1 when a
    smaller proxy of a transformer is stepped instead (``advisor.workloads.transformers.probe_shape``)."""
    proxy: str = ""
    """What the proxy is (``2 of 36 layers, 128 of 1024 tokens``); empty when the real model."""
    parameter_scale: float = 1.0
    """Parameters of the real workload per parameter of the model built here: a step's fixed
    cost is mostly the optimizer's pass over every weight, which grows with the parameters."""
    blocks: int = 0
    """Transformer blocks of the real workload (0: not a transformer). A proxy builds fewer;
    the layers the host calls and the kernels a step launches are counted for all of them
    (``probes.run.step_counts``)."""
    stages: tuple[int, ...] = ()
    """Residual blocks per stage of the real ResNet (() when not one); a proxy builds fewer
    (``probe_stages``) and is counted at the real depth as a transformer's is."""

    @property
    def stepped_flops_per_sample(self) -> float:
        """Training FLOPs per sample of the model actually stepped."""
        return self.flops_per_sample / self.scale


def prepare(
    spec: ProbeSpec, flop_budget: float | None = None, max_parameters: int | None = None
) -> Prepared:
    """The model to step and its synthetic data; a transformer whose two samples cost more than
    ``flop_budget`` training FLOPs is replaced by a smaller proxy of the same width (an LLM's
    narrower too, down to ``max_parameters`` weights), a ResNet deeper than ``PROXY_BLOCKS`` by
    one of the same stages with fewer blocks."""
    if spec.workload is not None and spec.workload.transformer is not None:
        return _prepare_transformer(spec.workload, flop_budget, max_parameters)
    if spec.workload is not None:
        stages = probe_stages(spec.workload.stages)
        if stages != spec.workload.stages:
            return _prepare_resnet(spec.workload, stages)
    return _prepare(spec)


def prepare_whole(spec: ProbeSpec) -> Prepared:
    """The whole model of ``spec``, never a proxy: what a data-parallel probe steps on devices
    that hold it (``probes.distributed``)."""
    if spec.workload is not None and spec.workload.transformer is not None:
        return _prepare_transformer(spec.workload, None, None)
    return _prepare(spec)


def probe_stages(stages: tuple[int, ...]) -> tuple[int, ...]:
    """The blocks per stage a probe steps of a ResNet: all of them up to ``PROXY_BLOCKS``, else
    each stage's share of ``PROXY_BLOCKS``, at least one a stage. Tracing a training step costs
    seconds a layer and every bottleneck block does about the same work whatever its stage, so
    a proxy that keeps each stage's share of the blocks keeps the mix of layer shapes: on the
    development VM (1, 3, 12, 1) stepped ResNet-152's batches of 2 and 4 within 4-5% once
    scaled by the FLOP ratio (``docs/BENCHMARKS.md``, "Probe budget")."""
    total = sum(stages)
    if total <= PROXY_BLOCKS:
        return stages
    return tuple(max(1, round(blocks * PROXY_BLOCKS / total)) for blocks in stages)


def _prepare_resnet(w: Any, stages: tuple[int, ...]) -> Prepared:
    """A deep ResNet's proxy of ``stages`` blocks (``probe_stages``), scaled to the real model by
    the counted FLOPs and parameters."""
    model = networks.build(w, stages=stages)
    counted = architecture.read(model)
    inputs, target = _zoo_specs(w)
    return Prepared(
        model, inputs, target, w.train_flops_per_sample,
        w.synthetic_input, w.train_flops_per_sample / counted.train_flops_per_sample,
        f"{sum(stages)} of {sum(w.stages)} blocks, {stages} of {w.stages}",
        parameter_scale=w.parameters / model.count_params(), stages=w.stages,
    )  # fmt: skip


PROXY_BASELINE_BYTES = 3 * 2**29
"""What an LLM job's probe holds besides its proxy's weights: Python, TensorFlow and Keras, the
traced steps, the synthetic sequences and the host's measurements (1.1-1.2 GiB measured with
the smallest proxies on the development VM, 2026-11-29), with room to spare."""
TRAINED_BYTES = 20
"""Bytes a trained weight of a proxy takes at its peak: float32 weight, gradient and AdamW's
two slots (16), and the initialiser's copy while it is built (an 8B layer's 285M weights
peaked at 6.9 GB, 1.2 GB of it the rest, 2026-11-29)."""
FROZEN_BYTES = 8
"""Bytes a frozen weight (LoRA's base) takes at its peak: the weight and the initialiser's
copy (a 13B layer's 400M frozen weights peaked at 3.9 GB, 2026-11-29)."""


OPTIMIZER_SECONDS_PER_WEIGHT = 4e-9
"""A CPU step's fixed cost per weight of the proxy, the optimizer's pass over it mostly: an 8B
job's 2048-wide proxy (88M weights) stepped in 0.33 s at batch 1 and 0.35 s at batch 2 on the
2-vCPU development VM under a load of 3.5 (2026-11-29)."""
STEP_SHARE = 1 / 24
"""Share of the budget one step's fixed cost may take: a proxy's two fits take eight steps or
so, two of them tracing, and the host's dispatch follows."""


def proxy_parameter_cap(w: Any, budget: float) -> int:
    """The most weights an LLM job's proxy may have on a CPU: what fits under
    ``LLM_PROBE_MEMORY_BYTES`` (or in the memory available now, when less) beside
    ``PROXY_BASELINE_BYTES``, at the bytes a trained or a frozen weight takes, and what one
    step passes over in ``STEP_SHARE`` of the ``budget``'s seconds."""
    room = LLM_PROBE_MEMORY_BYTES - PROXY_BASELINE_BYTES
    available = available_bytes()
    if available is not None:
        room = min(room, available - PROXY_BASELINE_BYTES)
    per_weight = FROZEN_BYTES if w.adapters else TRAINED_BYTES
    in_time = budget * STEP_SHARE / OPTIMIZER_SECONDS_PER_WEIGHT
    return max(1, int(min(room // per_weight, in_time)))


def _prepare_transformer(w: Any, flop_budget: float | None, max_parameters: int | None) -> Prepared:
    full: transformers.Shape = w.transformer
    shape = transformers.probe_shape(full, flop_budget, max_parameters)
    if shape.kind == transformers.VISION:
        inputs = [InputSpec((shape.image, shape.image, 3), "float32")]
        target = InputSpec((), "int32", high=shape.head_units)
    else:
        inputs = [InputSpec((shape.sequence,), "int32", high=shape.vocabulary)]
        if shape.kind in (transformers.DECODER, transformers.CAUSAL_LM):  # next-token ids
            target = InputSpec((shape.sequence,), "int32", high=shape.vocabulary)
        elif shape.pooled:
            target = InputSpec((), "int32", high=shape.head_units)
        else:  # SQuAD: start and end positions
            target = InputSpec((2,), "int32", high=shape.sequence)
    scale = full.train_flops_per_sample() / shape.train_flops_per_sample()
    proxy = "" if shape == full else transformers.describe_proxy(shape, full)
    model = networks.build(w, shape)
    return Prepared(
        model, inputs, target, w.train_flops_per_sample, w.synthetic_input, scale, proxy,
        parameter_scale=full.parameters() / shape.parameters(), blocks=full.layers,
    )  # fmt: skip


def _prepare(spec: ProbeSpec) -> Prepared:
    if spec.workload is not None:
        w = spec.workload
        inputs, target = _zoo_specs(w)
        return Prepared(
            networks.build(w), inputs, target, w.train_flops_per_sample, w.synthetic_input
        )
    assert spec.path is not None
    model = load_safely(str(spec.path))
    return Prepared(model, _input_specs(model), _target_spec(model), 0.0, pool=False)


def _zoo_specs(w: Any) -> tuple[list[InputSpec], InputSpec]:
    """The synthetic inputs and targets of a zoo workload (token ids within its vocabulary,
    one-hot characters, class ids)."""
    vocabulary = {"imdb_fasttext": networks.FASTTEXT_VOCABULARY,
                  "imdb_bilstm": networks.BILSTM_VOCABULARY}.get(w.id)  # fmt: skip
    inputs = [
        InputSpec(
            w.input_shape, w.input_dtype, high=vocabulary, one_hot=w.id.startswith("lstm_text")
        )
    ]
    classes = networks.classes(w)
    if classes == 1:
        return inputs, InputSpec((1,), "float32", high=2)
    if w.id == "lstm_text_generation":
        return inputs, InputSpec((classes,), "float32", one_hot=True)
    return inputs, InputSpec((), "int32", high=classes)


def load_safely(path: str) -> Any:
    """Load a ``.keras`` file without running any code it carries, after checking the archive
    against its limits (``probes.spec.check_model_file``)."""
    from probes.spec import check_model_file

    check_model_file(Path(path))
    quiet.prepare()
    import keras

    name = Path(path).name
    try:
        with backend.stderr_silenced():  # a layer may import TensorFlow under JAX: its C++ lines
            model = keras.models.load_model(path, safe_mode=True, compile=True)
    except OSError as exc:
        raise AdvisorError(f"cannot read {name}: {exc.strerror or _first_line(exc)}") from None
    except Exception as exc:  # any failure of a user's file is one line, never a traceback
        text, whole = _first_line(exc), str(exc)
        if "safe_mode" in whole or "Lambda" in whole or "custom" in whole.lower():
            raise AdvisorError(
                f"refusing {name}: it needs arbitrary code to load (a Lambda layer or a custom "
                "object) and advisor loads models in Keras safe mode only"
            ) from None
        where = backend.requested()  # a layer one backend lacks fails here: name the backend
        raise AdvisorError(f"cannot load {name} as a Keras model: {text} (on {where})") from None
    if getattr(model, "optimizer", None) is None or not getattr(model, "compiled", False):
        model.compile(optimizer="adam", loss=_default_loss(model))
    return model


def _first_line(exc: BaseException) -> str:
    """The first non-empty line of an exception's text (its type when it has none), at most
    200 characters."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return (lines[0] if lines else type(exc).__name__)[:200]


def _input_specs(model: Any) -> list[InputSpec]:
    quiet.prepare()
    import keras

    embedding = next(
        (layer for layer in _all_layers(model) if isinstance(layer, keras.layers.Embedding)), None
    )
    specs = []
    for tensor in model.inputs:
        shape = tuple(UNKNOWN_LENGTH if d is None else int(d) for d in tensor.shape[1:])
        dtype = str(tensor.dtype)
        if "string" in dtype or "bool" in dtype:
            raise AdvisorError(
                f"the model's input {getattr(tensor, 'name', '')!r} takes {dtype} values; advisor "
                "feeds synthetic numbers, so give a model whose inputs are numbers (put text "
                "vectorisation before the model)"
            )
        if "int" in dtype:
            high = int(embedding.input_dim) if embedding is not None else 2
            specs.append(InputSpec(shape, "int32", high=high))
        else:
            specs.append(InputSpec(shape, "float32"))
    return specs


def _target_spec(model: Any) -> InputSpec:
    if len(model.outputs) != 1:
        raise AdvisorError("models with several outputs are not supported yet")
    shape = tuple(UNKNOWN_LENGTH if d is None else int(d) for d in model.outputs[0].shape[1:])
    loss = _loss_name(model)
    units = shape[-1] if shape else 1
    if "sparse_categorical" in loss:
        return InputSpec(shape[:-1], "int32", high=units)
    if "categorical" in loss:
        return InputSpec(shape, "float32", one_hot=True)
    if "binary" in loss:
        return InputSpec(shape, "float32", high=2)
    return InputSpec(shape, "float32")


def _loss_name(model: Any) -> str:
    loss = getattr(model, "loss", None)
    if isinstance(loss, str):
        return loss.lower()
    name = getattr(loss, "name", None) or getattr(loss, "__name__", "") or type(loss).__name__
    return str(name).lower()


def _default_loss(model: Any) -> str:
    units = model.outputs[0].shape[-1]
    return "sparse_categorical_crossentropy" if units and units > 1 else "mse"


def _all_layers(model: Any) -> list[Any]:
    found = []
    for layer in model.layers:
        found.append(layer)
        if hasattr(layer, "layers"):
            found.extend(_all_layers(layer))
    return found


def parameter_count(model: Any) -> int:
    return int(sum(math.prod(w.shape) for w in model.weights))


def trained_equivalent(model: Any) -> int:
    """Parameters as trained ones count in memory: a frozen weight (an LLM's under LoRA) holds
    no gradient and no optimizer slots, a quarter of a trained one's bytes."""
    trained = int(sum(math.prod(w.shape) for w in model.trainable_weights))
    return trained + (parameter_count(model) - trained) // 4
