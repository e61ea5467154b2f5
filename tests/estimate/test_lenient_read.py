"""The forgiving exchange reader: assumed batch sizes, skipped rows with file:line, --strict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import cli
from advisor.errors import UsageError
from advisor.workloads import zoo
from probes import exchange

HEADER = "source,workload,device,vcpus,cpu_family,software,precision,batch_size,epochs,metric,value,notes\n"
THROUGHPUT = HEADER + (
    "lab,resnet50,V100,,,tensorflow-2.21,fp32,,,samples_per_second,360,\n"
    "lab,resnet50,K80,,,tensorflow-2.21,fp32,,,samples_per_second,52,\n"
    "lab,resnet50,A100,,,tensorflow-2.21,fp32,64,,samples_per_second,700,\n"
)
GARBAGE = "lab,resnet50,T4,,,tensorflow-2.21,fp32,64,,samples_per_second,fast,\n"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "published.csv"
    path.write_text(text)
    return path


def test_the_lenient_reader_assumes_the_zoo_batch_size(tmp_path: Path) -> None:
    rows, problems = exchange.read_csv(write(tmp_path, THROUGHPUT), strict=False)
    assert problems == []
    assert [row.batch_size for row in rows[:2]] == [zoo.get("resnet50").batch_size] * 2
    assert [row.assumed for row in rows] == [("batch_size",), ("batch_size",), ()]


def test_the_strict_reader_still_refuses_an_empty_batch_size(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"published.csv:2: batch_size is empty"):
        exchange.read_csv(write(tmp_path, THROUGHPUT))


def test_a_bad_row_is_skipped_with_its_file_and_line(tmp_path: Path) -> None:
    path = write(
        tmp_path, THROUGHPUT + GARBAGE + "lab,mystery,V100,,,tf,fp32,,,samples_per_second,1,\n"
    )
    rows, problems = exchange.read_csv(path, strict=False)
    assert len(rows) == 3
    assert [p.line for p in problems] == [f"{path}:5", f"{path}:6"]
    assert "not a number" in problems[0].reason and "no default" in problems[1].reason


def test_validate_accepts_an_empty_batch_size_and_reports_the_assumption(tmp_path: Path) -> None:
    path = write(tmp_path, THROUGHPUT)
    result = CliRunner().invoke(cli, ["validate", "--reference", str(path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["assumed"] == 2 and report["n_pairs"] == 6
    assert report["assumed_rows"][0]["line"] == f"{path}:2"
    table = CliRunner().invoke(cli, ["validate", "--reference", str(path)])
    assert table.exit_code == 0 and "assumed: 2" in table.output


def test_validate_skips_a_garbage_row_and_validates_the_rest(tmp_path: Path) -> None:
    path = write(tmp_path, THROUGHPUT + GARBAGE)
    result = CliRunner().invoke(cli, ["validate", "--reference", str(path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["n_pairs"] == 6
    assert report["skipped_rows"] == [
        {"line": f"{path}:5", "reason": "value 'fast' is not a number"}
    ]
    table = CliRunner().invoke(cli, ["validate", "--reference", str(path)])
    assert f"skipped {path}:5" in table.output


def test_strict_validate_stops_at_the_first_bad_row(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + THROUGHPUT.splitlines()[3] + "\n" + GARBAGE)
    result = CliRunner().invoke(cli, ["validate", "--reference", str(path), "--strict"])
    assert result.exit_code == 2
    assert f"{path}:3" in result.output and len(result.output.strip().splitlines()) == 1
