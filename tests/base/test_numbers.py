"""Numbers on the command line: NaN, infinity and absurd sizes are one-line usage errors."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from advisor.cli import cli

HUGE = "99999999999999999999"


@pytest.mark.parametrize(
    "args",
    [
        ["recommend", "--model", "mlp", "--budget", "nan"],
        ["recommend", "--model", "mlp", "--budget", "inf"],
        ["recommend", "--model", "mlp", "--budget", "-inf"],
        ["recommend", "--model", "mlp", "--budget", "1e400"],
        ["recommend", "--model", "mlp", "--confidence", "nan"],
        ["recommend", "--model", "mlp", "--confidence", "1"],
        ["recommend", "--model", "mlp", "--epochs", HUGE],
        ["recommend", "--model", "mlp", "--samples", HUGE],
        ["recommend", "--model", "mlp", "--batch-size", "0"],
        ["recommend", "--model", "mlp", "--top", HUGE],
        ["recommend", "--model", "mlp", "--deadline", HUGE + "d"],
        ["recommend", "--model", "mlp", "--deadline", "9" * 5000 + "s"],
        ["prices", "--ttl-days", "nan"],
        ["prices", "--ttl-days", "inf"],
        ["prices", "list", "--max-price", "nan"],
        ["prices", "list", "--max-price", "-1"],
        ["prices", "list", "--limit", HUGE],
        ["prices", "list", "--limit", "0"],
        ["prices", "list", "--min-count", HUGE],
        ["probe", "--model", "mlp", "--budget", "nan"],
        ["probe", "--model", "mlp", "--epochs", "1" * 400],
        ["bench", "--model", "mlp", "--gpus", "T4", "--max-cost", "nan"],
        ["bench", "--model", "mlp", "--gpus", "T4", "--max-cost", "inf"],
        ["bench", "--model", "mlp", "--gpus", "T4", "--probe-seconds", "1e9"],
        ["bench", "--model", "mlp", "--gpus", "T4", "--epochs", HUGE],
    ],
)
def test_bad_numbers_are_one_line_usage_errors(args: list[str]) -> None:
    outcome = CliRunner().invoke(cli, args)
    assert outcome.exit_code == 2, outcome.output
    err = outcome.stderr.strip()
    assert err.startswith("advisor: error: ") and len(err.splitlines()) == 1
    assert len(err) < 400


def test_prices_json_is_strict(tmp_path: object) -> None:
    outcome = CliRunner().invoke(cli, ["prices", "list", "--limit", "3", "--json"])
    assert outcome.exit_code == 0, outcome.stderr
    assert "NaN" not in outcome.stdout and "Infinity" not in outcome.stdout
