"""Heavy workloads: measure at two smaller batch sizes, extrapolate the step time to the real one.

One step of an ImageNet CNN at its batch size can take longer than the whole budget on a few CPU
cores. Step time is close to linear in the batch size once a batch fills the cores
(``t(b) = a + c b``: ``a`` the per-step cost, ``c`` the cost per sample), so two measured batch
sizes give the line and the line gives the real batch. Two nearby batches pin the slope poorly
on a noisy machine (a 10% error in one step time moved the slope 30% and ResNet-50's predicted
step at batch 64 by 1.5x), while real steps of Keras's ResNet-50 here cost the same per sample
from batch 2 to 32 within 10% (``benchmarks/heavy_batches.py``). So the line is kept only when
it is plausible: a per-step cost of at most half the larger batch's step, none below zero;
otherwise the larger batch's time per sample is scaled to the real batch. The result is marked ``extrapolated``
and its interval widens with the distance of the extrapolation. A transformer too large to step
at all here (GPT-2 large: 5 TFLOPs a sample) is stepped as a proxy of the same width with fewer
layers and a shorter sequence (``advisor.workloads.transformers.probe_shape``), and the time per sample is
scaled by the FLOP ratio of the real shape to the proxy. These workloads use synthetic
data (like the benchmarks they reproduce): no validation pass was timed there, so the validation
step is modelled as a forward pass, a third of a training step.
"""

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
