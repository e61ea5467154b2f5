"""What a probe measured about itself, used before anything is modelled.

Measurements beat predictions: a probe taken on the target itself is returned as it is
(``is_same_device``, ``measured_on``). Otherwise the probe's own op split gives the shares of
its step, a line through its batch scaling gives the per-step overhead, and its thread scaling
gives the workload's own CPU contention.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache

from advisor.errors import UsageError
from advisor.estimate import catalog
from advisor.estimate.machine import Machine
from advisor.estimate.parameters import Calibration
from advisor.estimate.prediction import Target
from advisor.estimate.steps import (
    PART_NAMES,
    Parts,
    WorkloadFacts,
    activation_bytes_of,
    activation_bytes_of_flops,
    facts_of,
    step_parts,
)
from advisor.workloads import zoo
from probes.result import Architecture, Fingerprint, ProbeResult

# Probe op classes -> the step part that scales like them.
_OP_PARTS = {
    "matmul_conv": "compute",
    "elementwise": "memory",
    "embedding": "memory",
    "recurrent": "sequential",
    "input_pipeline": "input_pipeline",
    "overhead": "overhead",
}


def measured_on(probes: Iterable[ProbeResult], target: Target) -> ProbeResult | None:
    """The newest probe measured on ``target`` itself (e.g. imported), if any."""
    matching = [probe for probe in probes if is_same_device(probe.device, target)]
    return max(matching, key=lambda probe: probe.created_at) if matching else None


def is_same_device(device: Fingerprint, target: Target) -> bool:
    """True when a probe on ``device`` measured exactly what ``target`` rents: its accelerator,
    as many of them over as many nodes (a data-parallel probe, ``probes.distributed``), or its
    vCPUs of its CPU family."""
    if target.accelerator or device.accelerator:
        devices = max(target.accelerator_count, 1) * target.nodes
        together = device.devices == devices and device.nodes == target.nodes
        return device.accelerator == target.accelerator and together
    if device.nodes > 1 or device.devices > 1:
        return False  # a CPU offering is one machine, its cores one device
    if target.vcpus is None or float(target.vcpus) != float(device.logical_cpus):
        return False
    # a model string that names its family, or the family itself (a bench on a rented machine)
    family = catalog.resolve_family(device.cpu_model)
    return target.cpu_family is None or (family is not None and family == target.cpu_family)


def facts_for(probe: ProbeResult) -> WorkloadFacts:
    """Zoo facts for a zoo workload; for a user's model, what its probe measured and, when the
    probe read the model's layers (``probe.architecture``), what they say."""
    try:
        return facts_of(zoo.get(probe.config.workload))
    except UsageError:
        pass
    split = probe.op_split
    family = "conv" if split.get("matmul_conv", 0) >= 0.3 else "dense"
    if split.get("recurrent", 0) >= 0.3:
        family = "recurrent"
    elif split.get("embedding", 0) >= 0.3:
        family = "embedding"
    counted = probe.architecture
    flops = probe.flops_per_sample or (counted.train_flops_per_sample if counted else 0.0)
    facts = WorkloadFacts(
        flops_per_sample=flops,
        parameters=probe.parameters,
        family=family,
        activation_bytes_per_sample=activation_bytes_of_flops(flops),
        conv_share=1.0 if family == "conv" else 0.0,  # the op split tells no more
        input_seconds_per_sample=probe.input_wait_seconds / probe.config.batch_size,
    )
    return facts if counted is None else with_architecture(facts, counted)


RECURRENT_FAMILY_SHARE = 0.3
"""Share of a model's FLOPs in recurrent layers from which its family is ``recurrent`` (the
same bar as the op split's)."""


def with_architecture(facts: WorkloadFacts, counted: Architecture) -> WorkloadFacts:
    """``facts`` completed with what a model's layers say (``probes.architecture``).

    Keras runs each recurrent layer, and each direction of a bidirectional one, as its own call
    whose time steps follow one another, and a layer waits for the one below it. So the model's
    serial time steps are the sum over layers of steps x directions (as one direction:
    ``directions`` 1), its recurrent calls one per layer and direction, and the arithmetic of
    one serial step the recurrent training FLOPs over the serial steps. A ``TimeDistributed``
    LSTM runs its sequences side by side: its steps count once, its FLOPs for all of them."""
    layers = [layer for layer in counted.recurrent if layer.timesteps > 0]
    activations = counted.activation_elements
    facts = replace(
        facts,
        winograd_share=counted.winograd_share,
        conv_share=counted.conv_share or facts.conv_share,
        conv_channels=counted.conv_channels,
        input_bytes_per_sample=counted.input_bytes or facts.input_bytes_per_sample,
        tokens=round(counted.matmul_rows) if counted.matmul_rows >= 2 else facts.tokens,
        activation_bytes_per_sample=(
            activation_bytes_of(activations) if activations else facts.activation_bytes_per_sample
        ),
    )
    if not layers:
        return facts
    serial = sum(layer.timesteps * layer.directions for layer in layers)
    recurrent_flops = sum(layer.train_flops for layer in layers)
    recurrent_share = recurrent_flops / facts.flops_per_sample if facts.flops_per_sample else 1.0
    return replace(
        facts,
        family="recurrent" if recurrent_share >= RECURRENT_FAMILY_SHARE else facts.family,
        timesteps=serial,
        directions=1,
        recurrent_layers=sum(layer.directions for layer in layers),
        recurrent_flops_per_step=recurrent_flops / serial,
        cudnn_rnn=counted.cudnn_rnn,
    )


MIN_LATENCY_SHARE = 0.1
"""Least share of a CPU's recurrent time taken as per-step latency when the modelled arithmetic
alone would explain all of it (the source CPU is faster than modelled: its absolute rate is
known to 2x only). The zoo's LSTMs spend 40-83% of it there on 8 vCPUs at their batch sizes."""


def with_inferred_recurrence(
    probe: ProbeResult, facts: WorkloadFacts, source: Machine, calibration: Calibration
) -> WorkloadFacts:
    """``facts`` with ``timesteps`` inferred from the probe's recurrent time on ``source``.

    The recurrent layers get the model's FLOPs in proportion to the probe's ``recurrent`` share
    of its compute-bearing ops (``recurrent`` and ``matmul_conv``), run at the source's rate; what
    that arithmetic leaves of the recurrent time (at least ``MIN_LATENCY_SHARE`` of it) is time
    steps at the source's step latency. ``facts`` that already count time steps
    (``with_architecture``), or a probe without recurrent time or FLOPs, come back unchanged
    (docs/PREDICTION.md, "GPU kernel paths fitted on measured kernels").
    """
    split = probe.op_split
    share, total = split.get("recurrent", 0.0), sum(split.values())
    if facts.timesteps or share <= 0 or total <= 0 or facts.flops_per_sample <= 0:
        return facts
    recurrent_flops = facts.flops_per_sample * share / (share + split.get("matmul_conv", 0.0))
    recurrent_seconds = probe.step_seconds * share / total
    one_step = replace(
        facts,
        timesteps=1,
        directions=1,
        recurrent_layers=0,
        recurrent_flops_per_step=recurrent_flops,
    )
    batch = probe.config.batch_size
    arithmetic = (
        step_parts(one_step, source, batch, calibration).sequential - source.latencies.cell_step_s
    )
    latency = max(recurrent_seconds - arithmetic, MIN_LATENCY_SHARE * recurrent_seconds)
    steps = max(1, round(latency / source.latencies.cell_step_s))
    return replace(
        facts,
        timesteps=steps,
        directions=1,
        recurrent_layers=1,
        recurrent_flops_per_step=recurrent_flops / steps,
    )


def with_measured_thread_scaling(calibration: Calibration, probe: ProbeResult) -> Calibration:
    """The calibration with USL contention fitted to the probe's own thread scaling, if measured.

    Coherency (``usl_beta``) stays calibrated: a 2-8 thread probe cannot see the decline that
    sets in at 32-64 vCPUs.
    """
    points = tuple(sorted((n, t) for n, t in probe.thread_scaling.items() if n >= 1 and t > 0))
    if len(points) < 2:
        return calibration
    return replace(
        calibration,
        usl_alpha=_fit_alpha(points, calibration.usl_beta),
        modern_usl_alpha=_fit_alpha(points, 0.0),
    )


@lru_cache(maxsize=256)
def _fit_alpha(points: tuple[tuple[int, float], ...], beta: float) -> float:
    """Contention alpha in [0, 1] (steps of 0.005) that makes step x speedup most constant."""
    best_alpha, best_error = 0.0, math.inf
    for i in range(201):
        alpha = i / 200
        logs = [math.log(t * n / (1 + alpha * (n - 1) + beta * n * (n - 1))) for n, t in points]
        mean = sum(logs) / len(logs)
        error = sum((x - mean) ** 2 for x in logs)
        if error < best_error:
            best_alpha, best_error = alpha, error
    return best_alpha


def measured_shares(probe: ProbeResult, modelled: Parts) -> dict[str, float]:
    """Shares of the source step by part: the probe's op split, else the model's split. The
    overhead share is the host's per-step dispatch the probe measured, when it has it (profiled
    op times leave dispatch out and clip the overhead to nothing); without an op split, the fixed
    cost of a step from two batch sizes."""
    shares = dict.fromkeys(PART_NAMES, 0.0)
    overhead: float | None = None
    if probe.op_split and sum(probe.op_split.values()) > 0:
        for op, share in probe.op_split.items():
            shares[_OP_PARTS.get(op, "compute")] += share
    else:
        total = modelled.total
        shares = {name: value / total for name, value in modelled.as_dict().items()}
        overhead = _overhead_share(probe)
    total = sum(shares.values())
    shares = {name: value / total for name, value in shares.items()}
    if probe.dispatch_seconds > 0:
        overhead = min(probe.dispatch_seconds / probe.step_seconds, 0.95)
    if overhead is not None:
        rest = 1 - shares["overhead"]
        scale = (1 - overhead) / rest if rest > 0 else 0.0
        shares = {name: value * scale for name, value in shares.items()}
        shares["overhead"] = overhead
    total = sum(shares.values())
    return {name: value / total for name, value in shares.items() if value > 0}


def _overhead_share(probe: ProbeResult) -> float | None:
    """Per-step overhead share from a line through step time against batch size."""
    points = sorted(probe.batch_scaling.items())
    if len(points) < 2:
        return None
    (b0, t0), (b1, t1) = points[0], points[-1]
    if b1 == b0 or t1 <= 0:
        return None
    slope = (t1 - t0) / (b1 - b0)
    intercept = t0 - slope * b0
    step = intercept + slope * probe.config.batch_size
    return min(max(intercept / step, 0.0), 0.95) if step > 0 else None


def cpu_rate(probe: ProbeResult) -> tuple[float, float] | None:
    """A CPU probe's training FLOP/s and its CPU's datasheet peak for the threads it used
    (``catalog``: the family's all-core clock x FLOPs a cycle; every node's, for a data-parallel
    probe over several), or None for an accelerator or a probe without FLOPs. A rate above the
    peak says the family or the FLOP count is wrong."""
    if probe.device.accelerator or probe.flops_per_sample <= 0 or probe.step_seconds <= 0:
        return None
    family, _ = catalog.cpu_family(catalog.family_of_cpu_model(probe.device.cpu_model)[0])
    threads = probe.device.threads or probe.device.logical_cpus
    rate = probe.flops_per_sample * probe.global_batch / probe.step_seconds
    peak = family.gflops_per_cpu(probe.device.threads_per_core) * 1e9 * threads
    return rate, peak * probe.device.nodes
