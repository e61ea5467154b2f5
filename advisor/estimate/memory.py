"""Does the training fit in an accelerator's memory at this batch size? If not, what batch would?

Footprint per replica = weights + gradients + optimizer slots (fp32) + activations kept for the
backward pass (per sample, times the per-replica batch; halved in 16 bits) + a reserve for the
framework and cuDNN/XLA workspaces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from advisor.estimate.machine import Machine
from advisor.estimate.steps import optimizer_slots
from advisor.workloads.llm_memory import Footprint
from probes.result import ProbeResult

RESERVE_FRACTION = 0.1
"""Device memory the framework keeps for itself (allocator slack, workspaces)."""
RESERVE_BYTES = 0.5 * 2**30
"""Fixed runtime reserve: CUDA context, cuDNN/XLA workspace."""
_ACTIVATION_FOOTPRINT_PER_TRAFFIC = 1 / 6
"""Resident activation bytes per byte of activation traffic: traffic counts 6 passes over each
fp32 activation; one copy is resident (the framework frees and fuses the rest). Checked against
the reference runs, which all fit: ResNet-152 at batch 128 mixed on a 16 GB V100."""


@dataclass(frozen=True)
class Fit:
    """Whether a training run fits one target's device memory."""

    fits: bool
    needed_bytes: float
    available_bytes: float
    largest_batch: int | None
    """The largest global batch that fits (None when even one sample does not)."""
    largest_sequence: int | None = None
    """An LLM's longest sequence that fits at batch 1 when even one sequence does not (None:
    not asked, or not even a short one fits)."""

    def reason(self, batch_size: int) -> str:
        need, have = self.needed_bytes / 2**30, self.available_bytes / 2**30
        text = f"needs ~{need:.1f} GiB per device at batch {batch_size}, has {have:.1f} GiB"
        if self.largest_batch:
            return f"{text}; batch {self.largest_batch} or smaller would fit"
        if self.largest_sequence:
            return f"{text}; sequences of {self.largest_sequence:,} tokens or fewer would fit"
        return f"{text}; the model does not fit even at batch 1"


def static_bytes(parameters: int, optimizer: str, half_precision: bool = False) -> float:
    """Weights, gradients and optimizer slots in fp32 (AdamW: 16 bytes a parameter), plus the
    16-bit copy of the weights that mixed precision computes with (2 more)."""
    return 4.0 * parameters * (2 + optimizer_slots(optimizer)) + (
        2.0 * parameters if half_precision else 0.0
    )


def activation_bytes_per_sample(
    probe: ProbeResult, traffic_per_sample: float, static: float
) -> float:
    """Resident activations of one sample: measured on a GPU probe when there, else modelled."""
    if probe.peak_device_bytes and probe.config.batch_size:
        measured = (probe.peak_device_bytes - static) / probe.config.batch_size
        if measured > 0:
            return measured
    return traffic_per_sample * _ACTIVATION_FOOTPRINT_PER_TRAFFIC


def check(
    probe: ProbeResult,
    machine: Machine,
    traffic_per_sample: float,
    optimizer: str,
    batch_size: int | None = None,
) -> Fit | None:
    """The fit on ``machine`` at ``batch_size`` (the probe's by default); None on a CPU: host
    memory is the instance's own concern."""
    if machine.memory_bytes is None:
        return None
    static = static_bytes(probe.parameters, optimizer, machine.kernels.half_precision)
    per_sample = activation_bytes_per_sample(probe, traffic_per_sample, static)
    if machine.kernels.half_precision:
        per_sample /= 2
    available = machine.memory_bytes * (1 - RESERVE_FRACTION) - RESERVE_BYTES
    batch = batch_size or probe.config.batch_size
    per_replica = math.ceil(batch / machine.topology.replicas)
    needed = static + per_sample * per_replica
    if needed <= available:
        return Fit(True, needed, available, batch)
    room = available - static
    largest = (
        int(room // per_sample) * machine.topology.replicas if per_sample > 0 and room > 0 else 0
    )
    return Fit(False, needed, available, largest or None)


MIN_SEQUENCE = 128
"""Shortest sequence worth naming as one that would fit."""
LLM_RESERVE_FRACTION = 0.05
"""What an LLM fine-tuning run cannot use of a large GPU beyond the runtime's fixed reserve:
PyTorch's allocator frees its cached blocks and retries before it gives up, so the tensors'
peak may come close to the card (MosaicML's llm-foundry configurations, tuned to fill 80 GB
cards, peak at 92-96% of them by ``llm_bytes``), while a run with room to spare holds the
zoo's ``RESERVE_FRACTION`` more (``reserved_bytes``)."""


def available_bytes(machine: Machine, fraction: float = RESERVE_FRACTION) -> float:
    """What one device of ``machine`` leaves a training run (0 on a CPU)."""
    if machine.memory_bytes is None:
        return 0.0
    return machine.memory_bytes * (1 - fraction) - RESERVE_BYTES


def reserved_bytes(allocated: float) -> float:
    """What the allocator and the runtime hold for ``allocated`` bytes of tensors when memory
    is not short: the zoo's reserve on top (what nvidia-smi and ``max_memory_reserved`` show,
    against ``max_memory_allocated``)."""
    return (allocated + RESERVE_BYTES) / (1 - RESERVE_FRACTION)


def llm_static_bytes(footprint: Footprint, sharding: str, gpus: int) -> float:
    """An LLM fine-tuning step's bytes per GPU before its tokens, its ``gpus`` sharding
    (``layout.SHARDINGS``): everything; a share of the master weights and the optimizer
    state (ZeRO-1) beside the 16-bit weights and the gradients; or a share of everything
    (FSDP / ZeRO-3) plus the two layers being gathered (computing, prefetched)."""
    if gpus <= 1 or sharding == "none":
        return footprint.shardable + footprint.compute_copy
    if sharding == "optimizer":
        split = (footprint.weights + footprint.optimizer) / gpus
        return split + footprint.gradients + (footprint.compute_copy or footprint.weights / gpus)
    return footprint.shardable / gpus + 2 * footprint.layer_weights


def _gradient_bytes(footprint: Footprint, sharding: str, gpus: int) -> float:
    """The gradients of ``llm_static_bytes`` on one GPU."""
    if gpus <= 1 or sharding in ("none", "optimizer"):
        return footprint.gradients
    return footprint.gradients / gpus


def llm_lines(footprint: Footprint, sharding: str, gpus: int) -> tuple[tuple[float, float], ...]:
    """A step's bytes per GPU as lines ``fixed + per_token x tokens``, its peak the highest.

    Compiled (``Footprint.compiled``), the phases: at the loss, every kept activation, the
    logits and the output projection's gradient; in the layers' backward pass, one recomputed
    layer beside the larger of the gradients, grown by the end, and the kept activations, all
    there at the start (each layer's gradients are born as its input dies). Eager, one line:
    the loss's and a recomputed layer's working sets together, which stands in for what each
    eager operation keeps beside them (docs/BENCHMARKS.md, "Peak memory per GPU")."""
    static = llm_static_bytes(footprint, sharding, gpus)
    kept = footprint.kept_per_token
    if not footprint.compiled:
        return ((static, kept + footprint.working_per_token),)
    gradients = _gradient_bytes(footprint, sharding, gpus)
    before = static - gradients
    # the output projection's gradient is whole at the loss, before FSDP scatters it
    return (
        (before + footprint.output_gradient, kept + footprint.loss_per_token),
        (static, footprint.recomputed_per_token),
        (before, kept + footprint.recomputed_per_token),
    )


def llm_bytes(
    footprint: Footprint, sharding: str, gpus: int, micro_batch: int, sequence: int
) -> float:
    """Peak bytes per GPU of an LLM fine-tuning step at ``micro_batch`` sequences a GPU."""
    tokens = micro_batch * sequence
    return max(
        fixed + per_token * tokens for fixed, per_token in llm_lines(footprint, sharding, gpus)
    )


def tokens_that_fit(footprint: Footprint, sharding: str, gpus: int, available: float) -> int:
    """The most tokens a GPU's step holds within ``available`` bytes (0: not even one)."""
    most = math.inf
    for fixed, per_token in llm_lines(footprint, sharding, gpus):
        if fixed > available:
            return 0
        if per_token > 0:
            most = min(most, (available - fixed) / per_token)
    return int(most) if math.isfinite(most) else 0


def llm_check(
    footprint: Footprint,
    machine: Machine,
    sharding: str,
    gpus: int,
    micro_batch: int,
    sequence: int,
) -> Fit | None:
    """Whether an LLM step fits one GPU of ``machine`` (None on a CPU); if not, the largest
    micro-batch that would, or at one sequence a GPU the longest sequence that would."""
    if machine.memory_bytes is None:
        return None
    available = available_bytes(machine, LLM_RESERVE_FRACTION)
    needed = llm_bytes(footprint, sharding, gpus, micro_batch, sequence)
    if needed <= available:
        return Fit(True, needed, available, micro_batch)
    tokens = tokens_that_fit(footprint, sharding, gpus, available)
    if tokens >= sequence:
        return Fit(False, needed, available, tokens // sequence)
    return Fit(False, needed, available, None, tokens if tokens >= MIN_SEQUENCE else None)
