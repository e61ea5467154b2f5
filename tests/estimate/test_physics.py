"""No prediction beats the hardware: every zoo workload on every catalog device at every
precision stays below the datasheet peak of the fastest unit it may use (convolutions: below
what Winograd can save), and below the memory bandwidth the optimizer's pass needs."""

from __future__ import annotations

import pytest

from advisor.estimate import Target, catalog, predict
from advisor.estimate.machine import PRECISIONS
from advisor.estimate.steps import WINOGRAD_REDUCTION, facts_of, optimizer_slots
from advisor.workloads import zoo
from tests.estimate.test_probes import LOCAL_CPU, probe

_HALF = {"fp16", "bf16", "mixed", "fp8"}  # fp8 on a GPU without FP8 units runs bf16


def _peak(spec: catalog.Accelerator, precision: str) -> float:
    """The fastest FLOP/s any unit of ``spec`` offers a kernel at ``precision``: its datasheet
    peaks, or the matrix product measured on the card where that is faster (a GeForce runs
    above its rated boost clock: ``catalog.Accelerator.mamf_tflops``)."""
    if spec.kind == "tpu":
        return spec.half_tflops * 1e12
    units = [spec.fp32_tflops, spec.tf32_tflops]
    if precision in _HALF:
        units += [spec.fp16_tflops, spec.bf16_tflops, spec.half_tflops, spec.mamf_tflops]
    if precision == "fp8":
        units.append(spec.fp8_tflops)
    return max(units) * 1e12


@pytest.mark.parametrize("workload", [w.id for w in zoo.WORKLOADS])
def test_no_prediction_is_faster_than_the_datasheet_allows(workload: str) -> None:
    w = zoo.get(workload)
    facts = facts_of(w)
    # a fast probe here: whatever it measured, no device may run past its peak
    p = probe(workload, 1e-3)
    slots = optimizer_slots(facts.optimizer)
    checked = 0
    for spec in catalog.accelerators().values():
        for precision in PRECISIONS:
            result = predict(p, Target(spec.name, 1), precision=precision)
            if result.step_seconds <= 0:
                continue
            per_chip = result.batch_per_device  # the batch that fits, where the recipe's does not
            flops = facts.flops_per_sample * per_chip
            saving = 1 - facts.winograd_share + facts.winograd_share / WINOGRAD_REDUCTION
            least_flops = flops * (1 - facts.conv_share + facts.conv_share * saving)
            assert least_flops / result.step_seconds <= _peak(spec, precision) * 1.0001, (
                spec.name,
                precision,
                least_flops / result.step_seconds / 1e12,
            )
            traffic = 4.0 * facts.parameters * (3 + 2 * slots)
            assert traffic / result.step_seconds <= spec.bandwidth_gbs * 1e9 * 1.0001
            checked += 1
    assert checked >= len(catalog.accelerators()) * len(PRECISIONS)


def test_a_cpu_prediction_stays_below_the_cpus_peak() -> None:
    p = probe("resnet50", 1e-3, device=LOCAL_CPU)  # an impossible 1 ms probe of ResNet-50
    facts = facts_of(zoo.get("resnet50"))
    for family in catalog.cpu_families().values():
        for vcpus in (2, 8, 64):
            result = predict(p, Target(None, 0, vcpus, family.name))
            if result.measured:  # the probe's own CPU: a measurement is returned as it is
                continue
            rate = facts.flops_per_sample * p.config.batch_size / result.step_seconds
            peak = family.vcpu_gflops * 1e9 * vcpus
            # Winograd is allowed on a CPU too: oneDNN has it for 3x3 convolutions
            assert rate <= peak * WINOGRAD_REDUCTION, (family.name, vcpus)


def test_a_measurement_on_the_target_is_held_to_its_hardware_too() -> None:
    """An imported probe taken on a T4 that claims ResNet-50's 90 epochs in a microsecond is
    the T4's measurement, but no faster than the T4's datasheet peaks allow."""
    from dataclasses import replace

    from tests.estimate.test_predict import T4_HOST

    fast = replace(
        probe("resnet50", 1e-9, device=T4_HOST),
        predicted_seconds=1e-6,
        predicted_interval=(0.9e-6, 1.1e-6),
    )
    held = predict(fast, Target("T4", 1))
    assert held.measured and held.seconds == held.least_seconds > 3600
    assert "held there" in held.steps[-1]
    honest = replace(fast, predicted_seconds=held.least_seconds * 3)
    assert predict(honest, Target("T4", 1)).seconds == held.least_seconds * 3


def test_a_measurement_faster_than_its_hardware_corrects_no_other_device() -> None:
    from dataclasses import replace

    from advisor.estimate.residual import residuals
    from tests.estimate.test_predict import T4_HOST

    here = probe("resnet50", 5.0)
    on_t4 = replace(probe("resnet50", 0.3, device=T4_HOST), config=here.config)
    assert residuals(here, [on_t4]).get("gpu") is not None  # a plausible T4 run corrects GPUs
    impossible = replace(on_t4, predicted_seconds=1e-6, predicted_interval=(0.9e-6, 1.1e-6))
    assert residuals(here, [impossible]) == {}
