"""The published multi-device runs: their strict reader, and the scaling they hold the model to."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from advisor.errors import UsageError
from advisor.estimate import Target, catalog, predict
from advisor.fitting.published import SCALING_COLUMNS, ScalingRow, read_scaling
from advisor.locations import shipped
from tests.estimate.test_probes import probe

HEADER = ",".join(SCALING_COLUMNS)
GOOD = 'dle,resnet50,A100,8,1,pytorch-1.9-ngc-21.03,fp16,256,samples_per_second,16621,"a note"'


def test_the_shipped_runs_read_with_their_global_batch() -> None:
    runs = read_scaling(shipped("scaling-published.csv"))
    assert len(runs) > 300
    eight = next(r for r in runs if r.devices == 8 and r.row.workload == "resnet50")
    assert eight.row.batch_size == 8 * eight.batch_per_device
    assert {r.nodes for r in runs} >= {1, 2, 4, 8, 16, 32}


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (GOOD.replace(",8,1,", ",0,1,"), "devices must be positive"),
        (GOOD.replace(",8,1,", ",8,9,"), "9 nodes of 8 devices"),
        (GOOD.replace(",8,1,", ",99999,1,"), "at most 65,536 devices"),
        (GOOD.replace(",16621,", ",nan,"), "value must be positive and finite"),
        (GOOD.replace(",16621,", ",-3,"), "value must be positive and finite"),
        (GOOD.replace(",256,", ",1e3,"), "batch_per_device '1e3' is not a whole number"),
        (GOOD.replace(",fp16,", ",int4,"), "unknown precision"),
        (GOOD.replace("samples_per_second", "seconds_total"), "must be samples_per_second"),
    ],
)
def test_a_bad_run_is_one_error_naming_its_line(tmp_path: Path, line: str, said: str) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(f"{HEADER}\n{GOOD}\n{line}\n", encoding="utf-8")
    with pytest.raises(UsageError, match=said) as error:
        read_scaling(path)
    assert f"{path}:3" in str(error.value)


def test_a_file_of_another_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("source,workload\nx,y\n", encoding="utf-8")
    with pytest.raises(UsageError, match="the header is not"):
        read_scaling(path)


def test_nvidias_one_node_resnet50_scaling_is_predicted_within_15_points() -> None:
    """NVIDIA's DeepLearningExamples tables (1 to 8 GPUs of a DGX, one per-GPU batch): the
    predicted scaling efficiency of each run against its table's one-GPU run."""
    runs = [
        r
        for r in read_scaling(shipped("scaling-published.csv"))
        if r.row.source.startswith("nvidia-dle-rn50") and r.nodes == 1
    ]
    p = probe("resnet50", 2.0)

    def rate(run_devices: int, run: ScalingRow) -> float:
        row = run.row
        result = predict(
            p, Target(row.device, run_devices), precision=row.precision, stack=row.stack,
            global_batch=row.batch_size,
        )  # fmt: skip
        return float(row.batch_size / result.step_seconds)

    points = []
    for run in runs:
        base = next(
            b
            for b in runs
            if b.devices == 1
            and (b.row.source, b.row.precision, b.row.software, b.batch_per_device)
            == (run.row.source, run.row.precision, run.row.software, run.batch_per_device)
        )
        if run.devices == 1:
            continue
        published = run.row.value / base.row.value / run.devices
        predicted = rate(run.devices, run) / rate(1, base) / run.devices
        assert predicted <= 1.0 + 1e-9  # more devices never scale past linear
        points.append(100 * abs(predicted - published))
    assert len(points) >= 20
    assert statistics.median(points) <= 15 and max(points) <= 25


def test_goyals_256_p100s_over_ethernet_scale_as_published() -> None:
    """Goyal et al. 2017 trained ResNet-50 on 8 P100s of one Big Basin server and on 32 of them
    over 50 Gbit Ethernet at 0.91 of linear: the prediction over the published network holds
    within the issue's 25 points beyond eight GPUs, and below linear."""
    runs = [
        r
        for r in read_scaling(shipped("scaling-published.csv"))
        if r.row.source.startswith("goyal-2017")
    ]
    one, many = sorted(runs, key=lambda r: r.devices)
    assert (one.devices, one.nodes, many.devices, many.nodes) == (8, 1, 256, 32)
    network = catalog.node_network("facebook", "big-basin")
    assert network == 50
    p = probe("resnet50", 2.0)

    def rate(run: ScalingRow) -> float:
        target = Target(
            run.row.device, run.devices // run.nodes, nodes=run.nodes,
            network_gbps=network if run.nodes > 1 else 0.0,
        )  # fmt: skip
        result = predict(p, target, precision="fp32", global_batch=run.row.batch_size)
        return float(run.row.batch_size / result.step_seconds)

    published = many.row.value / one.row.value / 32
    predicted = rate(many) / rate(one) / 32
    assert 0.9 <= published <= 0.91
    assert predicted < 1.0 and abs(predicted - published) <= 0.25
