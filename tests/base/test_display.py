"""Golden readings of durations, money and untrusted names (``advisor.display``)."""

from __future__ import annotations

import math

import pytest
from rich.console import Console
from rich.table import Table

from advisor import display


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.0087, "8.7 ms"), (0.042, "42 ms"), (0.42, "420 ms"), (0, "0 s"), (4.25, "4.2 s"), (42, "42 s"), (89, "89 s"),
     (145, "2.4 min"), (1020, "17 min"), (5_000, "83 min"), (14_800, "4.1 h"), (28_800, "8 h"),
     (61_200, "17 h"), (200_000, "2.3 d"), (3_000_000, "35 d"), (math.inf, "never")],
)  # fmt: skip
def test_duration(seconds: float, text: str) -> None:
    assert display.duration(seconds) == text


@pytest.mark.parametrize(
    ("low", "high", "text"),
    [(145, 276, "2.4-4.6 min"), (24, 66, "24-66 s"), (24, 100, "0.40-1.7 min"), (14_760, 17_640, "4.1-4.9 h"),
     (30, 45, "30-45 s"), (240, 474, "4.0-7.9 min"), (60, math.inf, "60 s-never"), (math.inf, math.inf, "never"),
     (60, 60.2, "60 s")],
)  # fmt: skip
def test_duration_span(low: float, high: float, text: str) -> None:
    assert display.duration_span(low, high) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(0, "$0.00"), (0.00004, "<$0.0001"), (0.0019, "$0.0019"), (0.00366, "$0.0037"),
     (0.018, "$0.018"), (0.1779, "$0.18"), (0.996, "$1.00"), (12.5, "$12.50"),
     (1234.5, "$1,234.50"), (-0.5, "-$0.50"), (math.inf, "never")],
)  # fmt: skip
def test_money(value: float, text: str) -> None:
    assert display.money(value) == text


def test_money_never_rounds_to_nothing() -> None:
    assert display.money(0.003, floor=0.01) == "<$0.01"
    assert display.money(0.0030) != "$0.00"
    assert display.money_span(0.0019, 0.0037) == "$0.0019-$0.0037"


def test_a_span_whose_ends_read_the_same_is_one_figure() -> None:
    """A minimum charge bills p50 and p90 alike: ``$0.020``, not ``$0.020-$0.020``."""
    assert display.money_span(0.0201, 0.0203) == "$0.020"
    assert display.money_span(0.0201, math.inf) == "$0.020-never"


@pytest.mark.parametrize(
    ("value", "text"), [(0.048, "0.048"), (0.1779, "0.178"), (32.77, "32.8"), (0.00018, "0.00018"),
                        (1234.5, "1,234")],
)  # fmt: skip
def test_rate(value: float, text: str) -> None:
    assert display.rate(value) == text


@pytest.mark.parametrize(
    ("p", "text"), [(1.0, "100%"), (0.999, ">99%"), (0.9, "90%"), (0.004, "<1%"), (0.0, "0%")]
)
def test_chance(p: float, text: str) -> None:
    assert display.chance(p) == text


HOSTILE = "us-east-1\x1b]0;owned\x07\x1b[2J[link=https://evil.example]click[/link]\x9b31m"


def test_plain_strips_control_characters() -> None:
    text = display.plain(HOSTILE)
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert text.startswith("us-east-1")


def test_safe_text_renders_markup_literally() -> None:
    console = Console(width=200, record=True, force_terminal=False, color_system=None)
    table = Table("where")
    table.add_row(display.safe_text(HOSTILE))
    console.print(table)
    console.print(display.escape(HOSTILE))
    out = console.export_text()
    assert "[link=https://evil.example]click[/link]" in out
    assert "\x1b" not in out


@pytest.mark.parametrize(
    ("args", "text"),
    [(("g4dn.xlarge", "T4", 1, 4.0), "g4dn.xlarge (T4)"),
     (("p3.8xlarge", "V100", 4, 32.0), "p3.8xlarge (V100 x4)"),
     (("n1-standard-4", None, 0, 4.0), "n1-standard-4 (4 vCPU)"),
     (("tpu-v5litepod-1", "tpu-v5litepod-1", 1, None), "tpu-v5litepod-1"),
     ((None, "T4", 2, None), "T4 x2"),
     (("x\x1b[2J", "T4", 1, None), "x\\x1b[2J (T4)")],
)  # fmt: skip
def test_machine_label_keeps_the_essentials(args: tuple, text: str) -> None:  # type: ignore[type-arg]
    assert display.machine_label(*args) == text


def test_ratio_about_and_ranks() -> None:
    assert [display.ratio(v) for v in (1.234, 3.5, 14.2, 0.0, math.inf)] == [
        "1.2x", "3.5x", "14x", "-", "-"
    ]  # fmt: skip
    assert display.about(2040) == "~34 min" and display.about(math.inf) == "never"
    assert display.ranks([2, 4, 5, 6, 7, 8, 10]) == "#2, #4-#8, #10"
    assert display.ranks([3]) == "#3" and display.ranks([5, 4]) == "#4-#5"
