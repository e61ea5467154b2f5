"""How a recommendation looks on the command line: the answer in words, then one line per option.

The cells are short (``advisor.recommend.answer``); the detail behind them is in ``--explain``
and ``--json``. The table takes the columns that fit the console's width, most needed first, and
says which it left out: an option never spans two lines, and nothing is cut without a word.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from rich import box
from rich.table import Table
from rich.text import Text

from advisor import display
from advisor.bench.settle import tie_lines
from advisor.recommend import answer, cells
from advisor.recommend.recommendation import Option, Recommendation
from advisor.recommend.report import explain


class Column(NamedTuple):
    header: str
    cell: Callable[[Option], str]
    right: bool = False


COLUMNS = (
    Column("#", lambda o: str(o.rank) if o.rank else "", right=True),
    Column("where", cells.where),
    Column("machine", cells.machine),
    Column("pricing", cells.pricing),
    Column("$/h", lambda o: display.rate(o.rentable.usd_per_hour), right=True),
    Column("time", cells.time_span, right=True),
    Column("wait", cells.wait, right=True),
    Column("cost", cells.cost_span, right=True),
    Column("meet", lambda o: display.chance(o.outcome.p_meet), right=True),
)
"""Every column, in the order shown."""
LEFT_OUT_FIRST = ("$/h", "meet", "wait", "where", "time")
"""What a narrow console loses first (``#``, machine, pricing and cost always stay)."""
GAP = 1
"""Spaces between two columns (the box's divider)."""


def fitting(
    options: Sequence[Option], width: int | None, *, with_deadline: bool = True
) -> tuple[list[Column], list[str], int]:
    """The columns that fit ``width`` (None: all), the headers left out, and the width all
    would need."""
    waits = any(o.outcome.expected_wait_seconds >= 1 for o in options)
    columns = [
        c
        for c in COLUMNS
        if (with_deadline or c.header != "meet") and (waits or c.header != "wait")
    ]
    widths = {
        c.header: max([len(c.header), *(len(display.plain(c.cell(o))) for o in options)])
        for c in columns
    }

    def needed(shown: list[Column]) -> int:
        return sum(widths[c.header] for c in shown) + GAP * (len(shown) - 1)

    full = needed(columns)
    left_out: list[str] = []
    for header in LEFT_OUT_FIRST:
        if width is None or needed(columns) <= width:
            break
        if header in widths:
            columns = [c for c in columns if c.header != header]
            left_out.append(header)
    return columns, left_out, full


def render_options(
    options: Sequence[Option],
    *,
    title: str | None = None,
    with_deadline: bool = True,
    width: int | None = None,
) -> tuple[Table, list[str], int]:
    """The options, one line each, in the columns that fit ``width``; the headers left out and
    the width every column would need."""
    columns, left_out, full = fitting(options, width, with_deadline=with_deadline)
    table = Table(
        title=title,
        header_style="bold",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=0,
    )
    for c in columns:
        table.add_column(c.header, justify="right" if c.right else "left", no_wrap=True)
    for option in options:
        cells = [display.safe_text(c.cell(option)) for c in columns]
        table.add_row(*cells, style=None if option.feasible else "dim")
    return table, left_out, full


def legend(rec: Recommendation, options: Sequence[Option], shown: list[str]) -> list[str]:
    """What the columns mean, in a line, and the stand-in mark's meaning where one is shown."""
    parts = ["time, cost: p50-p90, billed"]
    if "wait" in shown and any(o.outcome.expected_wait_seconds >= 1 for o in options):
        parts.append("wait: expected wait for a spot VM, not billed")
    if "meet" in shown and rec.constraints.deadline_seconds:
        parts.append("meet: chance in time")
    lines = ["; ".join(parts)]
    if any(o.outcome.prediction.measured for o in options):
        lines.append(f"{cells.MEASURED} time measured on that machine (advisor bench)")
    note = cells.stand_in_note(options)
    return lines + ([note] if note else [])


def render_recommendation(
    rec: Recommendation, *, pareto: bool = False, width: int | None = None
) -> list[Table | Text]:
    """Everything ``advisor recommend`` prints as a table, in order, for a console ``width``
    columns wide (None: never narrowed)."""
    with_deadline = rec.constraints.deadline_seconds is not None
    style = "bold" if rec.feasible else "bold yellow"
    parts: list[Table | Text] = [display.safe_text("\n".join(answer.lines(rec)), style=style)]
    for line in tie_lines(rec):
        parts.append(display.safe_text(line, style="yellow"))
    table, left_out, full = render_options(rec.options, with_deadline=with_deadline, width=width)
    parts += [Text(""), table]
    shown = [c.header for c in table.columns]
    notes = legend(rec, rec.options, [str(h) for h in shown])
    if left_out:
        notes.append(
            f"left out at {width} columns: {', '.join(left_out)} ({full} needed); widen, or "
            "see --json"
        )
    parts.append(display.safe_text("\n".join(notes), style="dim"))
    if pareto and rec.pareto:
        front, _, _ = render_options(
            rec.pareto, title="Cost/time frontier", with_deadline=with_deadline, width=width
        )
        parts += [Text(""), front]
    if rec.excluded:
        count = sum(rec.excluded.values())
        parts.append(
            display.safe_text(
                f"left out: {count} offering{'s' * (count > 1)} this workload cannot run on "
                "(--explain says why)",
                style="dim",
            )
        )
    return parts


def render_explanation(rec: Recommendation, option: Option) -> Text:
    """``--explain``: the chosen option walked through."""
    return display.safe_text("\n".join(explain(rec, option)))
