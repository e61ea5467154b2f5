"""Fit the GPU kernel paths (``advisor.estimate.kernels``) on DeepBench's measured kernels.

``data/gpu-kernels-deepbench.csv`` (derived by ``benchmarks/derive/deepbench_extract.py``) and
each GPU's peak from ``data/deepbench-gpus.csv``; one GPU (``HOLD_OUT``) stays out of the fit.
``python -m advisor.fitting kernels`` writes ``data/gpu-kernel-fit.json``.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path

from advisor.estimate.kernels import (
    FIT_FILE,
    GemmFit,
    Kernel,
    KernelFit,
    RecurrentFit,
    recurrent_flops_per_step,
)
from advisor.locations import shipped

KERNELS_FILE = "gpu-kernels-deepbench.csv"
PEAKS_FILE = "deepbench-gpus.csv"
HOLD_OUT = "NVIDIA V100"
"""The GPU the fit never sees: the model-level CPU<->GPU suite's GPUs are V100 class."""
__all__ = ["FIT_FILE", "derive", "fit", "rounded"]


def read_kernels(
    kernels: Path | None = None, peaks: Path | None = None
) -> tuple[list[Kernel], list[Kernel]]:
    """The measured recurrent layers and matrix products, with their peak-time."""
    with (peaks or shipped(PEAKS_FILE)).open(encoding="utf-8", newline="") as handle:
        peak = {row["gpu"]: float(row["fp32_tflops"]) * 1e12 for row in csv.DictReader(handle)}
    recurrent, gemm = [], []
    with (kernels or shipped(KERNELS_FILE)).open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            seconds = float(row["time_ms"]) / 1e3
            if row["kernel"] == "gemm":
                m, n = int(row["m"]), int(row["n"])
                flops = 2.0 * m * n * int(row["k"])
                gemm.append(
                    Kernel(row["gpu"], "gemm", 1, seconds, flops / peak[row["gpu"]], min(m, n))
                )
            else:
                hidden, batch = int(row["hidden"]), int(row["batch"])
                # DeepBench's layers take inputs as wide as the hidden state
                flops = recurrent_flops_per_step(row["kernel"], hidden, hidden, batch)
                steps = int(row["timesteps"])
                recurrent.append(
                    Kernel(row["gpu"], row["kernel"], steps, seconds, flops / peak[row["gpu"]])
                )
    return recurrent, gemm


def _latencies(
    kernels: Sequence[Kernel], efficiency: float, columns: Callable[[Kernel], tuple[float, float]]
) -> tuple[float, float]:
    """Non-negative (c0, c1) minimising sum ((c0 x0 + c1 x1 + work - t) / t)^2 (closed form)."""
    s00 = s01 = s11 = b0 = b1 = 0.0
    for k in kernels:
        x0, x1 = columns(k)
        w = 1.0 / k.seconds**2
        rest = k.seconds - k.timesteps * k.peak_seconds / efficiency
        s00, s01, s11 = s00 + w * x0 * x0, s01 + w * x0 * x1, s11 + w * x1 * x1
        b0, b1 = b0 + w * x0 * rest, b1 + w * x1 * rest
    det = s00 * s11 - s01 * s01
    if det > 0:
        c0, c1 = (b0 * s11 - b1 * s01) / det, (s00 * b1 - s01 * b0) / det
        if c0 >= 0 and c1 >= 0:
            return c0, c1
    if s11 == 0:  # one latency only
        return max(b0 / s00, 0.0), 0.0
    c1 = max(b1 / s11, 0.0)
    c0 = max((b0 - s01 * c1) / s00, 0.0) if s00 else 0.0
    return c0, c1


def _efficiencies() -> list[float]:
    return [0.05 * 10 ** (i / 100) for i in range(161)]  # 0.05 .. 2.0, 2.3% apart


def _log_loss(kernels: Sequence[Kernel], seconds: Callable[[Kernel], float]) -> float:
    return sum(math.log(seconds(k) / k.seconds) ** 2 for k in kernels)


def fit_recurrent(kernels: Sequence[Kernel]) -> RecurrentFit:
    best: tuple[float, RecurrentFit] | None = None
    for efficiency in _efficiencies():
        call, step = _latencies(kernels, efficiency, lambda k: (1.0, float(k.timesteps)))
        candidate = RecurrentFit(call, step, efficiency)
        score = _log_loss(kernels, candidate.seconds)
        if best is None or score < best[0]:
            best = (score, candidate)
    assert best is not None, "no recurrent kernels to fit"
    return best[1]


def fit_gemm(kernels: Sequence[Kernel]) -> GemmFit:
    best: tuple[float, GemmFit] | None = None
    for half in (10 ** (i / 10) for i in range(31)):  # 1 .. 1000, 26% apart
        slowed = [replace(k, peak_seconds=k.peak_seconds * (1 + half / k.narrow)) for k in kernels]
        for efficiency in _efficiencies()[::2]:
            launch, _ = _latencies(slowed, efficiency, lambda k: (1.0, 0.0))
            candidate = GemmFit(launch, efficiency, half)
            score = _log_loss(kernels, candidate.seconds)
            if best is None or score < best[0]:
                best = (score, candidate)
    assert best is not None, "no matrix products to fit"
    return best[1]


def error_summary(
    kernels: Sequence[Kernel], seconds: Callable[[Kernel], float]
) -> dict[str, float]:
    """n, median and p90 of |predicted/measured| as a factor (1.5: 50% off either way)."""
    errors = sorted(math.exp(abs(math.log(seconds(k) / k.seconds))) for k in kernels)
    if not errors:
        return {"n": 0}
    return {
        "n": len(errors),
        "median_factor": round(errors[len(errors) // 2], 3),
        "p90_factor": round(errors[int(0.9 * (len(errors) - 1))], 3),
    }


def fit(hold_out: str = HOLD_OUT) -> KernelFit:
    """Both kernel paths fitted on every GPU but ``hold_out``, with their errors."""
    recurrent, gemm = read_kernels()
    rnn = fit_recurrent([k for k in recurrent if k.gpu != hold_out])
    mm = fit_gemm([k for k in gemm if k.gpu != hold_out])
    errors = {}
    for name, kernels, model in (("recurrent", recurrent, rnn.seconds), ("gemm", gemm, mm.seconds)):
        errors[f"{name} in_sample"] = error_summary(
            [k for k in kernels if k.gpu != hold_out], model
        )
        errors[f"{name} held_out"] = error_summary([k for k in kernels if k.gpu == hold_out], model)
    return KernelFit(rnn, mm, hold_out, errors)


def rounded(fit: KernelFit) -> dict[str, object]:
    """The fit as ``data/gpu-kernel-fit.json`` holds it (three significant digits)."""
    blob = asdict(fit)
    for path in ("recurrent", "gemm"):
        blob[path] = {name: float(f"{value:.3g}") for name, value in blob[path].items()}
    return blob


def derive() -> str:
    """``data/gpu-kernel-fit.json`` as text."""
    return json.dumps(rounded(fit()), indent=2, sort_keys=True) + "\n"
