"""``advisor recommend`` into a pipe or a log: the table is never cut, and a price catalog's
names cannot drive the terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from rich.console import Console

from advisor.cli.recommendation_table import render_explanation, render_recommendation
from tests.recommend.test_cli import T4, sample
from tests.recommend.test_service import stored_mlp_probe


def test_a_piped_recommend_is_never_cut() -> None:
    stored_mlp_probe()
    env = {**os.environ, "COLUMNS": "80"}
    out = subprocess.run(
        [sys.executable, "-m", "advisor", "recommend", "--model", "mlp", "--deadline", "8h",
         "--pareto", "--explain"],
        capture_output=True, text=True, env=env, check=True, timeout=120,
    )  # fmt: skip
    assert "…" not in out.stdout
    assert "n1-standard-4" in out.stdout or "g4dn.xlarge" in out.stdout
    assert not re.search(r"\$0\.00(?!\d)", out.stdout)
    assert "tensorflow" not in out.stderr.lower()


HOSTILE_REGION = "us-east-1\x1b]0;owned\x07\x1b[2J[link=https://evil.example]x[/link]"


def test_hostile_catalog_strings_print_literally() -> None:
    rec = sample()
    hostile = sample().options[0].rentable._replace(region=HOSTILE_REGION)
    option = rec.options[0]
    object.__setattr__(option, "rentable", hostile)
    console = Console(width=300, record=True, color_system=None, force_terminal=False)
    for part in render_recommendation(rec, pareto=True):
        console.print(part)
    console.print(render_explanation(rec, option))
    text = console.export_text()
    assert "\x1b" not in text and "\x07" not in text
    assert "[link=https://evil.example]x[/link]" in text
    assert T4.provider in text


def test_emit_tables_print_catalog_strings_literally(capsys) -> None:  # type: ignore[no-untyped-def]
    from advisor.cli import output

    output.emit([{"region": HOSTILE_REGION, "usd_per_hour": 0.00018}], "table", title="[b]x")
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\x07" not in text
    assert "[link=https://evil.example]x[/link]" in text and "[b]x" in text
    assert "0.00018" in text
