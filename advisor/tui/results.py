"""The recommendation views: a sortable table, the chosen option's explanation, cost vs time.

They draw the engine's ``Recommendation`` (its options, frontier, fastest and cheapest on-demand)
in the command line's cells and columns (``advisor.recommend.cells``, ``columns``), so both
interfaces say the same thing. Catalog names are shown literally (``display.safe_text``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable, Static
from textual_plotext import PlotextPlot

from advisor import display
from advisor.recommend import cells, columns

if TYPE_CHECKING:
    from advisor.recommend.recommendation import Option, Recommendation


class ResultsTable(DataTable[Any]):
    """Ranked options, one line each, in the columns that fit (``columns.fitting``: the command
    line's columns and order); click a header (or press s) to sort by that column. Every layout
    posts ``Fitted`` so the app can say what was left out."""

    BINDINGS = [("s", "cycle_sort", "Sort")]  # noqa: RUF012

    class Fitted(Message):
        def __init__(self, fit: columns.Fit, width: int) -> None:
            super().__init__()
            self.fit, self.width = fit, width

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.cell_padding = 0  # one space before each column but the first, as on the command line
        self._rec: Recommendation | None = None
        self._options: dict[int, Option] = {}
        self._laid_out_at = 0
        self._sort_index = 0
        self._reverse = False
        self._last_key: str | None = None
        self.fit: columns.Fit | None = None

    def show(self, rec: Recommendation) -> None:
        self._rec = rec
        self._options = {o.rank: o for o in rec.options}
        self._lay_out()

    def on_resize(self) -> None:
        if self._rec is not None and self.size.width != self._laid_out_at:
            self._lay_out()

    def _lay_out(self) -> None:
        """Columns for this width, then the rows (a cell is never cut: a column that does not
        fit is left out whole)."""
        rec = self._rec
        if rec is None:
            return
        self._laid_out_at = self.size.width
        room = self.size.width - self.styles.scrollbar_size_vertical
        fit = columns.fitting(
            rec.options,
            room if room > 0 else None,
            with_deadline=rec.constraints.deadline_seconds is not None,
        )
        row = self.cursor_row
        self.clear(columns=True)
        self.fit = fit
        for c in fit.shown:  # fixed widths: right at once, not after the next idle
            space = "" if c.key == "rank" else " "
            self.add_column(space + c.header, key=c.key, width=fit.widths[c.key] + len(space))
        for option in rec.options:
            cells: list[Any] = [option.rank]
            for c in fit.shown[1:]:
                cell = display.safe_text(f" {c.cell(option)}")
                cell.style = "" if option.feasible else "dim"
                cell.justify = "right" if c.right else "left"
                cells.append(cell)
            self.add_row(*cells, key=str(option.rank))
        if 0 < row < self.row_count:
            self.move_cursor(row=row)
        self.post_message(self.Fitted(fit, max(room, 0)))

    def option(self, rank: int) -> Option | None:
        return self._options.get(rank)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        self._sort_by(str(event.column_key.value))

    def action_cycle_sort(self) -> None:
        shown = self.fit.shown if self.fit else []
        if shown:
            self._sort_index = (self._sort_index + 1) % len(shown)
            self._sort_by(shown[self._sort_index].key)

    def _sort_by(self, key: str) -> None:
        self._reverse = not self._reverse if self._last_key == key else False
        self._last_key = key
        value = next(column.sort for column in columns.COLUMNS if column.key == key)

        def sort_key(rank: int) -> tuple[int, Any]:
            option = self._options.get(rank)
            v = value(option) if option is not None else math.inf
            return (0, v) if isinstance(v, int | float) else (1, str(v))

        self.sort("rank", key=sort_key, reverse=self._reverse)


class ExplainPanel(Static):
    """The highlighted option, walked through: measurement, scaling, preemption, billing, cost."""

    def explain(self, option: Option | None, lines: list[str]) -> None:
        if option is None:
            self.update("Select an option to see why.")
            return
        head = Text(f"#{option.rank} ", style="bold")
        where = f"{cells.where(option)} {cells.machine(option)}"
        head.append(display.safe_text(where, style="bold"))
        head.append(display.safe_text(f" ({cells.pricing(option)})"))
        self.update(Text("\n").join([head, Text(""), display.safe_text("\n".join(lines))]))


class CostTimePlot(PlotextPlot):
    """Every candidate's p50 cost against its p50 time, the engine's cost/time frontier, the
    fastest and cheapest on-demand options and the deadline."""

    def show(self, rec: Recommendation | None) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        if rec is None or not rec.options:
            self.refresh()
            return
        longest = max(
            o.outcome.p50_seconds for o in rec.options if o.outcome.p50_seconds < math.inf
        )
        unit, size = ("minutes", 60.0) if longest < 5_400 else ("hours", 3_600.0)

        def x(options: tuple[Option, ...] | list[Option]) -> list[float]:
            return [o.outcome.p50_seconds / size for o in options]

        def y(options: tuple[Option, ...] | list[Option]) -> list[float]:
            return [o.cost_usd for o in options]

        shown = [o for o in rec.options if math.isfinite(o.outcome.p50_seconds)]
        plt.scatter(x(shown), y(shown), marker="dot", label="options")
        front = [o for o in rec.pareto if math.isfinite(o.outcome.p50_seconds)]
        if front:
            plt.plot(x(front), y(front), marker="braille", label="cost/time frontier")
        extremes = [o for o in (rec.fastest, rec.cheapest_on_demand) if o is not None]
        if extremes:
            plt.scatter(x(extremes), y(extremes), marker="x", label="fastest, cheapest on-demand")
        deadline = rec.constraints.deadline_seconds
        if deadline and deadline / size <= 2 * longest / size:
            plt.vline(deadline / size)
        plt.xlabel(f"time to finish, {unit} (p50)")
        plt.ylabel("cost USD (p50)")
        plt.title("cost vs time")
        self.refresh()
