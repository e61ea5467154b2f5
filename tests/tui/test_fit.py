"""The app on one screen at 100x30 and 120x40: the answer above the options, every form label
and placeholder whole, every shown column whole, and the columns that did not fit said.

Read off what the terminal shows (the screen rendered as text), not off widget state alone: a
label can be whole in its widget and cut by the pane around it.
"""

from __future__ import annotations

import asyncio

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Label

from advisor.recommend import columns
from advisor.tui.app import AdvisorApp, make_app
from advisor.tui.form import FormState
from advisor.tui.results import ResultsTable
from probes.result import Fingerprint
from tests.tui.test_tui import fixed_device, ranked, screen_text, stored_probe, until

__all__ = ["fixed_device"]  # the fixture, used by name

SIZES = ((100, 30), (120, 40))


def shown(app: AdvisorApp, size: tuple[int, int]) -> list[str]:
    lines: list[str] = []

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: ranked(app))
            await settle(pilot)
            lines.extend(screen_text(app))

    asyncio.run(main())
    return lines


async def settle(pilot: Pilot) -> None:
    await pilot.pause(0.2)


@pytest.mark.parametrize("size", SIZES)
def test_every_form_label_and_placeholder_is_whole(fixed_device: Fingerprint, size) -> None:  # type: ignore[no-untyped-def]
    stored_probe()
    app = make_app()
    texts: list[str] = []
    lines: list[str] = []

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: ranked(app))
            await settle(pilot)
            form = app.query_one("#form")
            # what is on show: an LLM's fields stay hidden for the zoo's default workload
            texts.extend(
                str(label.render())
                for label in form.query(Label)
                if all(node.display for node in label.ancestors_with_self)
            )
            texts.extend(
                i.placeholder
                for i in form.query(Input)
                if i.placeholder and not i.value and all(n.display for n in i.ancestors_with_self)
            )
            texts.append("cheapest in time")  # the objective's choice on show
            lines.extend(line[: form.region.width] for line in screen_text(app))

    asyncio.run(main())
    assert len(texts) >= 12
    for text in texts:
        assert any(text in line for line in lines), (text, lines)


@pytest.mark.parametrize("size", SIZES)
def test_every_shown_column_is_whole_and_the_rest_are_said(
    fixed_device: Fingerprint,
    size,  # type: ignore[no-untyped-def]
) -> None:
    stored_probe()
    app = make_app()
    fits: list[columns.Fit] = []
    rows: list[list[str]] = []
    lines: list[str] = []

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: ranked(app))
            await settle(pilot)
            table = app.query_one(ResultsTable)
            assert table.fit is not None
            fits.append(table.fit)
            rec = app.rec
            assert rec is not None
            for option in rec.options[:5]:
                rows.append([c.cell(option) for c in table.fit.shown])
            lines.extend(screen_text(app))

    asyncio.run(main())
    fit = fits[0]
    keys = [c.key for c in fit.shown]
    assert keys[:3] == ["rank", "where", "machine"] or keys[:2] == ["rank", "machine"]
    assert {"machine", "pricing", "cost"} <= set(keys)
    # the header and the first options, each on one line, every cell whole
    header = next(line for line in lines if " machine " in line and " cost" in line)
    assert all(c.header in header for c in fit.shown)
    for cells in rows:
        line = next(line for line in lines if f"\u258e{cells[0]} " in line)
        at = 0
        for cell in cells:
            at = line.index(cell, at) + len(cell)  # in order, whole
    said = [line for line in lines if "\u258e hidden here: " in line]
    if fit.left_out:
        assert len(said) == 1 and all(f" {name}" in said[0] for name in fit.left_out)
    else:
        assert not said
    # the answer in words above the table
    best = next(i for i, line in enumerate(lines) if "Best: " in line)
    assert best < lines.index(header)


def test_at_100_columns_the_answer_time_and_cost_show(fixed_device: Fingerprint) -> None:
    stored_probe()
    lines = shown(make_app(FormState(on_demand=False)), (100, 30))  # spot only: its marks
    right = [line.split("\u258e", 1)[-1] for line in lines]  # the results pane, not the form
    text = " ".join(" ".join(right).split())
    assert "Time: " in text and "waiting for a spot VM" in text and "Here: this machine" in text
    assert "within the prediction's uncertainty of #1" in text  # the ties, not clipped
    header = next(line for line in lines if " machine " in line)
    assert " time " in header and " cost" in header
    assert "stand-in spot risk" in text
