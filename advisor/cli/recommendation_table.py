"""How a recommendation looks on the command line: the answer in words, then one line per option.

The answer comes from ``advisor.recommend.answer``, the ties from ``advisor.bench.settle``, the
short cells and the columns that fit the console's width from ``advisor.recommend.columns`` (the
app shows the same); the detail behind a cell is in ``--explain`` and ``--json``. An option
never spans two lines, and a column left out is said.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.table import Table
from rich.text import Text

from advisor import display
from advisor.bench.settle import tie_lines
from advisor.recommend import answer, columns
from advisor.recommend.recommendation import Option, Recommendation
from advisor.recommend.report import explain


def render_options(
    options: Sequence[Option],
    *,
    title: str | None = None,
    with_deadline: bool = True,
    width: int | None = None,
) -> tuple[Table, columns.Fit]:
    """The options, one line each, in the columns that fit ``width`` (``columns.fitting``)."""
    fit = columns.fitting(options, width, with_deadline=with_deadline)
    table = Table(
        title=title,
        header_style="bold",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=0,
    )
    for c in fit.shown:
        table.add_column(c.header, justify="right" if c.right else "left", no_wrap=True)
    for option in options:
        cells = [display.safe_text(c.cell(option)) for c in fit.shown]
        table.add_row(*cells, style=None if option.feasible else "dim")
    return table, fit


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
    table, fit = render_options(rec.options, with_deadline=with_deadline, width=width)
    notes = columns.legend(rec, rec.options, fit)
    notes += _hidden(fit, width)
    parts += [Text(""), table, display.safe_text("\n".join(notes), style="dim")]
    if pareto and rec.pareto:
        front, fit = render_options(
            rec.pareto, title="Cost/time frontier", with_deadline=with_deadline, width=width
        )
        parts += [Text(""), front]
        parts += [display.safe_text(line, style="dim") for line in _hidden(fit, width)]
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


def _hidden(fit: columns.Fit, width: int | None) -> list[str]:
    """The line that says which columns a ``width``-column console left out, if any."""
    line = (
        columns.left_out_line(fit, width, at=f"at {width} columns", more="--json")
        if width
        else None
    )
    return [line] if line else []


def render_explanation(rec: Recommendation, option: Option) -> Text:
    """``--explain``: the chosen option walked through."""
    return display.safe_text("\n".join(explain(rec, option)))
