"""The accelerator check's rehearsal: ``benchmarks/accelerator_check.py --cpu-only``, the same
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

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.jax
@pytest.mark.skipif(
    importlib.util.find_spec("jax") is None,
    reason="JAX is not installed: the accelerator check's rehearsal did not run",
)
def test_the_rehearsal_probes_predicts_measures_and_exports(tmp_path: Path) -> None:
    out = tmp_path / "check"
    command = [sys.executable, str(ROOT / "benchmarks" / "accelerator_check.py"), "--cpu-only",
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
    probes = exchange.read_csv(out / "probes.csv")
    assert {r.backend for r in probes} == {"jax"} and len(probes) == 4 * 2 * 2
    measured = exchange.read_csv(out / "measured.csv")
    assert {r.metric for r in measured} == {"seconds_per_epoch", "seconds_total"}
    imported = CliRunner().invoke(cli, ["import", str(out / "probes.csv"), "--replace"])
    assert imported.exit_code == 0, imported.output
    assert "imported 4 probe result(s)" in imported.output
