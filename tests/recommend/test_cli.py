"""``advisor recommend`` on the command line: usage errors, and the three output formats."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from advisor.cli import cli
from advisor.cli.recommend import show, write_emit
from advisor.cli.recommendation_table import render_recommendation
from advisor.errors import UsageError
from advisor.estimate.prediction import Prediction, Target
from advisor.recommend.ranker import recommend
from advisor.recommend.recommendation import Constraints, Recommendation
from advisor.recommend.report import OPTION_KEYS
from pricing.offers import BillingRule, Rentable, group_offers

T4 = Rentable(
    "aws", "us-east-1", None, "g4dn.xlarge", 4.0, 16.0, None, "T4", 1, 16.0, "on_demand",
    0.526, 0.526, 0.0, 0.0, "2025-01-01", "test",
)  # fmt: skip
T4_SPOT = T4._replace(pricing="spot", usd_per_hour=0.1845, interruptions_per_hour=0.05)
CPU = T4._replace(instance_type="c5.4xlarge", accelerator=None, accelerator_count=0, vcpus=16.0)
RULES = {("aws", "spot"): BillingRule("aws", "spot", 1, 60, None, 120, 0.05, "AWS")}


def predict(target: Target) -> Prediction:
    return Prediction((4.0 if target.accelerator else 10.0) * 3600, 0.15)


def sample(hours: float = 8) -> Recommendation:
    return recommend(
        group_offers([T4, T4_SPOT, CPU]),
        predict,
        RULES,
        workload="imdb_bilstm",
        constraints=Constraints(deadline_seconds=hours * 3600),
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--deadline", "8 hours"], "1h30m"),
        (["--deadline", "0h"], "longer than zero"),
        (["--emit", "terraform", "x.tf"], "only 'skypilot'"),
        (["--accelerator", "T4", "--cpu-only"], "exclude each other"),
        (["--confidence", "1.5"], "--confidence"),
        (["--objective", "slowest"], "--objective"),
        (["--budget", "-3"], "--budget"),
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str], says: str) -> None:
    result = CliRunner().invoke(cli, ["recommend", "--model", "lstm", *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("advisor: error:")
    assert says in lines[0]


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    show(sample(), "json")
    payload = json.loads(capsys.readouterr().out)
    assert payload["deadline_hours"] == 8.0
    assert payload["options"][0]["instance_type"] == "g4dn.xlarge"
    assert payload["options"][0]["pricing"] == "spot"
    assert set(OPTION_KEYS) <= set(payload["fastest"])


def test_csv_output(capsys: pytest.CaptureFixture[str]) -> None:
    show(sample(), "csv")
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 3
    assert set(OPTION_KEYS) <= set(rows[0])
    assert [row["rank"] for row in rows] == ["1", "2", "3"]
    assert rows[2]["meets_deadline"] == "False"


def test_table_output_with_explanation(capsys: pytest.CaptureFixture[str]) -> None:
    show(sample(), "table", explain=True, pareto=True)
    out = capsys.readouterr().out
    assert "g4dn.xlarge" in out and "c5.4xlarge" in out
    assert "cheapest on-demand" in out and "fastest" in out
    assert "Cost/time frontier" in out
    assert "Billing:" in out and "Preemption:" in out


def test_table_says_when_nothing_is_feasible() -> None:
    console = Console(record=True, width=200)
    for part in render_recommendation(sample(hours=1)):
        console.print(part)
    text = console.export_text()
    assert "No option finishes within 60 min" in text
    assert "would be met" in text


def test_emit_skypilot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "task.yaml"
    write_emit(sample(), str(target))
    text = target.read_text()
    assert "instance_type: g4dn.xlarge" in text and "use_spot: true" in text
    assert "wrote SkyPilot task" in capsys.readouterr().err
    with pytest.raises(UsageError, match="--force"):
        write_emit(sample(), str(target))
    write_emit(sample(), str(target), force=True)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--model", "resnet50", "--max-nodes", "33"], "33 must be <= 32"),
        (["--model", "resnet50", "--global-batch", "0"], "0 must be >= 1"),
        (["--model", "llama3-8b", "--tokens", "1M", "--global-batch", "64"], "--global-batch is"),
    ],
)
def test_many_device_options_out_of_range_are_usage_errors(arguments: list[str], said: str) -> None:
    result = CliRunner().invoke(cli, ["recommend", *arguments, "--deadline", "8h"])
    assert result.exit_code == 2 and said in result.output
