"""GPU kernel paths fitted on measured kernels (``advisor.fitting.kernels``, ``make refit``).

Model-level results cannot separate a cuDNN LSTM's per-time-step latency from its arithmetic, so
these terms are fitted on kernel-level measurements instead: baidu-research/DeepBench's training
results on eight NVIDIA GPUs (``data/gpu-kernels-deepbench.csv``, derived by
``advisor/fitting/derive/deepbench.py``), each GPU's peak from ``data/deepbench-gpus.csv``.

cuDNN recurrent layer (vanilla, GRU, LSTM), forward + both backward passes, one direction::

    layer = call + time steps x (step + FLOPs per step / (peak x efficiency))

``call`` is the fixed cost of one cuDNN RNN call (descriptors, workspace, weight transposes),
``step`` the latency of one time step that no amount of parallel hardware removes (the
recurrence serialises the kernels), ``efficiency`` the share of the FP32 peak the per-step
matrix products reach. Dense matrix product (cuBLAS SGEMM)::

    gemm = launch + 2 M N K / (peak x efficiency) x (1 + half / min(M, N))

``half`` is the narrow side of the product (a layer's batch, a convolution's channels) at which
the product reaches half its efficiency: a narrow product leaves most of the GPU idle.

Three parameters each, shared by all GPUs, fitted by relative least squares (closed form for
the latencies, a grid for the efficiency and the half width). One GPU (``advisor.fitting.kernels.HOLD_OUT``) stays out of the fit and its
errors are reported beside the in-sample ones.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from advisor.locations import shipped
from probes.result import GATES, TRAINING_PASSES

FIT_FILE = "gpu-kernel-fit.json"


@dataclass(frozen=True)
class Kernel:
    """One measured kernel: its time and the FP32-peak time of its arithmetic on its GPU."""

    gpu: str
    kind: str
    timesteps: int
    seconds: float
    peak_seconds: float
    """FLOPs / peak FLOP/s: the time at 100% of peak (per time step for recurrent layers)."""
    narrow: int = 0
    """The narrow side of a matrix product, min(M, N) (0 for recurrent layers)."""


@dataclass(frozen=True)
class RecurrentFit:
    call_s: float
    step_s: float
    efficiency: float

    def seconds(self, kernel: Kernel) -> float:
        return self.call_s + kernel.timesteps * (
            self.step_s + kernel.peak_seconds / self.efficiency
        )


@dataclass(frozen=True)
class GemmFit:
    launch_s: float
    efficiency: float
    half_narrow: float

    def seconds(self, kernel: Kernel) -> float:
        occupancy = kernel.narrow / (kernel.narrow + self.half_narrow)
        return self.launch_s + kernel.peak_seconds / (self.efficiency * occupancy)


@dataclass(frozen=True)
class KernelFit:
    """The fitted GPU kernel paths and how well they reproduce the measurements."""

    recurrent: RecurrentFit
    gemm: GemmFit
    hold_out: str
    errors: dict[str, dict[str, float]]
    """``{recurrent|gemm} {in_sample|held_out}`` -> n, median and p90 |error| as factors."""


def recurrent_flops_per_step(kind: str, hidden: int, inputs: int, batch: int) -> float:
    """Training FLOPs of one time step of one direction: forward + two backward products."""
    return TRAINING_PASSES * 2 * GATES[kind] * (inputs + hidden) * hidden * batch


@lru_cache(maxsize=1)
def shipped_fit() -> KernelFit:
    """The committed fit (``data/gpu-kernel-fit.json``)."""
    blob = json.loads(shipped(FIT_FILE).read_text(encoding="utf-8"))
    return KernelFit(
        RecurrentFit(**blob["recurrent"]), GemmFit(**blob["gemm"]), blob["hold_out"], blob["errors"]
    )
