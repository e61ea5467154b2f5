"""The options table's columns, for the command line and the app alike: what each shows, in
which order, which a narrow screen leaves out first, and the lines that say what they mean.

An option is one line: a column that does not fit is left out whole, in ``LEFT_OUT_FIRST``
order, and ``left_out_line`` says which and how much wider the screen must be; a cell is
never cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from advisor import display
from advisor.recommend import cells
from advisor.recommend.recommendation import Option, Recommendation


class Column(NamedTuple):
    key: str
    header: str
    cell: Callable[[Option], str]
    sort: Callable[[Option], Any]
    """What the app sorts the column by."""
    right: bool = False


COLUMNS = (
    Column("rank", "#", lambda o: str(o.rank) if o.rank else "", lambda o: o.rank, right=True),
    Column("where", "where", cells.where, cells.where),
    Column("machine", "machine", cells.machine, cells.machine),
    Column("pricing", "pricing", cells.pricing, cells.pricing),
    Column("usd_per_hour", "$/h", lambda o: display.rate(o.rentable.usd_per_hour),
           lambda o: o.rentable.usd_per_hour, right=True),
    Column("time", "time", cells.time_span, lambda o: o.outcome.machine_seconds[0], right=True),
    Column("wait", "wait", cells.wait, lambda o: o.outcome.expected_wait_seconds, right=True),
    Column("cost", "cost", cells.cost_span, lambda o: o.cost_usd, right=True),
    Column("meet", "meet", lambda o: display.chance(o.outcome.p_meet),
           lambda o: -o.outcome.p_meet, right=True),
)  # fmt: skip
"""Every column, in the order shown."""
LEFT_OUT_FIRST = ("usd_per_hour", "meet", "wait", "where", "time", "pricing", "machine")
"""What a narrow screen loses first: ``#`` and cost always stay; machine and pricing go last,
where a screen (40 columns) cannot hold them beside a whole cost."""


class Fit(NamedTuple):
    shown: list[Column]
    left_out: list[str]
    """Headers of the columns left out."""
    needed: int
    """Width every column would need."""
    widths: dict[str, int]
    """Each column's width, by key: its widest cell or header."""


def fitting(
    options: Sequence[Option],
    width: int | None,
    *,
    between: int = 1,
    around: int = 0,
    with_deadline: bool = True,
) -> Fit:
    """The columns that fit ``width`` (None: all), ``between`` spaces between two columns and
    ``around`` in each (its padding); the wait only where some option waits, the chance to meet
    only under a deadline."""
    waits = any(o.outcome.expected_wait_seconds >= 1 for o in options)
    columns = [
        c for c in COLUMNS if (with_deadline or c.key != "meet") and (waits or c.key != "wait")
    ]
    widths = {
        c.key: max([len(c.header), *(len(display.plain(c.cell(o))) for o in options)])
        for c in columns
    }

    def needed(shown: list[Column]) -> int:
        return sum(widths[c.key] + around for c in shown) + between * (len(shown) - 1)

    full = needed(columns)
    left_out: list[str] = []
    for key in LEFT_OUT_FIRST:
        if width is None or needed(columns) <= width:
            break
        dropped = [c for c in columns if c.key == key]
        columns = [c for c in columns if c.key != key]
        left_out += [c.header for c in dropped]
    return Fit(columns, left_out, full, widths)


def legend(
    rec: Recommendation, options: Sequence[Option], fit: Fit, *, detail: str = "--explain"
) -> list[str]:
    """What the columns mean in a line, the marks' meanings where a shown option carries one,
    and what was left out (``detail``: where the stand-in is explained)."""
    shown = {c.key for c in fit.shown}
    parts = ["time, cost: p50-p90, billed"]
    if "wait" in shown:
        parts.append("wait: expected wait for a spot VM, not billed")
    if "meet" in shown and rec.constraints.deadline_seconds:
        parts.append("meet: chance in time")
    lines = ["; ".join(parts)]
    if any(o.outcome.prediction.measured for o in options):
        lines.append(f"{cells.MEASURED} time measured on that machine (advisor bench)")
    note = cells.stand_in_note(options, detail=detail)
    return lines + ([note] if note else [])


def left_out_line(fit: Fit, width: int, *, at: str, more: str) -> str | None:
    """``hidden at 80 columns: $/h, meet; widen by 19 or see --json`` (``at``: where, ``more``:
    where else the hidden figures are)."""
    if not fit.left_out:
        return None
    return f"hidden {at}: {', '.join(fit.left_out)}; widen by {fit.needed - width} or see {more}"
