"""PyTorch under ``advisor probe``: optimizer steps, the data they waited for, one step's FLOPs.

Global hooks, no edit to the script:

- ``torch.optim``'s global step hooks see every optimizer's step: a plain loop, Hugging Face's
  ``Trainer``, Lightning and accelerate all call one. Where one optimizer's step runs another's
  (a wrapper), the outer step is the one counted.
- Every ``DataLoader`` iterator's ``__next__`` is timed: the batches between two optimizer steps
  (more than one: gradient accumulation), their samples (the leading dimension of the first
  tensor in each), and the seconds the loop waited for them. The loader's length (its batches
  an epoch) is said at the first step: over the batches a step takes (``probes.script``), an
  epoch's steps. The loader running out after steps were taken from it, or its data beginning
  again (Lightning stops at the length), is an epoch's end; a validation loader's end is not.
- The third step runs under ``torch.utils.flop_counter.FlopCounterMode``, with a module hook
  reading convolutions, recurrent layers and activations as they run: the step's FLOPs as
  PyTorch counts them, forward and backward, and its operators (each a kernel an eager step
  launches on a GPU; views launch none), with what one costs the host here (a tiny operator
  timed after the step, autograd recording it): the host's dispatch of the step, which on a
  fast GPU can take longer than its arithmetic. That step is slower; it is marked ``counted``
  and the probe leaves its time out.

Nothing here imports PyTorch: ``patch`` is given it once the script has imported it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

from advisor.probe.events import emit

COUNTED_STEP = 3
"""The optimizer step whose FLOPs are counted (two before it do any lazy set-up)."""
_CELLS = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "vanilla", "RNN_RELU": "vanilla"}
_GATES = {"lstm": 4, "gru": 3, "vanilla": 1}
"""Products of a recurrent cell a time step (``probes.result.GATES``)."""
_TRAINING_PASSES = 3
"""Training FLOPs over forward ones where PyTorch's counter cannot see a kernel (its fused
recurrent ones): ``probes.result.TRAINING_PASSES``."""
_FEED = "_advisor_feed"
"""The attribute a loader's iterator carries its ``_Feed`` in."""
OPERATOR_CALLS = 300
"""Calls of a tiny operator timed for one operator's host cost (the least of three runs of it)."""


def patch(torch: Any) -> None:
    """Time every ``DataLoader`` batch and report every optimizer step (once per process)."""
    from torch.optim import optimizer
    from torch.utils.data import dataloader

    iterator = dataloader._BaseDataLoaderIter
    if getattr(iterator.__next__, "_advisor", False):
        return
    loop = _Loop(torch)
    fetch = iterator.__next__

    def timed_next(self: Any) -> Any:
        started = time.perf_counter()
        try:
            batch = fetch(self)
        except StopIteration:
            loop.ran_out(self)
            raise
        loop.fetched(self, batch, time.perf_counter() - started)
        return batch

    timed_next._advisor = True  # type: ignore[attr-defined]
    iterator.__next__ = timed_next  # type: ignore[method-assign]
    optimizer.register_optimizer_step_pre_hook(loop.entered)
    optimizer.register_optimizer_step_post_hook(loop.stepped)


class _Feed:
    """One epoch of one loader iterator, as the hooks saw it (kept on the iterator)."""

    def __init__(self, steps: int) -> None:
        self.began = steps
        """Optimizer steps taken when it gave its first batch."""
        self.since = steps
        """The steps taken when its counts below began (they are since the last step)."""
        self.batches = 0
        self.samples = 0
        self.wait = 0.0
        self.ended = False
        """Its epoch's end was reported."""

    def add(self, steps: int, samples: int, seconds: float) -> None:
        if self.since != steps:
            self.since, self.batches, self.samples, self.wait = steps, 0, 0, 0.0
        self.batches += 1
        self.samples += samples
        self.wait += seconds


class _Loop:
    """The training loop as the hooks see it: its steps, and the loader that feeds them."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.depth = 0
        """Optimizer steps under way (a wrapper's step runs its inner optimizer's)."""
        self.steps = 0
        self.current: Any = None
        """The iterator that gave the latest batch."""
        self.trained: tuple[Any, _Feed] | None = None
        """The dataset and the epoch that fed the latest step."""
        self.count: _Count | None = None

    def fetched(self, iterator: Any, batch: Any, seconds: float) -> None:
        feed = getattr(iterator, _FEED, None)
        if feed is None or getattr(iterator, "_num_yielded", 0) == 1:  # new, or reset for reuse
            self.over(getattr(iterator, "_dataset", None))
            feed = _Feed(self.steps)
            setattr(iterator, _FEED, feed)
        feed.add(self.steps, _samples(batch), seconds)
        self.current = iterator
        if self.count is not None:
            self.count.input_bytes += _bytes(batch)

    def over(self, dataset: Any) -> None:
        """The training data begins again without having run out (Lightning stops at its
        length): its last epoch is over."""
        if self.trained is not None and dataset is not None and self.trained[0] is dataset:
            self.ended(self.trained[1])

    def ran_out(self, iterator: Any) -> None:
        feed = getattr(iterator, _FEED, None)
        if feed is not None:
            self.ended(feed)

    def ended(self, feed: _Feed) -> None:
        """An epoch ends where a loader that fed optimizer steps is done (a validation
        loader's end is no epoch's)."""
        if not feed.ended and self.steps > feed.began:
            feed.ended = True
            emit({"event": "epoch"})

    def entered(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self.depth += 1

    def stepped(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self.depth = max(0, self.depth - 1)
        if self.depth:
            return  # an inner optimizer's step: its wrapper's is the one counted
        feed = getattr(self.current, _FEED, None)
        if feed is not None and feed.since != self.steps:
            feed = None  # no batch since the last step
        self.steps += 1
        if feed is not None:
            self.trained = getattr(self.current, "_dataset", None), feed
        if self.steps == 1:
            emit({"event": "loader", "batches": _length(self.current)})
            emit({"event": "backend", "name": "torch", "native": True})
        samples = feed.samples if feed is not None else 0
        counted, self.count = self.count, None
        model = counted.close(samples, optimizer) if counted is not None else None
        emit({"event": "step", "batch": samples or None, "micro": feed.batches if feed else None,
              "wait": feed.wait if feed else None, "counted": counted is not None})  # fmt: skip
        if model is not None:
            emit(model)
        if self.steps == COUNTED_STEP - 1:
            self.count = _Count(self.torch)


def _length(iterator: Any) -> int | None:
    """Batches an epoch of a loader's iterator (None: none, or an iterable without a length)."""
    try:
        return len(iterator) if iterator is not None else None
    except TypeError:
        return None


class _Count:
    """One step under PyTorch's FLOP counter, its leaf modules read as they run."""

    def __init__(self, torch: Any) -> None:
        from torch.nn.modules.module import register_module_forward_hook
        from torch.utils.flop_counter import FlopCounterMode

        self.torch = torch
        self.activations = 0.0
        self.convs: list[tuple[float, bool, int]] = []
        """Each convolution call: its forward FLOPs, whether Winograd's case, output channels."""
        self.recurrent: list[dict[str, Any]] = []
        self.linears: list[tuple[float, int]] = []
        """Each dense layer's call: its forward FLOPs, the rows each sample gives its product."""
        self.input_bytes = 0
        self.precision = ""
        self.hook = register_module_forward_hook(self.ran)
        self.mode = FlopCounterMode(display=False)
        self.mode.__enter__()
        self.operators = _operators(torch)
        self.operators.__enter__()

    def ran(self, module: Any, inputs: Any, output: Any) -> None:
        if not self.precision:
            self.precision = _precision(self.torch, output)
        if next(module.children(), None) is not None:
            return  # a container: its leaves are counted
        self.activations += sum(t.numel() for t in _tensors(output))
        nn = self.torch.nn
        if isinstance(module, nn.modules.conv._ConvNd):
            self.convs.append(_convolution(module, output))
        elif isinstance(module, nn.Linear) and inputs and hasattr(inputs[0], "shape"):
            self.linears.append(_dense(module, inputs[0]))
        elif isinstance(module, nn.RNNBase):
            for layer in _recurrent(module, inputs):
                self.recurrent.append(layer)
                gates = _GATES[layer["cell"]] + 2  # and the cell and hidden states
                steps = layer["timesteps"] * layer["directions"]
                self.activations += layer["batch"] * steps * layer["units"] * gates

    def recurrent_flops(self, counts: dict[Any, int]) -> float:
        """The recurrent layers' training FLOPs for the batch where the counter did not count
        them: it has no formula for PyTorch's fused RNN kernels (``aten._lstm``, on a CPU)."""
        if any(word in str(op) for op in counts for word in ("lstm", "gru", "rnn")):
            return 0.0
        forward = 0.0
        for layer in self.recurrent:
            cell, units, steps = _GATES[layer["cell"]], layer["units"], layer["timesteps"]
            each = 2 * cell * (layer["inputs"] + units) * units * steps * layer["directions"]
            forward += each * layer["batch"]
        return _TRAINING_PASSES * forward

    def close(self, samples: int, optimizer: Any) -> dict[str, Any]:
        """The ``model`` event: the step's counts per sample (None where it saw no samples),
        its operators and the host's seconds for one."""
        self.operators.__exit__(None, None, None)
        self.mode.__exit__(None, None, None)
        self.hook.remove()
        counts = self.mode.get_flop_counts().get("Global", {})
        conv = float(sum(v for op, v in counts.items() if "convolution" in str(op)))
        total = float(sum(counts.values())) + self.recurrent_flops(counts)
        forward = sum(flops for flops, _, _ in self.convs)
        winograd = sum(flops for flops, fits, _ in self.convs if fits)
        per_channel = sum(flops / channels for flops, _, channels in self.convs if channels)
        dense = sum(flops for flops, _ in self.linears)
        architecture = None
        if samples and total:
            architecture = {
                "train_flops_per_sample": total / samples,
                "conv_share": conv / total,
                "winograd_share": conv / total * winograd / forward if forward else 0.0,
                "conv_channels": forward / per_channel if per_channel else 0.0,
                "activation_elements": self.activations / samples,
                "input_bytes": self.input_bytes / samples,
                "matmul_rows": sum(f * rows for f, rows in self.linears) / dense if dense else 0.0,
                "recurrent": [{k: v for k, v in r.items() if k != "batch"} for r in self.recurrent],
            }
        return {"event": "model", "architecture": architecture,
                "parameters": _parameters(optimizer), "precision": self.precision,
                "operators": self.operators.count,
                "operator_seconds": _operator_seconds(self.torch)}  # fmt: skip


def _operators(torch: Any) -> Any:
    """A dispatch mode counting the operators that run under it, views aside (a view shares
    its input's memory: no kernel)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Operators(TorchDispatchMode):
        count = 0

        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            if not getattr(func, "is_view", False):
                self.count += 1
            return func(*args, **(kwargs or {}))

    return Operators()


def _operator_seconds(torch: Any) -> float:
    """What one operator costs the host here: a tiny product that autograd records, called
    ``OPERATOR_CALLS`` times, the least of three runs (a first run warms it)."""
    weight = torch.zeros(16, requires_grad=True)
    runs = []
    for _ in range(4):
        started = time.perf_counter()
        for _ in range(OPERATOR_CALLS):
            weight.mul(1.0)
        runs.append((time.perf_counter() - started) / OPERATOR_CALLS)
    return min(runs[1:])


def _convolution(module: Any, output: Any) -> tuple[float, bool, int]:
    """A convolution's forward FLOPs for its batch (two a multiply-add, over its kernel at
    every output position), whether it is cuDNN's Winograd case, its output channels."""
    channels = int(module.out_channels)
    positions = output.numel() / channels if channels else 0.0
    flops = 2.0 * module.weight.numel() * positions
    winograd = (
        type(module).__name__ == "Conv2d"
        and tuple(module.kernel_size) in ((3, 3), (5, 5))
        and tuple(module.stride) == (1, 1)
        and tuple(module.dilation) == (1, 1)
        and module.groups == 1
    )
    return flops, winograd, channels


def _dense(module: Any, inputs: Any) -> tuple[float, int]:
    """A dense layer's forward FLOPs for its call, and the rows each sample gives its product:
    every position between the batch and the features (a transformer's tokens), 1 for a
    sample that is one vector."""
    rows_a_sample = 1
    for size in tuple(inputs.shape)[1:-1]:
        rows_a_sample *= int(size)
    return 2.0 * module.weight.numel() * inputs.numel() / max(
        int(module.in_features), 1
    ), rows_a_sample


def _recurrent(module: Any, inputs: Any) -> list[dict[str, Any]]:
    """Each layer of an ``nn.LSTM``/``GRU``/``RNN`` call, as ``probes.result.RecurrentLayer``
    takes it, and the call's ``batch``."""
    cell = _CELLS.get(str(module.mode))
    sequence = inputs[0] if inputs else None
    if cell is None or sequence is None:
        return []
    sizes = getattr(sequence, "batch_sizes", None)  # a PackedSequence
    if sizes is not None:
        timesteps, batch = len(sizes), int(sizes[0])
    elif sequence.dim() == 3:
        time_axis = 1 if module.batch_first else 0
        timesteps, batch = int(sequence.shape[time_axis]), int(sequence.shape[1 - time_axis])
    else:
        timesteps, batch = int(sequence.shape[0]), 1  # one unbatched sequence
    directions = 2 if module.bidirectional else 1
    units = int(module.hidden_size)
    return [
        {"cell": cell, "units": units, "timesteps": timesteps, "directions": directions,
         "inputs": int(module.input_size) if layer == 0 else units * directions, "cudnn": True,
         "batch": batch}
        for layer in range(int(module.num_layers))
    ]  # fmt: skip


def _precision(torch: Any, output: Any) -> str:
    """``autocast bfloat16`` when the forward ran under autocast, else its outputs' dtype."""
    tensor = next(_tensors(output), None)
    if tensor is None:
        return ""
    device = tensor.device.type
    try:
        if torch.is_autocast_enabled(device):
            return f"autocast {str(torch.get_autocast_dtype(device)).removeprefix('torch.')}"
    except (AttributeError, RuntimeError, TypeError):  # a PyTorch before 2.4, a device without
        pass
    return str(tensor.dtype).removeprefix("torch.")


def _parameters(optimizer: Any) -> int:
    """The parameters the optimizer updates (each tensor once)."""
    seen = {id(p): p for group in getattr(optimizer, "param_groups", ()) for p in group["params"]}
    return int(sum(p.numel() for p in seen.values()))


def _tensors(value: Any, depth: int = 0) -> Iterator[Any]:
    """The tensors in a batch or an output: itself, or inside tuples, lists and mappings."""
    if hasattr(value, "numel") and hasattr(value, "shape"):
        yield value
    elif depth < 4 and isinstance(value, Mapping):
        for item in value.values():
            yield from _tensors(item, depth + 1)
    elif depth < 4 and isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item, depth + 1)


def _samples(batch: Any) -> int:
    """A batch's samples: the leading dimension of its first tensor (0 where it has none)."""
    first = next(_tensors(batch), None)
    return int(first.shape[0]) if first is not None and len(first.shape) else 0


def _bytes(batch: Any) -> int:
    return int(sum(t.numel() * t.element_size() for t in _tensors(batch)))
