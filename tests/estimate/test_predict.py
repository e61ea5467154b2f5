"""predict(): identity, monotonicity, memory fit, kernel paths, scaling laws."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.errors import UsageError
from advisor.estimate import Target, catalog, measured_on, predict
from advisor.estimate.frameworks import Framework
from advisor.estimate.machine import (
    Stack,
    accelerator_machine,
    cpu_machine,
    usl_law,
    usl_speedup,
)
from advisor.estimate.parameters import CONV_SPEEDS, shipped_calibration
from advisor.estimate.predict import DEFAULT_RUN_LOG_SIGMA, local_log_sigma
from advisor.estimate.steps import allreduce_seconds, facts_of, sharded_seconds, step_parts
from advisor.workloads import zoo
from probes.result import ProbeResult
from tests.estimate.test_probes import LOCAL_CPU, probe

T4_HOST = replace(LOCAL_CPU, accelerator="T4", accelerator_memory_gib=15.0, logical_cpus=4)


def test_identity_on_the_probes_own_cpu_returns_the_measurement() -> None:
    p = probe("mnist_cnn", 0.2)
    for target in (Target(None, 0, 2, None), Target(None, 0, 2, "skylake")):
        result = predict(p, target)
        assert result.measured and result.seconds == p.predicted_seconds
        assert not result.extrapolated


def test_identity_on_the_probes_own_gpu_returns_the_measurement() -> None:
    p = probe("resnet50", 0.25, device=T4_HOST)
    result = predict(p, Target("T4", 1, 4))
    assert result.measured and result.seconds == p.predicted_seconds
    assert result.quantile(0.9) > result.seconds


def test_a_probes_own_gpu_returns_the_measurement_only_at_the_probes_precision() -> None:
    a100_host = replace(T4_HOST, accelerator="A100", accelerator_memory_gib=40.0)
    fp32 = probe("resnet50", 0.25, device=a100_host)
    mixed = probe("resnet50", 0.25, device=replace(a100_host, precision="mixed"))
    target = Target("A100", 1, 4)
    assert predict(fp32, target, precision="tf32").measured
    assert predict(mixed, target, precision="bf16").measured
    assert not predict(mixed, target, precision="fp32").measured
    # a probe ran TensorFlow's float32 default, TF32: strict FP32 is modelled, never measured
    for p in (fp32, mixed):
        strict = predict(p, target, precision="fp32-strict")
        assert not strict.measured and strict.seconds > p.predicted_seconds


def test_an_accelerator_outside_the_catalog_is_excluded_never_guessed() -> None:
    result = predict(probe("mnist_cnn", 0.2), Target("MI300X", 1))
    assert not result.fits and result.reason == "accelerator MI300X not in the device catalog"
    assert math.isinf(result.seconds)


def test_an_unknown_precision_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="precision"):
        predict(probe("mnist_cnn", 0.2), Target("T4", 1), precision="int4")


@given(
    bandwidth=st.floats(min_value=1e9, max_value=1e13),
    factor=st.floats(min_value=1.0, max_value=100.0),
)
def test_more_bandwidth_is_never_slower_on_the_memory_bound_part(
    bandwidth: float, factor: float
) -> None:
    calibration = shipped_calibration()
    base = accelerator_machine("A100", 1, calibration)
    assert base is not None
    facts = facts_of(zoo.get("imdb_fasttext"))
    slow = step_parts(
        facts, replace(base, rates=replace(base.rates, bandwidth=bandwidth)), 32, calibration
    )
    fast = step_parts(
        facts,
        replace(base, rates=replace(base.rates, bandwidth=bandwidth * factor)),
        32,
        calibration,
    )
    assert fast.memory <= slow.memory
    assert fast.total <= slow.total


def test_a_memory_bound_workload_is_faster_where_only_bandwidth_grew() -> None:
    # a large batch, a host that dispatches in 0.1 ms: the device's memory traffic sets the step
    p = replace(probe("imdb_fasttext", 3.0, batch_size=4096), dispatch_seconds=1e-4)
    a100_40 = predict(p, Target("A100", 1))  # same chip, 1555 GB/s
    a100_80 = predict(p, Target("A100-80GB", 1))  # same chip, 2039 GB/s
    assert a100_80.seconds < a100_40.seconds


def test_a_fixed_global_batch_that_does_not_fit_is_excluded_with_a_smaller_batch_suggested() -> (
    None
):
    p = probe("vgg16", 30.0, batch_size=512)
    result = predict(p, Target("P4", 1), global_batch=512)
    assert not result.fits
    assert result.reason is not None and "or smaller would fit" in result.reason
    assert predict(p, Target("A100-80GB", 8), global_batch=512).fits  # 64 per GPU on 80 GB


def test_a_per_device_batch_that_does_not_fit_is_predicted_at_the_largest_that_does() -> None:
    p = probe("vgg16", 30.0, batch_size=512)
    result = predict(p, Target("P4", 1))
    assert result.fits and 1 <= result.batch_per_device < 512
    assert "the largest that fits" in result.batch_note and result.steps[0] == result.batch_note
    # a smaller batch takes more steps of the same samples: never faster than the batch asked
    roomy = predict(p, Target("A100-80GB", 1))
    assert roomy.batch_per_device == 512 and not roomy.batch_note
    assert memory_fits(p, "P4", int(result.batch_per_device))
    assert not memory_fits(p, "P4", int(result.batch_per_device) + 1)


def memory_fits(p: ProbeResult, accelerator: str, batch: int) -> bool:
    return predict(p, Target(accelerator, 1), global_batch=batch).fits


def test_a_measured_device_footprint_decides_the_fit() -> None:
    measured = probe("mnist_mlp", 0.01, device=T4_HOST, peak_device_bytes=14 * 2**30)
    on_p4 = predict(measured, Target("P4", 1))  # 14 GiB measured vs 8 GiB
    assert on_p4.batch_per_device < 128 and on_p4.batch_note
    assert not predict(measured, Target("P4", 1), global_batch=128).fits
    on_a10g = predict(measured, Target("A10G", 1))
    assert on_a10g.fits and on_a10g.batch_per_device == 128


def test_gpus_beat_cpus_on_a_large_convnet_and_mixed_precision_helps_only_tensor_cores() -> None:
    p = probe("resnet50", 5.0)
    cpu = predict(p, Target(None, 0, 8, "skylake"))
    v100 = predict(p, Target("V100", 1))
    v100_mixed = predict(p, Target("V100", 1), precision="mixed")
    k80_mixed = predict(p, Target("K80", 1), precision="mixed")
    assert v100.seconds < cpu.seconds / 10
    assert v100_mixed.seconds < v100.seconds
    assert "tensor cores" in v100_mixed.kernel_path
    assert k80_mixed.seconds == pytest.approx(predict(p, Target("K80", 1)).seconds)
    assert "no fast fp16" in k80_mixed.kernel_path


def test_an_overhead_bound_model_barely_gains_on_a_faster_gpu() -> None:
    p = probe("mnist_mlp", 0.006)
    t4, h100 = predict(p, Target("T4", 1)), predict(p, Target("H100", 1))
    assert h100.seconds > t4.seconds / 2  # H100's peak is 8x a T4's


def test_recurrent_work_runs_cudnn_on_a_modern_gpu_flagged_only_off_the_calibrated_gpus() -> None:
    """cuDNN's LSTM is fitted on DeepBench's kernels now (it used to flag every prediction);
    a T4 is still outside the model-level calibration, a V100 is not."""
    p = probe("imdb_bilstm", 0.25)
    on_t4, on_v100 = predict(p, Target("T4", 1)), predict(p, Target("V100", 1))
    assert on_t4.kernel_path.startswith("cuDNN LSTM") and on_t4.extrapolated
    assert on_v100.kernel_path.startswith("cuDNN LSTM") and not on_v100.extrapolated


def test_more_vcpus_saturate_instead_of_scaling_linearly() -> None:
    from advisor.estimate.frameworks import from_software

    tf1 = usl_law(shipped_calibration(), Stack(framework=from_software("tensorflow-1.2")))
    assert usl_speedup(64, tf1) < 4 * usl_speedup(8, tf1)  # 8x the vCPUs
    assert usl_speedup(64, tf1) <= usl_speedup(32, tf1)  # Woolf 2017
    # today's frameworks keep scaling (cpu_law), never past linear: a small model's batch and
    # each op's fork and join over its threads hold it well under 8x on 8x the vCPUs
    p = probe("mnist_cnn", 0.2)
    t8 = predict(p, Target(None, 0, 8, "skylake")).seconds
    t64 = predict(p, Target(None, 0, 64, "skylake")).seconds
    assert t8 / 8 < t64 / 1.5 < t8 / 1.5


def test_a_generic_build_slows_the_threads_arithmetic_not_their_waits() -> None:
    """TensorFlow 1's pip wheel (no AVX2/FMA) was 1.5-1.8x slower than a compiled build on 8
    vCPUs and tied with it on 32-64 (Woolf 2017-07): the build stretches each thread's work,
    not the contention and coherency waits that dominate many threads."""
    calibration = shipped_calibration()
    generic = Stack(framework=Framework("tensorflow", (1, 2)), cpu_isa="sse")
    compiled = Stack(framework=Framework("tensorflow", (1, 2)), cpu_isa="native")

    def penalty(vcpus: int) -> float:
        slow = cpu_machine("skylake", vcpus, calibration, stack=generic)
        fast = cpu_machine("skylake", vcpus, calibration, stack=compiled)
        return fast.rates.conv_flops / slow.rates.conv_flops

    assert penalty(1) == pytest.approx(1 / calibration.generic_build_speed)
    assert penalty(8) > penalty(32) > penalty(64) > 1.0
    assert penalty(64) < 0.6 * penalty(1)


def test_tensorflow_pip_wheels_from_1_6_run_avx_twice_as_fast_as_the_older_sse_ones() -> None:
    """TensorFlow 1.6's release notes: "Prebuilt binaries will use AVX instructions". Until
    oneDNN's kernels became the default in 2.9 a pip wheel had no AVX2/FMA: its vectors are twice
    an SSE build's and half an AVX2-with-FMA build's operations a cycle."""
    from advisor.estimate.machine import AVX2_FLOPS_PER_CYCLE as AVX2  # a core whose widest is AVX2
    from advisor.estimate.machine import build_speed
    from advisor.fitting.published import ReferenceRow

    def isa(software: str) -> str:
        row = ReferenceRow("s", "mnist_mlp", "CPU", 4, "skylake", software, "fp32", 128, None,
                           "samples_per_second", 1.0)  # fmt: skip
        return row.cpu_isa

    assert isa("tensorflow-1.2-pip-keras") == "sse"
    assert isa("tensorflow-1.7-pip-keras") == "avx"
    assert isa("tensorflow-2.4-pip") == "avx"
    assert isa("tensorflow-2.16-pip") == "native"
    assert isa("tensorflow-1.2-compiled-avx2-fma-keras") == "avx2"
    assert isa("tensorflow-1.x-source-built") == "native"
    assert isa("pytorch-1.9-pip") == "native"
    calibration = shipped_calibration()
    assert build_speed("avx", calibration, AVX2) == pytest.approx(
        2 * build_speed("sse", calibration, AVX2)
    )
    assert build_speed("avx", calibration, AVX2) <= build_speed("avx2", calibration, AVX2) == 1.0
    assert build_speed("native", calibration, AVX2) == 1.0

    def rate(cpu_isa: str, family: str = "broadwell") -> float:
        stack = Stack(framework=Framework("tensorflow", (1, 7)), cpu_isa=cpu_isa)
        return cpu_machine(family, 1, calibration, stack=stack).rates.conv_flops

    assert rate("avx") == pytest.approx(2 * rate("sse"))
    # on an AVX-512 core an AVX wheel is held to an AVX2 build's half: never faster than it
    assert rate("avx", "skylake") == pytest.approx(rate("avx2", "skylake"))
    avx = Stack(framework=Framework("tensorflow", (1, 7)), cpu_isa="avx")
    assert "AVX build" in cpu_machine("skylake", 4, calibration, stack=avx).kernels.path
    with pytest.raises(ValueError):
        build_speed("neon", calibration, AVX2)


def test_an_avx2_build_uses_half_of_an_avx512_core_and_all_of_an_avx2_one() -> None:
    """Woolf's compiled TensorFlow 1.2 stopped at ``-mavx2 -mfma``: on GCE's Skylake, two 512-bit
    FMA pipes a core, its kernels issue AVX2's 32 FP32 operations a cycle of the core's 64; on a
    Broadwell, whose widest is AVX2, it is the native build. An AVX build never outruns it."""
    from advisor.estimate.machine import build_speed

    calibration = shipped_calibration()
    avx2 = Stack(framework=Framework("tensorflow", (1, 2)), cpu_isa="avx2")
    native = Stack(framework=Framework("tensorflow", (1, 2)), cpu_isa="native")

    def rate(family: str, stack: Stack) -> float:
        return cpu_machine(family, 1, calibration, stack=stack).rates.conv_flops

    assert rate("skylake", avx2) == pytest.approx(0.5 * rate("skylake", native))
    assert rate("turin", avx2) == pytest.approx(0.5 * rate("turin", native))
    assert rate("broadwell", avx2) == pytest.approx(rate("broadwell", native))
    assert build_speed("avx2", calibration, 64) == 0.5
    assert build_speed("avx", calibration, 64) <= build_speed("avx2", calibration, 64)
    assert "AVX2 build" in cpu_machine("skylake", 8, calibration, stack=avx2).kernels.path


def test_strict_fp32_products_on_a_gpu_whose_fp32_lanes_run_int32_too_lose_to_its_tf32() -> None:
    """An L40's TF32 peak equals its FP32 one, but half its FP32 lanes also run the product's
    integer work: PyTorch's strict-FP32 GPT-2 step there took 1.29x its TF32 one (loafbaker's
    held-out rows). On an A100, whose FP32 lanes are their own, only the peaks count."""
    calibration = shipped_calibration()
    torch = Framework("torch", (2, 3))
    strict = accelerator_machine("L40", 1, calibration, stack=Stack(framework=torch))
    tf32 = accelerator_machine(
        "L40", 1, calibration, precision="tf32", stack=Stack(framework=torch)
    )
    assert strict is not None and tf32 is not None
    l40 = catalog.accelerator("L40")
    assert l40 is not None  # TF32 on its tensor cores, at the card's measured GEMM speed
    assert tf32.rates.matmul_flops == pytest.approx(
        1.6 * catalog.tensor_speed(l40) * strict.rates.matmul_flops
    )
    assert strict.peaks.matmul_flops == tf32.peaks.matmul_flops  # the bound keeps the datasheet
    assert "half the FP32 lanes also run INT32" in strict.kernels.path  # and the path says so
    assert "INT32" not in tf32.kernels.path
    a100 = accelerator_machine("A100", 1, calibration, stack=Stack(framework=torch))
    assert a100 is not None
    assert a100.rates.matmul_flops == pytest.approx(19.5e12 * calibration.gemm_efficiency)


def test_a_convnets_3x3_layers_take_winograd_on_cuda_cores_where_tf32_barely_outruns_them() -> None:
    """cuDNN runs each layer's fastest algorithm: on an RTX 3090, whose TF32 units run at its
    FP32 rate, ResNet-50's 3x3 layers are faster as FP32 Winograd on the CUDA cores than as TF32
    products; on an A100, whose TF32 runs 8x its FP32, they stay on the tensor cores."""
    calibration = shipped_calibration()
    facts = facts_of(zoo.get("resnet50"))

    def conv_seconds(name: str, cuda_cores: bool) -> float:
        machine = accelerator_machine(name, 1, calibration, precision="tf32")
        assert machine is not None
        if not cuda_cores:
            machine = replace(machine, rates=replace(machine.rates, winograd_flops=0.0))
        return step_parts(facts, machine, 64, calibration).compute

    assert conv_seconds("RTX3090", True) < 0.8 * conv_seconds("RTX3090", False)
    assert conv_seconds("A100", True) == conv_seconds("A100", False)


def test_a_probe_on_whole_cores_is_read_against_their_peak_and_scaled_from_it() -> None:
    """This VM's two vCPUs are two cores (the kernel says one thread per core; its ResNet-50
    and AlexNet probes ran at 0.9-1.5x of two hyperthreads' peak). Read as hyperthreads, a probe
    at 90% of a halved peak carried 90% efficiency to every cloud VM, twice their real speed; read
    as the cores they are, the same probe says 45% and a VM of hyperthreads takes twice as long
    for the compute."""
    from advisor.estimate.measured import cpu_rate

    calibration = shipped_calibration()
    threads, cores = (
        cpu_machine("skylake", 2, calibration),
        cpu_machine("skylake", 2, calibration, threads_per_core=1),
    )
    assert cores.peaks.conv_flops == pytest.approx(2 * threads.peaks.conv_flops)
    arm = cpu_machine("graviton3", 2, calibration)  # one thread per core already
    assert (
        cpu_machine("graviton3", 2, calibration, threads_per_core=1).rates.conv_flops
        == arm.rates.conv_flops
    )
    heavy = probe("resnet50", 13.0)  # 114 GFLOP/s: 0.89 of two threads, 0.45 of two cores
    on_cores = replace(heavy, device=replace(heavy.device, threads_per_core=1))
    (rate, halved), (same, whole) = cpu_rate(heavy), cpu_rate(on_cores)  # type: ignore[misc]
    assert rate == same and whole == pytest.approx(2 * halved)
    vm = Target(None, 0, 16, "skylake")
    slow, fast = predict(on_cores, vm).seconds, predict(heavy, vm).seconds
    assert 1.5 * fast < slow < 2.05 * fast


def test_eight_gpus_cost_more_gpu_hours_than_one_for_a_small_model() -> None:
    p = probe("mnist_cnn", 0.2)
    one, eight = predict(p, Target("A100", 1)), predict(p, Target("A100", 8))
    assert eight.seconds * 8 > one.seconds
    assert any("all-reduce" in line for line in eight.steps)


def test_a_default_cpu_family_is_flagged_as_extrapolated() -> None:
    p = probe("mnist_cnn", 0.2)
    assert predict(p, Target(None, 0, 16, None)).extrapolated
    assert not predict(p, Target(None, 0, 16, "skylake")).extrapolated


def test_tpus_are_predicted_through_xla_and_flagged() -> None:
    result = predict(probe("resnet50", 5.0), Target("tpu-v5litepod-8", 1))
    assert result.fits and result.extrapolated
    assert "XLA" in result.kernel_path and "8 chip" in result.kernel_path


def test_strict_fp32_on_a_tpu_runs_six_bf16_passes() -> None:
    """XLA multiplies float32 on a TPU in one bf16 pass by default and in six at
    Precision.HIGHEST: a compute-bound step asked in strict FP32 takes several times longer,
    where it once ranked the TPU at bf16 speed."""
    big = probe("vgg16", 20.0, batch_size=256)
    target = Target("tpu-v5litepod-8", 1)
    default, strict = predict(big, target), predict(big, target, precision="fp32-strict")
    assert strict.step_seconds > 3 * default.step_seconds
    assert (
        "6 bf16 passes" in strict.kernel_path
        and "float32 products run in bf16" in default.kernel_path
    )
    # and never beyond the hardware: a v5e chip's 197 bf16 TFLOP/s over six passes
    one_chip = predict(big, Target("tpu-v5litepod-1", 1), precision="fp32-strict")
    achieved = big.flops_per_sample * big.config.batch_size / one_chip.step_seconds
    assert achieved <= 197e12 / 6


def test_the_probes_op_split_decides_what_scales_to_a_cpu() -> None:
    """To a device of its own kind the probe's step is scaled part by part: a step that is all
    overhead gains nothing from 32 vCPUs, one that is all convolutions gains their speed-up."""
    overhead_bound = probe("mnist_cnn", 0.2, op_split={"overhead": 1.0})
    compute_bound = probe("mnist_cnn", 0.2, op_split={"matmul_conv": 1.0})
    target = Target(None, 0, 32, "skylake")
    assert predict(compute_bound, target).seconds < predict(overhead_bound, target).seconds / 5


def test_a_gpu_time_is_the_device_models_not_a_ratio_of_the_cpus() -> None:
    """Across kinds the device model's work is absolute: a CPU probe twice as slow (its
    machine busier, its CPU older) predicts the same GPU step for a heavy workload."""
    fast, slow = probe("resnet50", 6.0), probe("resnet50", 12.0)
    target = Target("A100", 1)
    fast_step = predict(fast, target).seconds / fast.predicted_seconds * fast.step_seconds
    slow_step = predict(slow, target).seconds / slow.predicted_seconds * slow.step_seconds
    assert fast_step == pytest.approx(slow_step, rel=1e-4)


def test_the_interval_widens_when_extrapolating() -> None:
    p = probe("mnist_cnn", 0.2)
    calibrated = predict(p, Target(None, 0, 16, "skylake"))
    extrapolated = predict(p, Target(None, 0, 16, "graviton3"))
    assert extrapolated.log_sigma > calibrated.log_sigma > 0
    assert calibrated.quantile(0.1) < calibrated.seconds < calibrated.quantile(0.9)


def test_measured_on_prefers_the_newest_probe_on_the_target_itself() -> None:
    old = probe("mnist_cnn", 0.05, device=T4_HOST, created_at="2026-01-01T00:00:00Z")
    new = probe("mnist_cnn", 0.04, device=T4_HOST, created_at="2026-06-01T00:00:00Z")
    local = probe("mnist_cnn", 0.2)
    assert measured_on([old, local, new], Target("T4", 1)) is new
    assert measured_on([old, local, new], Target("V100", 1)) is None


def test_cpu_machine_speed_follows_the_family_peak() -> None:
    calibration = shipped_calibration()
    haswell = cpu_machine("haswell", 16, calibration)
    icelake = cpu_machine("icelake", 16, calibration)
    assert icelake.rates.conv_flops > haswell.rates.conv_flops


def test_the_probes_own_thread_scaling_sets_the_cpu_scaling() -> None:
    flat = probe("mnist_cnn", 0.2)
    flat = replace(flat, thread_scaling={1: 0.21, 2: 0.2})  # threads barely help this one
    linear = replace(probe("mnist_cnn", 0.2), thread_scaling={1: 0.4, 2: 0.2})
    target = Target(None, 0, 16, "skylake")
    assert predict(flat, target).seconds > 2 * predict(linear, target).seconds


def test_the_probes_batch_scaling_sets_the_overhead_share() -> None:
    flat = replace(probe("mnist_cnn", 0.1), batch_scaling={32: 0.1, 128: 0.1})  # all overhead
    proportional = replace(probe("mnist_cnn", 0.1), batch_scaling={32: 0.025, 128: 0.1})
    target = Target(None, 0, 32, "skylake")
    assert predict(proportional, target).seconds < predict(flat, target).seconds / 3


def test_a_users_own_model_is_predicted_from_what_its_probe_measured() -> None:
    p = probe("mnist_cnn", 0.2, op_split={"matmul_conv": 0.7, "elementwise": 0.2, "overhead": 0.1})
    own = replace(p, config=replace(p.config, workload="file:0123abcd"))
    result = predict(own, Target("L4", 1), precision="mixed")
    assert 0 < result.seconds < own.predicted_seconds
    assert result.fits and result.extrapolated  # L4 is not in the calibration data


def test_the_floor_binds_for_a_tiny_model_on_a_fast_gpu_not_for_resnet50() -> None:
    """mnist_mlp's 5.5 ms CPU step, whose profile shows no overhead (profiled op times leave
    dispatch out), scaled by compute and bandwidth alone lands far below what dispatching a
    Keras step and launching its kernels costs on a GPU; ResNet-50's step does not."""
    split = {"matmul_conv": 0.7, "elementwise": 0.3}
    tiny = dataclasses.replace(probe("mnist_mlp", 0.0055, op_split=split), device_kernels=40)
    on_a100 = predict(tiny, Target("A100", 1))
    steps = tiny.config.steps_per_epoch * tiny.config.epochs
    assert any(line.endswith("host-bound") for line in on_a100.steps)
    assert on_a100.seconds >= (shipped_calibration().gpu_overhead_s + 40 * 4e-6) * steps
    assert predict(tiny, Target("T4", 1)).seconds >= 5.0  # 20 epochs of 469 steps
    big = dataclasses.replace(probe("resnet50", 12.0), device_kernels=1100)  # 2 vCPUs
    assert any(line.endswith("device-bound") for line in predict(big, Target("A100", 1)).steps)


def test_a_local_prediction_holds_the_machines_run_to_run_spread() -> None:
    """Without history the recorded default; with it, sqrt(2) x the probes' own disagreement; a
    probe that saw the machine slow down while it ran widens by that drift."""
    p = probe("mnist_mlp", 0.0055, device=LOCAL_CPU)
    here = Target(None, 0, vcpus=float(LOCAL_CPU.logical_cpus))
    assert local_log_sigma(p) == pytest.approx(DEFAULT_RUN_LOG_SIGMA)
    assert local_log_sigma(p, 0.1) == pytest.approx(math.sqrt(2) * 0.1)
    drifted = dataclasses.replace(p, reference_seconds=(0.004, 0.006))  # 50% slower at the end
    assert drifted.machine_drift == pytest.approx(0.5)
    assert local_log_sigma(drifted, 0.1) == pytest.approx(
        math.hypot(math.sqrt(2) * 0.1, math.log(1.45))  # beyond the kernel's own 5% noise
    )
    steady = dataclasses.replace(p, reference_seconds=(0.004, 0.0041))  # within its noise
    assert local_log_sigma(steady, 0.1) == pytest.approx(math.sqrt(2) * 0.1)
    measured = predict(p, here, run_log_sigma=0.1)
    assert measured.measured and measured.log_sigma == pytest.approx(math.sqrt(2) * 0.1)
    assert (
        predict(p, Target("T4", 1), run_log_sigma=0.3).log_sigma
        > predict(p, Target("T4", 1), run_log_sigma=0.01).log_sigma
    )


def test_the_floor_uses_the_dispatch_measured_here() -> None:
    """A probe that timed the host's per-step dispatch floors accelerator steps at that plus its
    kernels' launches; the dispatch also sets the overhead share the step model scales."""
    split = {"matmul_conv": 0.7, "elementwise": 0.3}
    tiny = dataclasses.replace(
        probe("mnist_mlp", 0.0055, op_split=split), device_kernels=30, dispatch_seconds=0.0015
    )
    on_a100 = predict(tiny, Target("A100", 1))
    floor_line = next(line for line in on_a100.steps if "floor" in line)
    assert "1.5 ms (measured here) + 30 kernels" in floor_line
    steps = tiny.config.steps_per_epoch * tiny.config.epochs
    assert on_a100.seconds >= (0.0015 + 30 * 4e-6) * steps
    # the dispatch also sets the overhead share a probe's step keeps on another CPU
    cpu = predict(tiny, Target(None, 0, 8, "skylake"))
    shares = next(line for line in cpu.steps if line.startswith("shares"))
    assert "overhead 27%" in shares  # 1.5 ms of a 5.5 ms step


def test_an_eager_backends_work_per_layer_makes_a_deep_convnet_host_bound_on_a_fast_gpu() -> None:
    """ResNet-152 under Keras on PyTorch: 516 layers at the 155 us a layer the chain measured
    here put its floor at about 80 ms a step (an H200 took about 400, 2026-11-26); the same
    probe under a graph backend (12 us a layer) stays device-bound."""
    deep = dataclasses.replace(
        probe("resnet152", 12.0), device_kernels=3200, dispatch_seconds=0.0007, host_layers=516
    )
    eager = dataclasses.replace(deep, layer_dispatch_seconds=155e-6)
    on_h200 = predict(eager, Target("H200", 1))
    floor_line = next(line for line in on_h200.steps if "floor" in line)
    assert "(measured here, 516 layers)" in floor_line and floor_line.endswith("host-bound")
    assert on_h200.step_seconds >= 0.0007 + 516 * 155e-6
    graph = predict(dataclasses.replace(deep, layer_dispatch_seconds=12e-6), Target("H200", 1))
    assert graph.step_seconds < on_h200.step_seconds
    assert any(line.endswith("device-bound") for line in graph.steps)


def test_keras_on_a_measured_backend_pays_its_gpu_hosts_work_and_feeds_its_input() -> None:
    """A probe under Keras on PyTorch measured its host on this CPU; on a GPU the host pays
    what ``data/gpu-host.csv`` measured on a GPU machine (2.27 ms a step, 552 us a layer) and
    copies each batch's input from the host arrays: AlexNet's 316.6 MB at batch 512 take about
    210 ms at 1.5 GB/s, which bound it there (2,294 images/s on an H200, 2026-11-26). Keras on
    TensorFlow, not measured on a GPU host, keeps the probe's own figures and pays the copy
    alone (5.5 GB/s); a published native-PyTorch run pays neither."""
    from advisor.estimate.floor import gpu_hosts

    torch_cpu = replace(LOCAL_CPU, backend="torch", tensorflow="2.11.0")
    alexnet = dataclasses.replace(
        probe("alexnet", 20.0, device=torch_cpu),
        dispatch_seconds=0.0007,
        layer_dispatch_seconds=150e-6,
        host_layers=14,
        device_kernels=82,
    )
    host = gpu_hosts()["torch"]
    on_h200 = predict(alexnet, Target("H200", 1))
    floor_line = next(line for line in on_h200.steps if "floor" in line)
    assert "at least Keras on torch on a GPU host" in floor_line and "input feed" in floor_line
    feed = 512 * 227 * 227 * 3 * 4 / host.feed_bytes_per_second
    least = host.dispatch_seconds + 14 * host.layer_seconds + 82 * 4e-6 + feed
    assert on_h200.step_seconds == pytest.approx(least, rel=1e-6)
    assert 0.18 < on_h200.step_seconds < 0.26  # measured: 223 ms
    graph = dataclasses.replace(alexnet, device=LOCAL_CPU)
    on_h200_tf = predict(graph, Target("H200", 1))
    tf_floor = next(line for line in on_h200_tf.steps if "floor" in line)
    assert "input feed 57.6 ms" in tf_floor and "at least Keras" not in tf_floor
    assert on_h200_tf.step_seconds < on_h200.step_seconds / 2
    # a published row of Keras on PyTorch predicted from a TensorFlow probe gets the same host
    from advisor.estimate.frameworks import from_software
    from advisor.estimate.machine import Stack

    keras_torch = Stack(framework=from_software("keras-3.15-torch-2.11-pip"))
    native_torch = Stack(framework=from_software("pytorch-2.11-pip"))
    assert predict(graph, Target("H200", 1), stack=keras_torch).step_seconds >= least
    native = predict(graph, Target("H200", 1), stack=native_torch)
    assert native.step_seconds < least / 3 and "input feed" not in "\n".join(native.steps)


def test_the_gradient_exchange_is_added_once_where_the_host_is_calibrated() -> None:
    """Eight GPUs under TensorFlow 1 (a host that waits for each step, its overhead the
    calibrated one): the step is host + device + all-reduce, the all-reduce not also inside
    the host part, as it was while step_parts folded it into the overhead."""
    from advisor.estimate.frameworks import Framework
    from advisor.estimate.machine import Stack

    stack = Stack(framework=Framework("tensorflow", (1, 15)))
    p = probe("resnet50", 12.0)
    eight = predict(p, Target("V100", 8), stack=stack)
    host = shipped_calibration().gpu_overhead_s
    assert f"host {host * 1e3:.3g} ms/step (calibrated)" in "\n".join(eight.steps)
    machine = accelerator_machine("V100", 8, shipped_calibration(), stack=stack)
    assert machine is not None
    exchange = step_parts(
        facts_of(zoo.get("resnet50")), machine, 64, shipped_calibration()
    ).exchange
    assert exchange > 0  # the exchange exists, and the host part above holds none of it
    assert f"all-reduce {exchange * 1e3:.3g} ms/step" in "\n".join(eight.steps)


def test_nchw_memory_bound_kernels_are_held_to_the_multiprocessors_not_the_bandwidth() -> None:
    """Lambda's PyTorch ResNet-50 (NCHW) runs 2,791 images/s on an H100 in fp16 and 3,076 on a
    B200, whose bandwidth is 2.4x: those kernels wait on latency, per element, so on the NCHW
    tensor-core path a 16-bit element costs what a 32-bit one does and more bandwidth barely
    helps; channels-last kernels stream at the bandwidth."""
    from dataclasses import replace

    from advisor.estimate.frameworks import from_software
    from advisor.estimate.machine import Stack, accelerator_machine
    from advisor.estimate.parameters import shipped_calibration
    from advisor.estimate.steps import activation_seconds, facts_of, step_parts

    calibration = shipped_calibration()
    facts = facts_of(zoo.get("resnet50"))
    torch = from_software("pytorch-2.3-ngc-24.03")

    def memory(device: str, precision: str, layout: str) -> float:
        stack = Stack(framework=torch, layout=layout)
        machine = accelerator_machine(device, 1, calibration, stack=stack, precision=precision)
        assert machine is not None
        return step_parts(facts, machine, 256, calibration).memory

    assert memory("B200", "fp16", "nchw") > 0.9 * memory("B200", "tf32", "nchw")
    assert memory("B200", "fp16", "nhwc") < 0.6 * memory("B200", "tf32", "nhwc")
    assert memory("B200", "fp16", "nchw") > 0.75 * memory("H100", "fp16", "nchw")
    assert memory("B200", "fp16", "nhwc") < 0.5 * memory("H100", "fp16", "nhwc")
    machine = accelerator_machine("B200", 1, calibration, stack=Stack(framework=torch))
    assert machine is not None and machine.rates.element_rate == 0.0  # channels last: no such bound
    bound = replace(machine, rates=replace(machine.rates, element_rate=1e9))
    assert activation_seconds(1e9, 1e9, bound) == 1.0  # a billion elements at a billion a second
    assert activation_seconds(1e9, 1e9, machine) == 1e9 / machine.rates.bandwidth


def test_tensorflow_runs_a_16_bit_convnet_channels_last_whatever_layout_it_was_written_in() -> None:
    """Grappler's layout optimizer (TensorFlow from 1.15) swaps a graph whose convolutions are
    mostly fp16 to NHWC on Volta and later: tf_cnn_benchmarks' NCHW in mixed precision pays no
    transposes there; in TF32, in TensorFlow 1.4 and in PyTorch, NCHW stays NCHW."""
    from advisor.estimate.frameworks import from_software
    from advisor.estimate.machine import Stack, accelerator_machine
    from advisor.estimate.parameters import shipped_calibration

    calibration = shipped_calibration()

    def transposes(software: str, precision: str) -> bool:
        stack = Stack(framework=from_software(software), layout="nchw")
        machine = accelerator_machine("A100", 1, calibration, stack=stack, precision=precision)
        assert machine is not None
        return machine.kernels.transposes

    assert not transposes("tensorflow-1.15-cuda11.0", "mixed")
    assert not transposes("tensorflow-2.4-cuda11.0", "fp16")
    assert transposes("tensorflow-2.4-cuda11.0", "tf32")
    assert transposes("tensorflow-1.4-source-built", "mixed")
    assert transposes("pytorch-2.3-ngc-24.03", "fp16")


def test_tf_data_waits_reach_only_a_run_that_drops_tf_data_iterators() -> None:
    """The probe's predicted time holds the waits Keras on TensorFlow 2 pays dropping tf.data
    iterators (``probes.teardown``): a run under the probe's framework pays them too, a
    TensorFlow 1 run (NumPy batches through ``feed_dict``) does not."""
    from advisor.estimate.frameworks import Framework
    from advisor.estimate.machine import Stack

    plain = probe("mnist_cnn", 0.05)
    epochs = plain.config.epochs
    waits = 2.0 * epochs  # two seconds a boundary, the last epoch's in the one-time part
    stalled = replace(
        plain,
        predicted_seconds=plain.predicted_seconds + waits * (epochs - 1) / epochs,
        startup_seconds=plain.startup_seconds + waits / epochs,
        teardown_seconds=waits,
    )
    target = Target(None, 0, 16.0, "skylake")
    tf1 = Stack(framework=Framework("tensorflow", (1, 2)), cpu_isa="sse")
    assert predict(stalled, target, stack=tf1).seconds == pytest.approx(
        predict(plain, target, stack=tf1).seconds, rel=1e-9
    )
    assert predict(stalled, target).seconds > predict(plain, target).seconds


def test_a_card_that_sustains_more_than_its_rated_clock_runs_its_tensor_work_faster() -> None:
    """Measured matrix products (``mamf_tflops``): an RTX 3090 runs 78.0 TFLOP/s where its
    datasheet says 71, 1.10 of it, against a typical card's 0.83; its tensor cores run that
    much faster per datasheet FLOP. A card throttling at its power cap under back-to-back
    products (H100 PCIe, 0.66) is not slowed, and an unmeasured one (T4) is as typical."""
    calibration = shipped_calibration()
    rtx3090, h100_pcie, t4 = (catalog.accelerator(n) for n in ("RTX3090", "H100-PCIe", "T4"))
    assert rtx3090 is not None and h100_pcie is not None and t4 is not None
    assert rtx3090.tensor_share == pytest.approx(78.0 / 71.0)
    assert 0.75 < catalog.typical_tensor_share() < 0.9
    speed = catalog.tensor_speed(rtx3090)
    assert speed == pytest.approx(rtx3090.tensor_share / catalog.typical_tensor_share())
    assert speed > 1.25
    assert catalog.tensor_speed(h100_pcie) == 1.0 and catalog.tensor_speed(t4) == 1.0
    machine = accelerator_machine("RTX3090", 1, calibration, precision="fp16")
    assert machine is not None
    conv_speed = calibration.conv_speed("ga10x")
    assert machine.rates.conv_flops == pytest.approx(
        71e12 * speed * calibration.tensor_efficiency * conv_speed
    )
    assert machine.rates.matmul_flops == pytest.approx(71e12 * speed * calibration.gemm_efficiency)
    assert machine.peaks.conv_flops == 71e12  # the datasheet stays the bound the model keeps


def test_each_gpu_generation_runs_its_convolutions_at_its_own_fitted_speed() -> None:
    """Every GPU of the catalog names its architecture; the fit gives Turing, GA100, GA10x, Ada
    and Hopper convolutions a speed of their own over the efficiencies Volta's rows set, which
    moves convolutions only: an RTX A6000's matrix products keep their card's measured share,
    and a V100 and a B200 stand at 1. The shipped fit found GA10x's convolutions faster per
    datasheet FLOP than the rest (docs/BENCHMARKS.md, "Convolutions by GPU generation")."""
    gpus = [a for a in catalog.accelerators().values() if a.kind == "gpu"]
    assert gpus and all(a.architecture for a in gpus)
    assert {a.architecture for a in gpus} >= set(CONV_SPEEDS) | {"volta", "blackwell"}
    calibration = shipped_calibration()
    assert calibration.conv_speed("volta") == 1.0 == calibration.conv_speed("blackwell")
    assert calibration.conv_speed("") == 1.0  # a TPU
    assert all(calibration.conv_speed(a) > 0 for a in CONV_SPEEDS)  # each has its parameter
    assert calibration.conv_speed("ga10x") > 1.1
    calibration = dataclasses.replace(
        calibration, tensor_efficiency=0.3, gpu_efficiency=0.3, ga10x_conv_speed=1.2
    )  # low enough that twice the speed stays under the peak
    doubled = dataclasses.replace(calibration, ga10x_conv_speed=2.4)
    base, faster = (
        accelerator_machine("A6000", 1, c, precision="fp16") for c in (calibration, doubled)
    )
    assert base is not None and faster is not None
    assert faster.rates.conv_flops == pytest.approx(2 * base.rates.conv_flops)
    assert (
        faster.rates.matmul_flops == base.rates.matmul_flops
        and faster.rates.bandwidth == base.rates.bandwidth
    )
    fp32 = [
        accelerator_machine("A6000", 1, c, precision="fp32-strict") for c in (calibration, doubled)
    ]
    assert fp32[0] is not None and fp32[1] is not None
    assert fp32[1].rates.winograd_flops == pytest.approx(2 * fp32[0].rates.winograd_flops)
    v100 = accelerator_machine("V100", 1, doubled, precision="fp16")
    assert v100 == accelerator_machine("V100", 1, calibration, precision="fp16")
    # however fast a fit makes a generation, its convolutions never outrun what the unit can
    # issue: its datasheet peak at the card's measured speed (``catalog.tensor_speed``)
    a6000 = catalog.accelerator("A6000")
    absurd = dataclasses.replace(calibration, ga10x_conv_speed=100.0)
    capped = accelerator_machine("A6000", 1, absurd, precision="fp16")
    assert a6000 is not None and capped is not None
    assert capped.rates.conv_flops == pytest.approx(
        capped.peaks.conv_flops * catalog.tensor_speed(a6000)
    )


def test_a_tpu_slice_all_reduces_over_its_2d_torus_not_a_ring() -> None:
    """A ring's all-reduce waits 2 (n - 1) hops; a TPU slice's ICI reduces along each dimension
    of its 2D torus in turn, 2 (sqrt(n) - 1) hops a dimension: on 1,024 chips 124 hops, not
    2,046, and a step's exchange stays milliseconds where MLPerf's v3-2048 ran 25 ms steps."""
    calibration = shipped_calibration()
    pod = accelerator_machine("tpu-v3-2048", 1, calibration, precision="bf16")
    nodes = accelerator_machine("H100", 8, calibration, precision="bf16")
    assert pod is not None and nodes is not None and pod.topology.replicas == 1024
    resnet = 25_560_000
    assert allreduce_seconds(resnet, pod, calibration) < 0.010
    ring = 2 * (pod.topology.replicas - 1) * 30e-6
    assert allreduce_seconds(resnet, pod, calibration) < ring / 5
    assert (
        allreduce_seconds(resnet, nodes, calibration) > 14 * 30e-6
    )  # a ring of 8 waits its 14 hops
    # sharded data parallelism's gathers wait on the same torus
    tiny = dataclasses.replace(facts_of(zoo.get("mnist_mlp")), parameters=1, sharded_bytes=1.0)
    assert sharded_seconds(tiny, pod, calibration) < ring / 5
    assert sharded_seconds(tiny, nodes, calibration) > 14 * 30e-6


def test_gpus_without_peer_access_share_the_host_for_their_exchange() -> None:
    """GeForce cards since Ampere have no peer-to-peer access: NCCL stages every exchange
    through host memory, which all of a box's cards share, so more of them add exchange as fast
    as compute (Lambda's eight RTX 3090s trained VGG-16 no faster than two). Cards that reach
    each other keep a ring, whose share per card stays (g - 1) / g however many there are."""
    calibration = shipped_calibration()
    vgg = 138_360_000
    seconds = {}
    for name in ("RTX3090", "A6000"):
        for n in (2, 8):
            machine = accelerator_machine(name, n, calibration, precision="fp32")
            assert machine is not None
            seconds[name, n] = allreduce_seconds(vgg, machine, calibration)
    assert seconds["RTX3090", 8] / seconds["RTX3090", 2] > 6  # 4x the cards, 7x the exchange
    assert seconds["A6000", 8] / seconds["A6000", 2] < 2
    assert seconds["RTX3090", 2] > 2 * seconds["A6000", 2]  # the same PCIe 4.0, through the host


@pytest.mark.parametrize(
    ("device", "precision", "said", "runs"),
    [
        ("H100", "fp8", "", "fp8"),
        ("A100", "fp8", "fp8 asked: no fp8 units on A100, bf16 runs", "bf16"),
        ("A100", "bf16", "", "bf16"),
        ("T4", "fp16", "", "fp16"),
        ("V100", "bf16", "bf16 asked: no fast 16-bit units on V100, fp32 runs", "fp32"),
        ("T4", "tf32", "tf32 asked: no faster than fp32 on T4, fp32 runs", "fp32"),
        ("tpu-v6e-8", "fp8", "fp8 asked: a TPU has no fp8 units, bf16 runs", "bf16"),
        ("tpu-v6e-8", "bf16", "", "bf16"),
    ],
)
def test_a_precision_the_machine_lacks_is_said_with_what_runs(
    device: str, precision: str, said: str, runs: str
) -> None:
    """What runs instead of the precision asked is a machine's fact (``Kernels.fallback``),
    which every prediction carries for the answer to warn of."""
    machine = accelerator_machine(device, 1, shipped_calibration(), precision=precision)
    assert machine is not None
    assert machine.kernels.fallback == said and machine.kernels.precision == runs
