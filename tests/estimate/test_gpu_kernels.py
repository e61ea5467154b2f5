"""GPU kernel paths fitted on DeepBench's measured kernels, and the CPU<->GPU validation data."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from advisor.errors import UsageError
from advisor.estimate import Target, kernels, predict
from advisor.estimate.machine import accelerator_machine, cpu_machine
from advisor.estimate.measured import facts_for, with_inferred_recurrence
from advisor.estimate.parameters import shipped_calibration
from advisor.estimate.predict import source_machine
from advisor.estimate.steps import facts_of, step_parts
from advisor.fitting import kernels as kernel_fit
from advisor.fitting.published import read_reference
from advisor.fitting.validate import machine_of_row, pair_results, read_facts_suite
from advisor.locations import shipped
from advisor.workloads import zoo
from tests.estimate.test_probes import LOCAL_CPU, probe


def test_the_shipped_kernel_fit_is_what_the_fit_gives_on_the_shipped_kernels() -> None:
    """data/gpu-kernel-fit.json is re-runnable: ``python -m advisor.fitting kernels``."""
    shipped_blob = json.loads(shipped(kernels.FIT_FILE).read_text(encoding="utf-8"))
    assert kernel_fit.rounded(kernel_fit.fit()) == shipped_blob


def test_every_kernel_row_names_where_it_came_from_and_its_gpu_has_a_cited_peak() -> None:
    with shipped(kernel_fit.PEAKS_FILE).open(encoding="utf-8", newline="") as handle:
        peaks = {row["gpu"]: row for row in csv.DictReader(handle)}
    assert all(row["source"] and float(row["fp32_tflops"]) > 0 for row in peaks.values())
    with shipped(kernel_fit.KERNELS_FILE).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["kernel"] for row in rows} == {"gemm", "vanilla", "lstm", "gru"}
    for row in rows:
        assert row["repo"] == "baidu-research/DeepBench"
        assert re.fullmatch(r"[0-9a-f]{40}", row["commit"])
        assert row["file"].startswith("results/train/") and row["sheet"] and int(row["row"]) > 0
        assert row["gpu"] in peaks and float(row["time_ms"]) > 0


def test_the_held_out_gpu_stays_out_of_the_fit() -> None:
    recurrent, _ = kernel_fit.read_kernels()
    held = [k for k in recurrent if k.gpu == kernel_fit.HOLD_OUT]
    fit = kernel_fit.fit()
    assert fit.errors["recurrent held_out"]["n"] == len(held) > 0
    refit_without = kernel_fit.fit_recurrent([k for k in recurrent if k.gpu != kernel_fit.HOLD_OUT])
    refit_with = kernel_fit.fit_recurrent(recurrent)
    assert fit.recurrent == refit_without != refit_with


def test_the_fitted_recurrent_path_is_physical() -> None:
    """Tens of microseconds a time step, a per-call set-up, and a share of peak below 2."""
    rnn = kernels.shipped_fit().recurrent
    assert 1e-5 < rnn.step_s < 5e-4 and 0 < rnn.call_s < 2e-3 and 0.1 < rnn.efficiency < 2
    short = kernels.Kernel("x", "lstm", 10, 0.0, 1e-6)
    longer = replace(short, timesteps=20)
    assert rnn.seconds(longer) - rnn.seconds(short) == pytest.approx(
        10 * (rnn.step_s + 1e-6 / rnn.efficiency)
    )


def test_a_cpus_recurrent_time_is_mostly_arithmetic_a_gpus_mostly_latency() -> None:
    """Why the recurrent share of a CPU probe cannot scale by step latencies alone."""
    calibration = shipped_calibration()
    facts = facts_of(zoo.get("lstm_text_generation"))
    cpu = step_parts(facts, cpu_machine("skylake", 8, calibration), 128, calibration)
    v100 = accelerator_machine("V100", 1, calibration)
    assert v100 is not None
    gpu = step_parts(facts, v100, 128, calibration)
    cpu_latency = facts.timesteps * cpu_machine("skylake", 8, calibration).latencies.cell_step_s
    gpu_latency = facts.timesteps * v100.latencies.cell_step_s + v100.latencies.recurrent_call_s
    assert cpu_latency < cpu.sequential / 2
    assert gpu_latency > gpu.sequential / 2


def test_a_users_recurrent_model_gets_its_time_steps_from_its_probe() -> None:
    """A probe of a model outside the zoo predicts about what the zoo's facts predict."""
    cpu8 = replace(LOCAL_CPU, logical_cpus=8, threads=8)
    split = {"recurrent": 0.8, "elementwise": 0.1, "matmul_conv": 0.1}
    p = probe("lstm_text_generation", 0.05, device=cpu8, op_split=split)
    user = replace(p, config=replace(p.config, workload="file:0123abcd"))
    zoo_seconds = predict(p, Target("V100", 1)).seconds
    user_seconds = predict(user, Target("V100", 1)).seconds
    assert user_seconds == pytest.approx(zoo_seconds, rel=0.35)
    # the probe's recurrent share becomes serial time steps, each with its share of the
    # arithmetic, as the zoo counts them (40 steps)
    calibration = shipped_calibration()
    facts = facts_for(user)
    source, _ = source_machine(user.device, calibration)
    assert source is not None
    inferred = with_inferred_recurrence(user, facts, source, calibration)
    assert inferred.timesteps > 1 and inferred.recurrent_flops_per_step > 0


def test_a_tf1_run_gets_cudnn_only_where_it_chose_cudnnlstm() -> None:
    calibration = shipped_calibration()
    held = read_reference(shipped("calibration-holdout-woolf-2017-11.csv"))
    old = read_reference(shipped("benchmarks.csv"))
    gpu_2017_11 = next(row for row in held if row.device == "K80")
    gpu_2017_07 = next(row for row in old if row.device == "K80" and row.source == "woolf-2017-07")
    assert machine_of_row(gpu_2017_11, calibration).kernels.lstm == "cuDNN LSTM"  # type: ignore[union-attr]
    assert machine_of_row(gpu_2017_07, calibration).kernels.lstm == "generic LSTM"  # type: ignore[union-attr]


def test_the_tf2_suite_pairs_each_models_cpu_with_its_gpus() -> None:
    calibration = shipped_calibration()
    runs = read_facts_suite(
        shipped("cpu-gpu-validation.csv"), shipped("cpu-gpu-workloads.csv"), calibration
    )
    assert len(runs) == 10 and {run.machine.kind for run in runs} == {"cpu", "gpu"}
    assert all(run.machine.topology.replicas == 2 for run in runs if run.machine.kind == "gpu")
    irnn = next(r for r in runs if r.workload == "tf_mnist_irnn" and r.machine.kind == "gpu")
    assert irnn.machine.kernels.lstm == "generic LSTM"  # Keras has no cuDNN SimpleRNN
    pairs = pair_results(runs, calibration)
    assert len(pairs) == 10 and {p.kinds for p in pairs} == {"cpu->gpu", "gpu->cpu"}


def test_a_bad_suite_row_is_one_error_naming_its_line(tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    text = shipped("cpu-gpu-validation.csv").read_text(encoding="utf-8").splitlines()
    runs.write_text("\n".join([text[0], text[1], text[2].replace(",256,", ",many,")]) + "\n")
    with pytest.raises(UsageError, match=r"runs.csv:3"):
        read_facts_suite(runs, shipped("cpu-gpu-workloads.csv"), shipped_calibration())


def test_a_dense_models_products_are_half_efficient_at_the_fitted_narrow_side() -> None:
    """A dense layer's product is as narrow as its batch: at the SGEMM fit's half-width batch it
    runs at half the efficiency; a convnet's (batch x pixels wide) barely notices the batch."""
    calibration = shipped_calibration()
    v100 = accelerator_machine("V100", 1, calibration)
    assert v100 is not None
    half = kernels.shipped_fit().gemm.half_narrow
    mlp = facts_of(zoo.get("mnist_mlp"))
    batch = round(half)
    compute = step_parts(mlp, v100, batch, calibration).compute
    at_full = mlp.flops_per_sample * batch / v100.rates.matmul_flops
    assert compute == pytest.approx(at_full * (batch + half) / batch)
    cnn = facts_of(zoo.get("resnet50"))  # convolutions only
    small, large = (step_parts(cnn, v100, b, calibration).compute / b for b in (batch, 4 * batch))
    assert small / large < 1.1
