"""A transformer's step between GPUs: its GEMMs at the same share of every unit's peak, its
batch as wide as batch x tokens, checked against lambdal/deeplearning-benchmark's BERT rows."""

from __future__ import annotations

import pytest

from advisor.estimate import catalog
from advisor.estimate.machine import Machine, accelerator_machine
from advisor.estimate.parameters import shipped_calibration
from advisor.estimate.steps import facts_of, step_parts
from advisor.fitting.published import read_reference
from advisor.locations import shipped
from advisor.workloads import zoo

FIT_FILE = "calibration-lambda-pytorch.csv"


def _machine(device: str, precision: str) -> Machine:
    machine = accelerator_machine(device, 1, shipped_calibration(), precision=precision)
    assert machine is not None
    return machine


def _seconds_per_sample(workload: str, device: str, precision: str, batch: int) -> float:
    facts = facts_of(zoo.get(workload))
    return (
        step_parts(facts, _machine(device, precision), batch, shipped_calibration()).total / batch
    )


def _measured(workload: str, device: str, precision: str) -> tuple[int, float]:
    """Batch and samples/s of Lambda's v1 campaign (the fitted file) for one run."""
    for row in read_reference(shipped(FIT_FILE)):
        if (row.source, row.workload, row.device, row.precision) == (
            "lambda-dlbench-pytorch-v1",
            workload,
            device,
            precision,
        ):
            return row.batch_size, row.value
    raise AssertionError(f"no Lambda v1 row for {workload} on {device} {precision}")


def test_transformer_gemms_run_at_the_same_share_of_every_units_peak() -> None:
    calibration = shipped_calibration()
    cases = {
        ("V100", "fp32"): "fp32_tflops",  # no TF32 before Ampere: CUDA cores
        ("A100-80GB", "fp32"): "tf32_tflops",  # TensorFlow 2 / NGC PyTorch: fp32 as TF32
        ("V100", "fp16"): "fp16_tflops",
        ("RTX3090", "fp16"): "fp16_tflops",  # GeForce: the FP32-accumulate (half-rate) figure
    }
    for (device, precision), column in cases.items():
        spec = catalog.accelerator(device)
        assert spec is not None
        machine = _machine(device, precision)
        peak = getattr(spec, column) * 1e12
        speed = 1.0 if column == "fp32_tflops" else catalog.tensor_speed(spec)  # measured GEMMs
        assert machine.rates.matmul_flops == pytest.approx(
            peak * speed * calibration.gemm_efficiency
        )
    # convnets keep the convolution-fitted tensor-core share
    assert _machine("V100", "fp16").rates.conv_flops == pytest.approx(
        125e12 * calibration.tensor_efficiency
    )
    rtx3090 = catalog.accelerator("RTX3090")
    assert rtx3090 is not None and rtx3090.fp16_tflops == pytest.approx(71.0)


@pytest.mark.parametrize(("device", "tolerance"), [("V100", 0.15), ("RTX8000", 0.15)])
def test_tensor_cores_speed_bert_large_up_as_measured_before_ampere(
    device: str, tolerance: float
) -> None:
    """Pre-Ampere fp32 runs on CUDA cores and mixed precision on tensor cores: Lambda measured
    BERT-large 4.75x (V100) and 4.2x (RTX 8000) faster in fp16. With the convnet-fitted tensor
    share the model said 3.2x and 2.7x."""
    batch32, fp32 = _measured("bert_large", device, "fp32")
    batch16, fp16 = _measured("bert_large", device, "fp16")
    modelled = _seconds_per_sample("bert_large", device, "fp32", batch32) / _seconds_per_sample(
        "bert_large", device, "fp16", batch16
    )
    assert modelled == pytest.approx(fp16 / fp32, rel=tolerance)


def _compute_per_sample(workload: str, device: str, batch: int) -> float:
    facts = facts_of(zoo.get(workload))
    return step_parts(facts, _machine(device, "fp32"), batch, shipped_calibration()).compute / batch


def test_a_transformer_batch_is_as_wide_as_its_tokens() -> None:
    """NVIDIA's TensorFlow 2 BERT-large ran batch 3 on a 16 GB V100: 3 x 384 rows per GEMM keep
    the GPU's arithmetic busy; a batch of 3 images of a convnet does not."""
    bert = _compute_per_sample("bert_large", "V100", 3) / _compute_per_sample(
        "bert_large", "V100", 64
    )
    assert bert < 1.1
    resnet = _compute_per_sample("resnet50", "V100", 3) / _compute_per_sample(
        "resnet50", "V100", 64
    )
    assert resnet > 1.3


@pytest.mark.parametrize("workload", ["bert_base", "bert_large"])
def test_geforce_mixed_precision_runs_at_the_fp32_accumulate_rate(workload: str) -> None:
    """An RTX 3090's fp16 tensor rate with FP32 accumulate (what mixed-precision training asks
    for) is half its FP16-accumulate one: 71 against 142 TFLOPS (GA102 whitepaper), twice its TF32
    35.6, as on an A100. Lambda measured its fp16 BERT 2.02x (base) and 2.17x (large) faster than
    fp32; at the full rate the model would say 2.7x."""
    batch32, fp32 = _measured(workload, "RTX3090", "fp32")
    batch16, fp16 = _measured(workload, "RTX3090", "fp16")
    modelled = _seconds_per_sample(workload, "RTX3090", "fp32", batch32) / _seconds_per_sample(
        workload, "RTX3090", "fp16", batch16
    )
    assert modelled == pytest.approx(fp16 / fp32, rel=0.15)


def test_eager_attention_keeps_its_scores_32_bit_under_autocast() -> None:
    """nanoGPT's hand-written attention under bf16 autocast runs its softmax in float32 over
    the materialised scores: those bytes do not halve, the rest of the activations do. In
    float32 nothing changes; a fused kernel (FlashAttention) halves everything."""
    from advisor.estimate.frameworks import Framework
    from advisor.estimate.machine import Stack

    facts = facts_of(zoo.get("gpt2_small"))
    assert 0 < facts.score_bytes_per_sample < facts.activation_bytes_per_sample
    torch = Framework("torch", (2, 3))
    calibration = shipped_calibration()

    def memory(precision: str, eager: bool, workload: str = "gpt2_small") -> float:
        stack = Stack(framework=torch, eager_attention=eager)
        machine = accelerator_machine("A100-80GB", 1, calibration, stack=stack, precision=precision)
        assert machine is not None
        return step_parts(facts_of(zoo.get(workload)), machine, 16, calibration).memory

    assert memory("fp32", True) == pytest.approx(memory("fp32", False))
    assert memory("bf16", True) > memory("bf16", False)
    assert memory("bf16", True, "resnet50") == pytest.approx(memory("bf16", False, "resnet50"))


def test_a_published_row_says_when_it_wrote_its_attention_out() -> None:
    rows = read_reference(shipped("calibration-holdout-strict-fp32.csv"))
    assert rows and all(row.eager_attention and row.stack.eager_attention for row in rows)
    assert not any(row.eager_attention for row in read_reference(shipped(FIT_FILE)))
