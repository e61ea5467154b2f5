"""benchmarks/gpu/conv_layers.py: the zoo's convolutions, each timed alone for a GPU session. The
shapes file adds up to the FLOPs the device model counts; the timing runs real JAX gradients
(here on the CPU, two shapes) and the report weighs a workload's layers by their FLOPs. The
script runs as its user runs it, in a process of its own: no test imports a benchmark."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.estimate.steps import facts_of
from advisor.workloads import zoo

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu" / "conv_layers.py"
SHAPES = ROOT / "benchmarks" / "gpu" / "conv_layers_zoo.json"
TRAINING_CONVOLUTIONS = 3
"""A training step's convolutions of a layer: forward, backward to the input, to the filter."""


def conv_layers(*argv: str) -> subprocess.CompletedProcess[str]:
    """``benchmarks/gpu/conv_layers.py ARGV`` in a process of its own."""
    return subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True,
                          check=False)  # fmt: skip


def test_the_shipped_shapes_add_up_to_the_convolution_flops_the_model_counts() -> None:
    layers = json.loads(SHAPES.read_text())
    convnets = [w.id for w in zoo.WORKLOADS if w.conv_share > 0]
    assert {layer["workload"] for layer in layers} == set(convnets)
    assert sum(layer["workload"] == "vgg16" for layer in layers) == 13
    for workload in convnets:
        counted = TRAINING_CONVOLUTIONS * sum(
            layer["forward_flops"] for layer in layers if layer["workload"] == workload
        )
        facts = facts_of(zoo.get(workload))
        assert counted == pytest.approx(facts.flops_per_sample * facts.conv_share, rel=0.05)
    key = ("h", "w", "c", "k", "r", "s", "stride", "padding")
    distinct = {tuple(layer[name] for name in key) for layer in layers}
    assert len(distinct) < len(layers) / 3  # ResNets repeat their blocks


@pytest.mark.jax
def test_two_shapes_timed_under_jax_and_reported(tmp_path: Path) -> None:
    out = tmp_path / "timed.jsonl"
    argv = ["time", "--batch", "1", "--dtype", "float32", "--reps", "1", "--limit", "2"]
    timed = conv_layers(*argv, "--out", str(out))
    assert timed.returncode == 0, timed.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and all(row["seconds"] > 0 and row["tflops"] > 0 for row in rows)
    layers = json.loads(SHAPES.read_text())
    flops = 3 * sum(la["forward_flops"] for la in layers if la["workload"] == "mnist_cnn")
    spent = sum(row["seconds"] for row in rows)  # batch 1
    reported = conv_layers("report", str(out), "--peak-tflops", "1")
    assert reported.returncode == 0, reported.stderr
    # mnist_cnn's two convolutions are the first two shapes: it alone is reported
    assert [line.split()[0] for line in reported.stdout.splitlines()] == ["mnist_cnn"]
    words = reported.stdout.split()
    rate = flops / spent / 1e12  # printed to 2 decimals, and as a share of a 1 TFLOP/s peak to 3
    assert math.isclose(float(words[words.index("TFLOP/s") - 1]), rate, abs_tol=0.006)
    assert math.isclose(float(words[words.index("of") - 1]), rate, abs_tol=0.0006)


@pytest.mark.parametrize(
    "line",
    [
        '{"h": 28, "seconds": ',  # cut short
        '{"h": 28, "seconds": 0, "batch": 1}',  # no time
        '{"h": 28, "seconds": NaN, "batch": 1}',
        '{"h": 28, "seconds": 0.1, "batch": 0}',
        "[1, 2]",  # no row at all
    ],
)
def test_a_damaged_timing_file_is_one_line_and_exit_1(line: str, tmp_path: Path) -> None:
    bad = tmp_path / "timed.jsonl"
    bad.write_text(line + "\n")
    done = conv_layers("report", str(bad))
    assert done.returncode == 1
    assert done.stderr.startswith("conv_layers: ") and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "text",
    [
        "{}",  # no list
        "[1]",  # no layer
        '[{"workload": "x", "h": -1, "w": 4, "c": 1, "k": 1, "r": 1, "s": 1, "stride": 1,'
        ' "padding": "SAME", "forward_flops": 1}]',
        '[{"workload": "x", "h": 4, "w": 4, "c": 1, "k": 1, "r": 1, "s": 1, "stride": 1,'
        ' "padding": "SAME", "forward_flops": NaN}]',
        '[{"workload": "x", "h": 1e9, "w": 4, "c": 1, "k": 1, "r": 1, "s": 1, "stride": 1,'
        ' "padding": "SAME", "forward_flops": 1}]',
        '[{"workload": "x", "h": 4, "w": 4, "c": 1, "k": 1, "r": 1, "s": 1, "stride": 1,'
        ' "padding": "import os", "forward_flops": 1}]',
    ],
)
def test_a_hostile_shapes_file_is_one_line_and_exit_1(text: str, tmp_path: Path) -> None:
    shapes = tmp_path / "shapes.json"
    shapes.write_text(text)
    out = tmp_path / "timed.jsonl"
    done = conv_layers("time", "--shapes", str(shapes), "--batch", "1", "--reps", "1",
                       "--out", str(out))  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith("conv_layers: ") and len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_the_shipped_shapes_pass_their_own_check(tmp_path: Path) -> None:
    """A report reads the shapes file through its check: the shipped one passes (no timings,
    nothing reported, exit 0)."""
    empty = tmp_path / "t.jsonl"
    empty.write_text("")
    done = conv_layers("report", str(empty), "--shapes", str(SHAPES))
    assert done.returncode == 0 and done.stdout == "", done.stderr


@pytest.mark.parametrize("option", [["--batch", "0"], ["--batch", "99999999"], ["--reps=-1"]])
def test_a_bad_option_is_a_usage_error(option: list[str], tmp_path: Path) -> None:
    done = conv_layers("time", *option, "--out", str(tmp_path / "t.jsonl"))
    assert done.returncode == 2
    assert "error: --batch (up to 65536)" in done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("peak", ["nan", "inf", "-5"])
def test_a_peak_that_is_no_number_is_a_usage_error(peak: str, tmp_path: Path) -> None:
    """``report --peak-tflops`` takes a finite peak, 0 or more: NaN, infinity or a negative
    peak would print shares of no meaning."""
    timed = tmp_path / "t.jsonl"
    timed.write_text("")
    done = conv_layers("report", str(timed), f"--peak-tflops={peak}")
    assert done.returncode == 2
    assert "error: --peak-tflops must be a finite number" in done.stderr.splitlines()[-1]
