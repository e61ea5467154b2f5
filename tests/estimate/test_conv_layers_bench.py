"""benchmarks/conv_layers.py: the zoo's convolutions, each timed alone for a GPU session. The
shapes file adds up to the FLOPs the device model counts; the timing runs real JAX gradients
(here on the CPU, two shapes) and the report weighs a workload's layers by their FLOPs."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from advisor.estimate.steps import facts_of
from advisor.workloads import zoo

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import conv_layers


def test_the_shipped_shapes_add_up_to_the_convolution_flops_the_model_counts() -> None:
    layers = json.loads(conv_layers.SHAPES.read_text())
    assert {layer["workload"] for layer in layers} == set(conv_layers.CONVNETS)
    assert sum(layer["workload"] == "vgg16" for layer in layers) == 13
    for workload in conv_layers.CONVNETS:
        counted = conv_layers.TRAINING_CONVOLUTIONS * sum(
            layer["forward_flops"] for layer in layers if layer["workload"] == workload
        )
        facts = facts_of(zoo.get(workload))
        assert counted == pytest.approx(facts.flops_per_sample * facts.conv_share, rel=0.05)
    assert len(conv_layers.distinct(layers)) < len(layers) / 3  # ResNets repeat their blocks


@pytest.mark.jax
def test_two_shapes_timed_under_jax_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "timed.jsonl"
    argv = ["time", "--batch", "1", "--dtype", "float32", "--reps", "1", "--limit", "2"]
    assert conv_layers.main([*argv, "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and all(row["seconds"] > 0 and row["tflops"] > 0 for row in rows)
    layers = json.loads(conv_layers.SHAPES.read_text())
    found = conv_layers.report(layers, rows, peak_tflops=1.0)
    assert list(found) == ["mnist_cnn"]  # its two convolutions are the first two shapes
    flops = 3 * sum(la["forward_flops"] for la in layers if la["workload"] == "mnist_cnn")
    spent = sum(row["seconds"] for row in rows)  # batch 1
    assert found["mnist_cnn"]["tflops"] == pytest.approx(flops / spent / 1e12)
    assert math.isclose(found["mnist_cnn"]["peak_share"], found["mnist_cnn"]["tflops"])
    capsys.readouterr()
    assert conv_layers.main(["report", str(out), "--peak-tflops", "1"]) == 0
    assert capsys.readouterr().out.startswith("mnist_cnn")


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
def test_a_damaged_timing_file_is_one_line_and_exit_1(
    line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "timed.jsonl"
    bad.write_text(line + "\n")
    assert conv_layers.main(["report", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("conv_layers: ") and len(err.strip().splitlines()) == 1


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
def test_a_hostile_shapes_file_is_one_line_and_exit_1(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shapes = tmp_path / "shapes.json"
    shapes.write_text(text)
    out = tmp_path / "timed.jsonl"
    argv = ["time", "--shapes", str(shapes), "--batch", "1", "--reps", "1", "--out", str(out)]
    assert conv_layers.main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("conv_layers: ") and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_the_shipped_shapes_pass_their_own_check() -> None:
    assert conv_layers.read_shapes(conv_layers.SHAPES) == json.loads(conv_layers.SHAPES.read_text())


@pytest.mark.parametrize("option", [["--batch", "0"], ["--batch", "99999999"], ["--reps=-1"]])
def test_a_bad_option_is_a_usage_error(
    option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        conv_layers.main(["time", *option, "--out", str(tmp_path / "t.jsonl")])
    assert stopped.value.code == 2
    assert "error: --batch (up to 65536)" in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("peak", ["nan", "inf", "-5"])
def test_a_peak_that_is_no_number_is_a_usage_error(
    peak: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``report --peak-tflops`` takes a finite peak, 0 or more: NaN, infinity or a negative
    peak would print shares of no meaning."""
    timed = tmp_path / "t.jsonl"
    timed.write_text("")
    with pytest.raises(SystemExit) as stopped:
        conv_layers.main(["report", str(timed), f"--peak-tflops={peak}"])
    assert stopped.value.code == 2
    assert (
        "error: --peak-tflops must be a finite number" in capsys.readouterr().err.splitlines()[-1]
    )
