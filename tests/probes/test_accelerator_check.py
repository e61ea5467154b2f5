"""The accelerator check's rehearsal: ``benchmarks/gpu/accelerator_check.py --cpu-only``, the same
code a GPU machine runs (lanes, probes, predictions, real runs, exports), with the CPU in the
GPU's place, at small sizes, under JAX. Its figures are not checked here (a shared 2-core machine
says little about a GPU); that every part ran and wrote what a GPU run writes is."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import cli
from probes import exchange
from probes.lanes import by_core, lanes_for

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu" / "accelerator_check.py"


def check(*argv: str) -> subprocess.CompletedProcess[str]:
    """``benchmarks/gpu/accelerator_check.py ARGV`` in a process of its own, as its user runs it."""
    return subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True,
                          check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip


@pytest.mark.jax
@pytest.mark.skipif(
    importlib.util.find_spec("jax") is None,
    reason="JAX is not installed: the accelerator check's rehearsal did not run",
)
def test_the_rehearsal_probes_predicts_measures_and_exports(tmp_path: Path) -> None:
    out = tmp_path / "check"
    command = [sys.executable, str(ROOT / "benchmarks" / "gpu" / "accelerator_check.py"), "--cpu-only",
               "--out", str(out), "--minutes", "2.5", "--cases", "mnist_mlp,lstm_text_generation"]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=200, check=False,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    rows = {row["workload"]: row for row in summary["rows"]}
    assert set(rows) == {"mnist_mlp", "lstm_text_generation"}
    mlp = rows["mnist_mlp"]
    assert mlp["backend"] == "jax" and mlp["target"] == "H100"
    assert mlp["cpu-1_predicted_per_epoch"] > 0 and mlp["cpu-1_extrapolated"]  # jax: uncalibrated
    assert mlp["measured_per_epoch"] > 0 and "cpu-as-gpu_probe_error" in mlp
    assert "cpu-1_predicted_error" not in mlp  # an H100 prediction is no error of a CPU run
    assert "| mnist_mlp | jax |" in (out / "summary.md").read_text()
    # each lane says what its CPUs are: their SMT siblings and the reference product's rate
    lanes = [note for note in summary["not_run"] if "SMT sibling sets" in note]
    assert len(lanes) == 2 and all("GFLOP/s" in note for note in lanes), summary["not_run"]
    # each lane's host floor, measured by its probes (on a GPU's lane: the GPU's host cost)
    assert mlp["cpu-as-gpu_dispatch_ms"] > 0 and mlp["cpu-as-gpu_layer_us"] >= 0
    assert "cpu-as-gpu host: dispatch" in (out / "summary.md").read_text()
    probes = exchange.read_csv(out / "probes.csv")
    assert {r.backend for r in probes} == {"jax"} and len(probes) == 4 * 2 * 2
    measured = exchange.read_csv(out / "measured.csv")
    assert {r.metric for r in measured} == {"seconds_per_epoch", "seconds_total"}
    imported = CliRunner().invoke(cli, ["import", str(out / "probes.csv"), "--replace"])
    assert imported.exit_code == 0, imported.output
    assert "imported 4 probe result(s)" in imported.output


def test_lanes_take_whole_cores_hyperthreads_together() -> None:
    """A host of 4 cores with 2 threads each, numbered as Linux does (0-3 the first threads,
    4-7 their siblings): a lane of 2 CPUs gets one core's two threads, as a 2-vCPU VM does."""
    siblings = {cpu: f"{cpu % 4},{cpu % 4 + 4}" for cpu in range(8)}
    order = by_core(list(range(8)), siblings.__getitem__)
    assert order == [0, 4, 1, 5, 2, 6, 3, 7]
    lanes = lanes_for([2], False, order)[0]
    assert lanes[0].cpus == [0, 4] and lanes[1].cpus == [1, 5, 2, 6, 3, 7]
    # no topology to read: the order is kept
    assert by_core([3, 1, 2], lambda cpu: "") == [1, 2, 3]


@pytest.mark.tf
def test_a_real_run_of_a_synthetic_input_convnet_is_read_per_step_of_its_pool() -> None:
    """An ImageNet convnet's real run steps a pool of 8 batches an epoch, not the configured
    epoch: its step is the epoch over the pool's steps, its configured epoch that step times the
    configured steps (the H200 check of 2026-11-26 divided by the configured steps instead)."""
    from probes.real import real_run
    from probes.spec import spec_for

    spec = spec_for("alexnet", batch_size=2, samples=64, validation_samples=0, epochs=2)
    run = real_run(spec)
    assert spec.config.steps_per_epoch == 32 and run["steps_per_epoch"] == 8
    assert run["step"] == pytest.approx(run["epochs"][1] / 8)
    assert run["per_epoch"] == pytest.approx(run["step"] * 32)


def test_a_finished_check_is_rescored_by_todays_model() -> None:
    """``--rescore`` predicts the H200 runs of 2026-11-26 again from the probes the check took on
    that machine's own CPU cores (no GPU, no TensorFlow) within 2x, the floor holding AlexNet's
    copy (a seventh of its arithmetic alone); a folder without a check is exit 2."""
    folder = ROOT / "benchmarks" / "results" / "accelerator-check-20261126-jax"
    done = check("--rescore", str(folder / "run2"))
    assert done.returncode == 0, done.stderr[-2000:]
    table = [line.strip("|").split("|") for line in done.stdout.splitlines()]
    rows = [
        [cell.strip() for cell in row]
        for row in table
        if len(row) == 6 and row[2].strip().isdigit()
    ]
    assert {row[0] for row in rows} == {"alexnet", "resnet50", "vgg16", "resnet152"}, done.stdout
    assert {row[2] for row in rows} == {"2", "8"}
    for _, _, _, predicted, measured, _ in rows:  # the floor holds AlexNet's copy
        assert 0.5 < float(predicted) / float(measured) < 2.0, rows
    assert "8 predictions: median" in done.stdout
    assert check("--rescore", str(folder)).returncode == 2


def test_a_malformed_check_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "probes.csv").write_text("source,workload\nx,y\n")
    (tmp_path / "measured.csv").write_text("not,a,check\n")
    done = check("--rescore", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith("--rescore: ") and len(done.stderr.strip().splitlines()) == 1
