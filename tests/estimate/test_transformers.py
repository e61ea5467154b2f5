"""Transformers in the estimate: memory fit (weights, gradients, AdamW, activations), precision
paths rated at each device's datasheet peak."""

from __future__ import annotations

import pytest

from advisor.estimate import Target, catalog, memory, predict
from advisor.estimate.machine import accelerator_machine, cpu_machine
from advisor.estimate.parameters import shipped_calibration
from advisor.estimate.steps import facts_of
from advisor.workloads import zoo
from tests.estimate.test_probes import probe


def _fit(workload: str, device: str, precision: str, count: int = 1) -> memory.Fit:
    machine = accelerator_machine(device, count, shipped_calibration(), precision=precision)
    assert machine is not None
    facts = facts_of(zoo.get(workload))
    fit = memory.check(probe(workload, 1.0), machine, facts.activation_bytes_per_sample, "adamw")
    assert fit is not None
    return fit


def test_static_memory_counts_weights_gradients_and_two_adamw_slots() -> None:
    assert memory.static_bytes(1_000, "adamw") == 16_000
    assert memory.static_bytes(1_000, "adamw", half_precision=True) == 18_000  # + 16-bit copy


def test_gpt2_large_activations_dominate_and_follow_the_count() -> None:
    """Korthikanti: 36 layers x 1024 x 1280 x (34 + 5 x 20 x 1024 / 1280) bytes in 16 bits, plus
    fp32 logits; resident fp32 activations are twice that."""
    shape = zoo.get("gpt2_large").transformer
    assert shape is not None
    per_sample_16 = 36 * 1024 * 1280 * (34 + 5 * 20 * 1024 / 1280) + 4 * 1024 * 50_257
    fit = _fit("gpt2_large", "H100", "fp32")
    static = memory.static_bytes(774_030_080, "adamw")
    assert fit.needed_bytes == pytest.approx(static + 12 * 2 * per_sample_16)


def test_gpt2_large_names_the_largest_batch_that_fits_each_gpu() -> None:
    t4 = _fit("gpt2_large", "T4", "fp32")
    assert not t4.fits and t4.largest_batch is None  # 12.4 GB of weights and AdamW state + 1 sample
    h100 = _fit("gpt2_large", "H100", "fp32")
    assert not h100.fits and h100.largest_batch is not None and 1 <= h100.largest_batch < 12
    assert f"batch {h100.largest_batch} or smaller would fit" in h100.reason(12)
    # mixed precision halves the activations: a larger batch fits the same GPU
    bf16 = _fit("gpt2_large", "H100", "bf16")
    assert bf16.largest_batch is not None and bf16.largest_batch > h100.largest_batch
    assert _fit("gpt2_large", "H200", "bf16").fits
    assert _fit("gpt2_large", "A100-80GB", "fp32", count=8).fits  # 2 sequences per GPU


def test_bert_base_fits_a_16_gb_gpu_only_in_mixed_precision_at_batch_32() -> None:
    assert not _fit("bert_base", "T4", "fp32").fits
    assert _fit("bert_base", "T4", "fp16").fits


def test_bert_base_largest_batch_on_12_gb_agrees_with_googles_table() -> None:
    """google-research/bert README, "Out-of-memory issues": BERT-Base at sequence 384 trains at
    batch 12 at most on a 12 GB GPU (TensorFlow 1.11, fp32, Adam). The count allows some more
    (TensorFlow 1 kept more than the backward pass needs) but not twice more."""
    k80 = _fit("bert_base", "K80", "fp32")  # one 12 GB K80 die
    assert k80.largest_batch is not None and 12 <= k80.largest_batch < 24


def test_each_precision_uses_its_datasheet_peak() -> None:
    calibration = shipped_calibration()
    a100 = catalog.accelerator("A100")
    assert a100 is not None

    def compute(device: str, precision: str) -> float:
        machine = accelerator_machine(device, 1, calibration, precision=precision)
        assert machine is not None
        return machine.rates.conv_flops

    # its measured GEMMs and its generation's convolutions
    tensor = (
        calibration.tensor_efficiency
        * catalog.tensor_speed(a100)
        * calibration.conv_speed(a100.architecture)
    )
    assert compute("A100", "bf16") == pytest.approx(a100.bf16_tflops * 1e12 * tensor)
    assert compute("A100", "tf32") == pytest.approx(a100.tf32_tflops * 1e12 * tensor)
    assert compute("A100", "fp16") == pytest.approx(a100.fp16_tflops * 1e12 * tensor)
    # V100 and T4 have fp16 tensor cores but no bf16 units: bf16 runs as fp32 there, and says so
    v100_bf16 = accelerator_machine("V100", 1, calibration, precision="bf16")
    assert v100_bf16 is not None and not v100_bf16.kernels.half_precision
    assert "no fast bf16 on V100" in v100_bf16.kernels.path
    assert compute("V100", "fp16") > 3 * compute("V100", "bf16")
    # TF32 exists from Ampere on only
    assert (
        "tf32 does not run faster"
        in accelerator_machine("T4", 1, calibration, precision="tf32").kernels.path  # type: ignore[union-attr]
    )
    # a TPU's MXU multiplies bf16 whatever is asked; float32 activations stay 32-bit in memory
    tpu = accelerator_machine("tpu-v5p-8", 1, calibration, precision="bf16")
    assert tpu is not None and tpu.kernels.half_precision and "bf16 MXU" in tpu.kernels.path
    tpu32 = accelerator_machine("tpu-v5p-8", 1, calibration, precision="fp32")
    assert (
        tpu32 is not None and not tpu32.kernels.half_precision and "bf16 MXU" in tpu32.kernels.path
    )
    assert tpu32.rates.matmul_flops == tpu.rates.matmul_flops
    # a CPU runs fp32 kernels and says so
    assert (
        "fp32 kernels assumed"
        in cpu_machine("skylake", 8, calibration, precision="bf16").kernels.path
    )


def test_bf16_on_an_h100_predicts_a_shorter_gpt2_run_than_fp32() -> None:
    p = probe("gpt2_small", 65.0)  # 12 x 0.82 TFLOPs at ~150 GFLOP/s, two cores
    fp32 = predict(p, Target("H100", 8), precision="fp32")
    bf16 = predict(p, Target("H100", 8), precision="bf16")
    assert bf16.seconds < fp32.seconds
    assert "mixed bf16 on tensor cores" in bf16.kernel_path


def test_a_gpu_left_out_for_memory_is_named_with_the_batch_that_would_fit() -> None:
    result = predict(probe("gpt2_large", 250.0), Target("H100", 1), global_batch=12)
    assert not result.fits and result.reason is not None
    assert result.reason.startswith("H100: needs ~") and "or smaller would fit" in result.reason
    assert predict(probe("gpt2_large", 250.0), Target("H200", 1), precision="bf16").fits
