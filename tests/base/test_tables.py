"""Every table the command line prints fits the terminal: its columns in order of importance,
each whole, the ones left out said in one line (``advisor.cli.output``)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from rich.console import Console

from advisor.cli import cli, output
from advisor.workloads import llm, zoo


def at_width(monkeypatch: pytest.MonkeyPatch, width: int, *args: str) -> list[str]:
    monkeypatch.setattr(output, "console", lambda: Console(width=width, color_system=None))
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output.rstrip("\n").split("\n")


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_models_tables_fit_and_cut_no_cell(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    lines = at_width(monkeypatch, width, "models")
    table_lines = [line for line in lines if not line.startswith("hidden at ")]
    assert all(len(line) <= width for line in table_lines), max(table_lines, key=len)
    text = "\n".join(lines)
    for workload in zoo.WORKLOADS:  # every id whole, on a line of its own
        assert any(line.split()[:1] == [workload.id] for line in lines), workload.id
    for model in llm.models().values():
        assert any(line.split()[:1] == [model.id] for line in lines), model.id
    assert "670k" in text and "8.0B" in text  # counts for people
    hidden = [line for line in lines if line.startswith(f"hidden at {width} columns: ")]
    assert hidden and "(--json shows all)" in hidden[0]  # the zoo's titles do not fit 120


def test_a_wide_terminal_hides_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = at_width(monkeypatch, 400, "models")
    assert not any(line.startswith("hidden at ") for line in lines)
    assert any("GPT-2 medium (355M) causal LM, OpenWebText 1 epoch" in line for line in lines)


def test_the_price_list_keeps_the_price_at_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = at_width(monkeypatch, 80, "prices", "list", "--accelerator", "a100", "--spot")
    header = next(line for line in lines if line.split()[:1] == ["provider"])
    assert header.split()[:7] == ["provider", "region", "instance", "accel", "n", "pricing", "$/h"]
    assert all(len(line) <= 80 for line in lines if not line.startswith("hidden at "))
    assert any("a2-highgpu-1g" in line.split() for line in lines)  # whole, never cut
