"""Realistic ProbeResult values for the estimation tests (the probes are built elsewhere)."""

from __future__ import annotations

from advisor.workloads import zoo
from probes.result import Fingerprint, ProbeResult, WorkloadConfig

LOCAL_CPU = Fingerprint(
    cpu_model="Intel(R) Xeon(R) Platinum 8173M CPU @ 2.00GHz",
    logical_cpus=2,
    threads=2,
    accelerator=None,
    accelerator_memory_gib=None,
    tensorflow="2.21.0",
    onednn=True,
    xla=False,
    precision="fp32",
)


def probe(
    workload: str,
    step_seconds: float,
    *,
    device: Fingerprint = LOCAL_CPU,
    batch_size: int | None = None,
    op_split: dict[str, float] | None = None,
    batch_scaling: dict[int, float] | None = None,
    peak_device_bytes: int | None = None,
    created_at: str = "2026-11-21T04:00:00Z",
) -> ProbeResult:
    """A probe of a zoo workload whose full-training figure follows from its step time."""
    w = zoo.get(workload)
    config = WorkloadConfig(
        w.id, w.samples, w.validation_samples, w.epochs, batch_size or w.batch_size
    )
    validation_step = step_seconds / 3
    total = w.epochs * (
        config.steps_per_epoch * step_seconds + config.validation_steps * validation_step + 0.5
    )
    return ProbeResult(
        config=config,
        device=device,
        step_seconds=step_seconds,
        step_interval=(step_seconds * 0.98, step_seconds * 1.02),
        validation_step_seconds=validation_step,
        epoch_overhead_seconds=0.5,
        startup_seconds=4.0,
        predicted_seconds=total,
        predicted_interval=(total * 0.95, total * 1.05),
        samples_per_second=config.batch_size / step_seconds,
        probe_seconds=30.0,
        flops_per_sample=w.train_flops_per_sample,
        parameters=w.parameters,
        peak_host_bytes=2 * 2**30,
        peak_device_bytes=peak_device_bytes,
        op_split=op_split or {},
        batch_scaling=batch_scaling or {},
        created_at=created_at,
    )


def test_the_helper_builds_a_consistent_probe() -> None:
    p = probe("mnist_mlp", 0.01)
    assert p.config.steps_per_epoch == 469
    assert p.predicted_interval[0] < p.predicted_seconds < p.predicted_interval[1]
