"""advisor/fitting/derive/mlperf_tpu.py reads MLPerf's ``:::MLL`` result logs: a run's steady rate
is the median of its four-epoch blocks after the first. The logs here are written in the layout
of ``Google/results/tpu-v3-32/resnet/result_0.txt`` (mlcommons/training_results_v0.6), a real
git repository of them made in a temporary folder."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path

import pytest

import advisor.fitting.derive.mlperf_tpu as mlperf_tpu_extract

IMAGES = 1_281_167


def _line(stamp: float, key: str, value: object = None, **metadata: object) -> str:
    blob = {"value": value, "metadata": {"lineno": 0, "file": "resnet_main.py", **metadata}}
    return f":::MLL {stamp:.3f} {key}: {json.dumps(blob)}"


def _log(block_seconds: list[float], batch: int = 4096) -> str:
    lines = [
        _line(0.0, "global_batch_size", batch),
        _line(1.0, "num_train_examples", IMAGES),
    ]
    now = 100.0
    for block, seconds in enumerate(block_seconds):
        first = 4 * (block + 1)
        lines.append(_line(now, "block_start", first_epoch_num=first, epoch_count=4))
        now += seconds
        lines.append(_line(now, "eval_accuracy", 0.5, epoch_num=first))
        lines.append(_line(now, "block_stop", first_epoch_num=first))
    return "\n".join(lines) + "\n"


def test_a_run_is_its_median_block_after_the_first() -> None:
    rate, batch, blocks = mlperf_tpu_extract.steady_rate(_log([90.0, 41.0, 40.0, 43.0]))
    assert (batch, blocks) == (4096, 3)
    assert rate == pytest.approx(4 * IMAGES / 41.0)


def test_a_run_without_steady_blocks_is_refused() -> None:
    with pytest.raises(ValueError, match="fewer than two blocks"):
        mlperf_tpu_extract.steady_rate(_log([90.0]))


@pytest.mark.parametrize(
    "bad",
    [
        ":::MLL 5.0 block_stop: 7\n",  # a value that is no object
        _line(5.0, "block_stop", first_epoch_num=4),  # a block that never started
        _line(5.0, "block_start", first_epoch_num=4, epoch_count="NaN")
        + "\n"
        + _line(5.0, "block_stop", first_epoch_num=4),
        _line(5.0, "block_start", first_epoch_num=4, epoch_count=4)
        + "\n"
        + _line(5.0, "block_stop", first_epoch_num=4),  # no time at all
        ":::MLL 5.0 global_batch_size: {not json\n",
    ],
)
def test_a_hostile_log_is_one_error_naming_its_line(bad: str) -> None:
    with pytest.raises(ValueError, match=r"line \d+: not an MLPerf log line"):
        mlperf_tpu_extract.steady_rate(_log([90.0, 41.0, 40.0]) + bad)


def test_rows_from_a_repository_of_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "results"
    for name in mlperf_tpu_extract.SLICES:
        folder = repo / "Google" / "results" / name / "resnet"
        folder.mkdir(parents=True)
        for run in range(mlperf_tpu_extract.RUNS):
            blocks = [80.0, 40.0 + run, 40.0 + run, 40.0 + run]
            (folder / f"result_{run}.txt").write_text(_log(blocks, batch=16384))
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "logs"], check=True)

    assert mlperf_tpu_extract.main([str(repo)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["device"] for r in rows] == list(mlperf_tpu_extract.SLICES)
    assert {r["precision"] for r in rows} == {"bf16"} and {r["batch_size"] for r in rows} == {
        "16384"
    }
    assert float(rows[0]["value"]) == pytest.approx(4 * IMAGES / 42.0, abs=0.5)  # median of runs
    assert "runs' max/min 1.100" in rows[0]["notes"]


def test_not_a_repository_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert mlperf_tpu_extract.main([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mlperf_tpu_extract: ") and len(err.strip().splitlines()) == 1
