"""The device model's generic terms for LLM fine-tuning: FP8 units, fused attention, gradient
accumulation, 4-bit dequantisation and sharded data parallelism. Each is off by default, so
every other workload's step is what it was (the calibration rows are predicted unchanged)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.estimate import catalog
from advisor.estimate.frameworks import TENSORFLOW_2
from advisor.estimate.machine import accelerator_machine, gpu_unit
from advisor.estimate.parameters import PRIOR
from advisor.estimate.roofline import least_step_seconds
from advisor.estimate.steps import (
    WorkloadFacts,
    communication_seconds,
    sharded_seconds,
    step_parts,
)

LLM = WorkloadFacts(
    flops_per_sample=4096 * 48e9,
    parameters=40_000_000,
    family="transformer",
    tokens=4096,
    attention_flops_per_sample=4096 * 3e9,
)


def _machine(name: str, count: int = 1, precision: str = "bf16"):  # type: ignore[no-untyped-def]
    machine = accelerator_machine(name, count, PRIOR, precision=precision)
    assert machine is not None
    return machine


def test_fp8_runs_the_products_on_fp8_units_where_the_gpu_has_them() -> None:
    h100, a100 = catalog.accelerator("H100"), catalog.accelerator("A100")
    assert h100 is not None and a100 is not None
    assert h100.fp8_tflops == pytest.approx(1978.9) and a100.fp8_tflops == 0
    assert gpu_unit(h100, "fp8", TENSORFLOW_2, "matmul").name == "fp8"
    assert gpu_unit(h100, "fp8", TENSORFLOW_2, "conv").name == "bf16"
    assert gpu_unit(a100, "fp8", TENSORFLOW_2, "matmul").name == "bf16"
    fp8, bf16 = _machine("H100", precision="fp8"), _machine("H100")
    assert fp8.rates.matmul_flops == pytest.approx(1978.9e12 * PRIOR.fp8_gemm_efficiency)
    assert fp8.rates.attention_flops == bf16.rates.attention_flops  # FlashAttention: 16 bits
    assert fp8.kernels.half_precision and "fp8" in fp8.kernels.path
    assert "no fp8 units" in _machine("A100", precision="fp8").kernels.path


def test_attention_runs_at_its_own_rate() -> None:
    machine = _machine("H100")
    with_attention = step_parts(LLM, machine, 2, PRIOR).compute
    as_products = step_parts(replace(LLM, attention_flops_per_sample=0), machine, 2, PRIOR)
    assert PRIOR.attention_efficiency < PRIOR.gemm_efficiency
    assert with_attention > as_products.compute
    slower = 2 * 4096 * 3e9 * (1 / machine.rates.attention_flops - 1 / machine.rates.matmul_flops)
    assert with_attention - as_products.compute == pytest.approx(slower, rel=0.02)


def test_accumulation_computes_the_batch_in_passes_and_steps_the_optimizer_once() -> None:
    machine = _machine("H100")
    once = step_parts(LLM, machine, 8, PRIOR)
    accumulated = step_parts(replace(LLM, accumulation=4), machine, 8, PRIOR)
    assert accumulated.compute > once.compute  # four passes of 2 are narrower than one of 8
    assert accumulated.compute < 1.05 * once.compute  # 8192 rows fill an H100 already
    assert accumulated.memory == pytest.approx(once.memory)


def test_dequantisation_is_traffic_per_pass_whatever_the_batch() -> None:
    machine = _machine("RTX4090")
    plain = step_parts(LLM, machine, 2, PRIOR).memory
    quantised = replace(LLM, dequant_bytes=50e9)
    once = step_parts(quantised, machine, 2, PRIOR).memory - plain
    twice = step_parts(replace(quantised, accumulation=2), machine, 2, PRIOR).memory - plain
    assert once > 0 and twice > 1.9 * once  # each pass expands the weights again
    assert least_step_seconds(quantised, machine, 2) >= 50e9 / machine.peaks.bandwidth


def test_sharded_gathers_hide_behind_the_device_up_to_the_overlap() -> None:
    node = _machine("H100", 8)
    sharded = replace(LLM, sharded_bytes=140e9)
    gathers = sharded_seconds(sharded, node, PRIOR)
    expected = 7 / 8 * (2 * 140e9 + 2 * 40e6) / (900e9 * PRIOR.collective_efficiency)
    assert gathers == pytest.approx(expected, rel=0.01)
    assert communication_seconds(sharded, node, PRIOR, 10 * gathers) == 0
    exposed = communication_seconds(sharded, node, PRIOR, 0.5 * gathers)
    assert exposed == pytest.approx(gathers * (1 - 0.5 * PRIOR.collective_overlap))
    assert sharded_seconds(sharded, _machine("H100"), PRIOR) == 0  # one GPU holds it all
    # PCIe consumer cards gather ~30x slower than an NVLink node
    pcie = sharded_seconds(sharded, _machine("RTX4090", 8), PRIOR)
    assert pcie > 25 * gathers


def test_the_roofline_holds_attention_to_its_units_peak() -> None:
    machine = _machine("H100", precision="fp8")
    least = least_step_seconds(LLM, machine, 2)
    products = 2 * 4096 * 45e9 / 1978.9e12
    attention = 2 * 4096 * 3e9 / 989.4e12
    assert least == pytest.approx(products + attention, rel=1e-6)
