"""What the hardware allows: the least time a training step can take on a machine.

No prediction may be faster than this, whatever a probe or a fit says:

    least step = max(FLOPs / datasheet peak of their unit, optimizer traffic / peak bandwidth)

Convolutions are allowed what Winograd saves on their 3x3 layers on any unit (2.25x fewer
multiplications, Lavin and Gray 2016), the largest saving cuDNN's algorithms make on the zoo's
layers, so a fast convolution kernel is never called impossible. The memory side counts only
what the optimizer must move: every weight, gradient and optimizer slot read and written once
(activations can stay on chip in a fused kernel, so they are left out of the bound), and the
4-bit weights a quantised model expands before each pass. Fused attention is held to the peak
of the unit it runs on (16-bit where the products run in FP8).
"""

from __future__ import annotations

from advisor.estimate.machine import Machine
from advisor.estimate.steps import WorkloadFacts, optimizer_slots, work_flops


def least_step_seconds(facts: WorkloadFacts, machine: Machine, batch_size: int) -> float:
    """The least seconds one training step of ``batch_size`` (the global batch) can take on
    ``machine`` at its datasheet peaks (per replica: each computes its share of the batch)."""
    per_replica = batch_size / machine.topology.replicas
    conv, matmul = work_flops(facts, per_replica, winograd=True)
    attention = facts.attention_flops_per_sample * per_replica
    compute = (
        conv / machine.peaks.conv_flops
        + (matmul + facts.recurrent_flops * per_replica) / machine.peaks.matmul_flops
        + attention / (machine.peaks.attention_flops or machine.peaks.matmul_flops)
    )
    traffic = 4.0 * facts.parameters * (3 + 2 * optimizer_slots(facts.optimizer))
    traffic += facts.dequant_bytes * facts.accumulation
    return max(compute, traffic / machine.peaks.bandwidth)


def achieved_flops(facts: WorkloadFacts, batch_size: int, step_seconds: float) -> float:
    """FLOP/s a step of ``step_seconds`` runs at, counting the workload's nominal FLOPs."""
    return facts.flops_per_sample * batch_size / step_seconds if step_seconds > 0 else 0.0
