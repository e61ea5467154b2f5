"""Kernel paths that change the work itself: Winograd 3x3 convolutions on a GPU's CUDA cores."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.estimate import Target, predict
from advisor.estimate.machine import accelerator_machine, cpu_machine
from advisor.estimate.parameters import shipped_calibration
from advisor.estimate.steps import WINOGRAD_REDUCTION, facts_of, step_parts
from advisor.workloads import zoo
from tests.estimate.test_probes import probe


def test_winograd_runs_on_cuda_cores_only() -> None:
    calibration = shipped_calibration()
    v100 = accelerator_machine("V100", 1, calibration)
    v100_mixed = accelerator_machine("V100", 1, calibration, precision="mixed")
    a100 = accelerator_machine("A100", 1, calibration)  # fp32 runs as TF32 on tensor cores
    assert v100 is not None and v100_mixed is not None and a100 is not None
    assert v100.winograd and "Winograd" in v100.kernels.path
    assert not v100_mixed.winograd and not a100.winograd
    assert not cpu_machine("skylake", 8, calibration).winograd


def test_winograd_cuts_the_compute_of_3x3_convolutions_only() -> None:
    calibration = shipped_calibration()
    v100 = accelerator_machine("V100", 1, calibration)
    assert v100 is not None
    direct = replace(v100, rates=replace(v100.rates, winograd_flops=0.0))
    vgg = facts_of(zoo.get("vgg16"))  # all 3x3 convolutions
    fast, slow = step_parts(vgg, v100, 64, calibration), step_parts(vgg, direct, 64, calibration)
    assert 1 < slow.compute / fast.compute <= WINOGRAD_REDUCTION
    assert fast.memory == slow.memory and fast.overhead == slow.overhead
    mlp = facts_of(zoo.get("mnist_mlp"))  # no convolution at all
    assert step_parts(mlp, v100, 128, calibration) == step_parts(mlp, direct, 128, calibration)


def test_a_winograd_heavy_net_gains_less_from_tensor_cores_than_a_light_one() -> None:
    """FloydHub 2017, V100 mixed over fp32: VGG-16 1.8x, Inception v3 2.0x (benchmarks.csv)."""
    gains = {}
    for workload in ("vgg16", "inception3"):
        p = probe(workload, 10.0)
        fp32 = predict(p, Target("V100", 1)).seconds
        gains[workload] = fp32 / predict(p, Target("V100", 1), precision="mixed").seconds
    assert gains["vgg16"] < gains["inception3"]


def test_identity_still_holds_on_a_winograd_gpu() -> None:
    from tests.estimate.test_predict import T4_HOST

    p = probe("vgg16", 0.5, device=replace(T4_HOST, accelerator="V100"))
    result = predict(p, Target("V100", 1))
    assert result.measured and result.seconds == pytest.approx(p.predicted_seconds)


@given(
    bandwidth=st.floats(min_value=1e9, max_value=1e13),
    factor=st.floats(min_value=1.0, max_value=100.0),
)
def test_more_bandwidth_is_never_slower_on_a_winograd_path(bandwidth: float, factor: float) -> None:
    calibration = shipped_calibration()
    v100 = accelerator_machine("V100", 1, calibration)
    assert v100 is not None and v100.winograd
    facts = facts_of(zoo.get("resnet50"))
    slow = step_parts(
        facts, replace(v100, rates=replace(v100.rates, bandwidth=bandwidth)), 64, calibration
    )
    fast = step_parts(
        facts,
        replace(v100, rates=replace(v100.rates, bandwidth=bandwidth * factor)),
        64,
        calibration,
    )
    assert fast.memory <= slow.memory and fast.total <= slow.total


def test_a_batch_that_does_not_fit_is_still_excluded_on_a_winograd_gpu() -> None:
    p = probe("vgg16", 30.0, batch_size=512)
    # 16 GB; Winograd changes time, not memory: a fixed global batch of 512 does not fit
    result = predict(p, Target("V100", 1), global_batch=512)
    assert not result.fits and result.reason is not None
    assert "Winograd" in result.kernel_path
