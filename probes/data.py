"""Synthetic in-memory data of the real shapes and dtypes (nothing is downloaded).

Arrays are filled by tiling a small random block, which is as fast as a copy: a probe must not
spend its budget on a random-number generator. Arrays are full size up to ``ARRAY_CAP_BYTES``
(what a step pays - a gather of one batch - does not depend on the array's length beyond that);
ImageNet workloads use a pool of a few batches, like the synthetic-data benchmarks they reproduce.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from advisor.errors import AdvisorError
from advisor.workloads import weights

UNKNOWN_LENGTH = 64
"""Length used for a variable-length (None) input axis of a user's model."""
ARRAY_CAP_BYTES = 512 * 2**20
SYNTHETIC_POOL_BATCHES = 8
_BLOCK = 1024


@dataclass(frozen=True)
class InputSpec:
    """One model input or target: per-sample shape, dtype and value range."""

    shape: tuple[int, ...]
    dtype: str
    high: int | None = None
    """Integer values lie in ``[0, high)``; None for floats."""
    one_hot: bool = False
    """Float one-hot vectors over the last axis (character LSTM inputs, categorical targets)."""

    @property
    def sample_bytes(self) -> int:
        return math.prod(self.shape) * np.dtype(self.dtype).itemsize


def rows_for(specs: list[InputSpec], samples: int, batch_size: int, *, pool: bool) -> int:
    """How many rows to allocate: the full count, capped (in whole batches) or a small pool."""
    per_row = sum(spec.sample_bytes for spec in specs)
    cap = max(batch_size, ARRAY_CAP_BYTES // max(per_row, 1) // batch_size * batch_size)
    if pool:
        return min(samples, SYNTHETIC_POOL_BATCHES * batch_size, cap)
    if samples <= cap:
        return samples
    return cap + samples % batch_size  # keep the real partial last batch


def make(spec: InputSpec, rows: int, seed: int = 0) -> np.ndarray:
    """An array of ``rows`` samples following ``spec``."""
    rng = np.random.default_rng(seed)
    block_rows = min(rows, _BLOCK)
    block: np.ndarray
    if spec.one_hot:
        index = rng.integers(0, spec.shape[-1], size=(block_rows, *spec.shape[:-1]))
        block = np.eye(spec.shape[-1], dtype=spec.dtype)[index]
    elif spec.high is not None:
        block = rng.integers(0, spec.high, size=(block_rows, *spec.shape)).astype(spec.dtype)
    else:
        block = rng.random(size=(block_rows, *spec.shape), dtype=np.float32).astype(spec.dtype)
    if rows == block_rows:
        return block
    return np.resize(block, (rows, *spec.shape))


def check_memory(needed_bytes: int, what: str, then: str = "") -> None:
    """Refuse work that cannot fit in the memory available now, with the estimate."""
    available = available_bytes()
    if available is not None and needed_bytes > available:
        raise AdvisorError(
            f"{what} does not fit in memory: needs about {weights.gib(needed_bytes)}, "
            f"{weights.gib(available)} available{then}"
        )


def available_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def training_bytes(parameters: int, specs: list[InputSpec], rows: int, batch_size: int) -> int:
    """Rough memory of a training run: weights, gradients and two optimizer slots, the arrays
    twice (NumPy and the tf.data copy) and an allowance of 8 values per input value in a batch
    for activations (a floor, not a bound: deep conv nets keep more)."""
    data = sum(spec.sample_bytes for spec in specs) * rows * 2
    activations = sum(spec.sample_bytes for spec in specs) * batch_size * 8
    return weights.training_bytes(parameters) + data + activations


def peak_rss_bytes() -> int:
    """Peak resident memory of this process (Linux: VmHWM)."""
    try:
        with open(f"/proc/{os.getpid()}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def as_inputs(arrays: list[np.ndarray]) -> Any:
    """A single array for one-input models, else the list Keras expects."""
    return arrays[0] if len(arrays) == 1 else arrays


def row_count(inputs: Any) -> int:
    """Rows of a model's input: one array, or the first of a list of them."""
    first = inputs[0] if isinstance(inputs, list | tuple) else inputs
    return int(getattr(first, "shape", (0,))[0])
