"""Heavy workloads: measure at two smaller batch sizes, extrapolate the step time to the real one.

Two measured batches give the line ``t(b) = a + c b`` (``a`` per step, ``c`` per sample), kept
when plausible (``a`` at least zero and at most half the larger batch's step), else the larger
batch's time per sample is scaled. A transformer too large to step here is stepped as a proxy
(``advisor.workloads.transformers.probe_shape``), scaled by the FLOP ratio. The result is marked
``extrapolated``, its interval widened with the distance; the validation step is a forward pass,
a third of a training step (docs/PREDICTION.md, "Transformers (BERT, GPT-2, ViT-B/16)")."""

from __future__ import annotations

import math
import threading

from probes import stats
from probes.epochs import FORWARD_SHARE
from probes.fitting import Measurement, Progress, arrays, fit, steady_of
from probes.loading import Prepared
from probes.result import WorkloadConfig

EXTRAPOLATION_PENALTY = 0.10
"""Extra relative uncertainty per doubling of the batch beyond the largest one measured."""
PROXY_PENALTY = 0.05
"""Extra relative uncertainty per doubling of the training FLOPs per sample from a transformer's
proxy (fewer layers, shorter sequence) to the real shape: the per-sample time scales by the
FLOP ratio, which holds for the matmuls and less well for the softmax and LayerNorm traffic."""


def extrapolated_from(prepared: Prepared, batch_scaling: dict[int, float], batch: int) -> str:
    """What a probe stepped, when it is not the real model at the real batch ('' when it is)."""
    batches = sorted(batch_scaling)
    parts = []
    if batches != [batch]:
        parts.append("batches " + ", ".join(str(b) for b in batches))
    if prepared.proxy:
        parts.append(
            f"of a proxy: {prepared.proxy}; FLOPs x{prepared.scale:.3g}, "
            f"parameters x{prepared.parameter_scale:.3g}"
        )
    return " ".join(parts)


MAX_FIXED_SHARE = 0.5
"""Largest share of the larger measured batch's step a plausible per-step cost may take."""


def step_line(steps: dict[int, float]) -> tuple[float, float]:
    """(per-step cost, cost per sample) from step seconds at two or more batch sizes: the least
    squares line where it is plausible (``MAX_FIXED_SHARE``), else no per-step cost and the
    largest batch's time per sample."""
    batches = sorted(steps)
    largest = batches[-1]
    per_sample = steps[largest] / largest
    if len(batches) >= 2:
        a, c = stats.linear_fit(batches, [steps[b] for b in batches])
        if 0 <= a <= MAX_FIXED_SHARE * steps[largest] and c > 0:
            return a, c
    return 0.0, per_sample


def extrapolate(
    prepared: Prepared,
    config: WorkloadConfig,
    started: float,
    budget: float,
    report: Progress,
    cancel: threading.Event | None,
    batches: list[int],
) -> Measurement:
    """The step time at ``config.batch_size`` from steady fits at ``batches``, each given its
    share of the budget."""
    measured: dict[int, stats.SteadyStats] = {}
    startup = 0.0
    for index, batch in enumerate(batches):
        share = (index + 1) / len(batches)
        x, y = arrays(prepared, config.samples, batch, seed=index)
        timer = fit(prepared.model, x, y, batch, started, started + budget * share, report, cancel)
        steady, start = steady_of(timer)
        measured[batch] = steady
        if index == 0:
            startup = sum(timer.stamps.durations()[:start]) - start * steady.mean
    a, c = step_line({batch: s.mean for batch, s in measured.items()})
    # a proxy's fixed cost (the optimizer's pass over the weights) grows with the parameters,
    # its cost per sample with the training FLOPs
    step = a * prepared.parameter_scale + c * prepared.scale * config.batch_size
    relative = max(
        (s.relative_half_width for s in measured.values() if math.isfinite(s.half_width)),
        default=0.2,
    )
    doublings = max(0.0, math.log2(config.batch_size / max(measured)))
    uncertainty = (
        relative
        + EXTRAPOLATION_PENALTY * doublings
        + PROXY_PENALTY * math.log2(max(prepared.scale, prepared.parameter_scale, 1.0))
    )
    val_step = step * FORWARD_SHARE
    predicted = config.epochs * (config.steps_per_epoch * step + config.validation_steps * val_step)
    return Measurement(
        step_seconds=step,
        step_interval=(step / (1 + uncertainty), step * (1 + uncertainty)),
        validation_step_seconds=val_step,
        epoch_overhead_seconds=0.0,
        startup_seconds=max(0.0, startup),
        predicted_seconds=predicted,
        predicted_interval=(predicted / (1 + uncertainty), predicted * (1 + uncertainty)),
        batch_scaling={b: s.mean for b, s in measured.items()},
        extrapolated=True,
    )
