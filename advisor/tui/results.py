"""The recommendation views: a sortable table, the chosen option's explanation, cost vs time.

They draw the engine's ``Recommendation`` (its options, frontier, fastest and cheapest on-demand)
with the command line's formatting (``advisor.display``), so both interfaces say the same thing.
Catalog names are shown literally (``display.safe_text``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widgets import DataTable, Static
from textual_plotext import PlotextPlot

from advisor import display

if TYPE_CHECKING:
    from advisor.recommend.recommendation import Option, Recommendation


def _where(o: Option) -> str:
    return f"{o.rentable.provider} {o.rentable.region}"


def _machine(o: Option) -> str:
    r = o.rentable
    shown = (
        f"{r.instance_type or '-'} ({display.machine(r.accelerator, r.accelerator_count, r.vcpus)})"
    )
    return f"{shown} \u2713" if o.outcome.prediction.measured else shown  # measured there


_PRICING = {"on_demand": "on-demand", "spot": "spot", "spot_fallback": "spot+OD"}
"""The third way to pay, spot with an on-demand fallback, in the column's nine characters."""


def _pricing(o: Option) -> str:
    return _PRICING.get(o.rentable.pricing, o.rentable.pricing)


def _risk(o: Option) -> str:
    """The spot risk in words (its source is in the explanation panel)."""
    if o.outcome.fallback is not None:
        return f"{o.outcome.fallback.on_demand_share:.0%} on-demand"
    if o.outcome.spot_risk is None:
        return "-"
    count = o.outcome.expected_preemptions
    return f"~{count:.0f} interruptions" if count >= 1.5 else f"~{count:.1f} interruptions"


Column = tuple[str, str, int, Callable[["Option"], str], Callable[["Option"], Any]]

COLUMNS: tuple[Column, ...] = (
    ("rank", "#", 3, lambda o: str(o.rank), lambda o: o.rank),
    ("where", "where", 17, _where, _where),
    ("machine", "machine", 23, _machine, _machine),
    ("time", "time p50-p90", 12,
     lambda o: display.duration_span(o.outcome.p50_seconds, o.outcome.p90_seconds),
     lambda o: o.outcome.p50_seconds),
    ("cost", "cost p50-p90", 15, lambda o: display.money_span(o.cost_usd, o.cost_usd_p90),
     lambda o: o.cost_usd),
    ("meet", "meet", 5, lambda o: display.chance(o.outcome.p_meet), lambda o: -o.outcome.p_meet),
    ("pricing", "pricing", 9, _pricing, _pricing),
    ("usd_per_hour", "$/h", 7, lambda o: display.rate(o.rentable.usd_per_hour),
     lambda o: o.rentable.usd_per_hour),
    ("risk", "spot risk", 18, _risk, lambda o: o.outcome.expected_preemptions),
)  # fmt: skip
"""Key, header, width, cell text, sort value. The first six fit 120 columns beside the form;
fixed widths keep the table's shape while it re-ranks (the snapshot tests rely on it)."""

_RIGHT = {"rank", "time", "cost", "meet", "usd_per_hour"}


class ResultsTable(DataTable[Any]):
    """Ranked options; click a header (or press s) to sort by that column."""

    BINDINGS = [("s", "cycle_sort", "Sort")]  # noqa: RUF012

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for key, label, width, _, _ in COLUMNS:
            self.add_column(label, key=key, width=width)
        self._sort_index = 0
        self._reverse = False
        self._options: dict[int, Option] = {}

    def show(self, options: tuple[Option, ...] | list[Option]) -> None:
        self.clear()
        self._options = {o.rank: o for o in options}
        for option in options:
            cells: list[Any] = [option.rank]
            for key, _, _, text, _ in COLUMNS[1:]:
                cell = display.safe_text(text(option))
                cell.justify = "right" if key in _RIGHT else "left"
                cell.style = "" if option.feasible else "dim"
                cells.append(cell)
            self.add_row(*cells, key=str(option.rank))

    def option(self, rank: int) -> Option | None:
        return self._options.get(rank)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        self._sort_by(str(event.column_key.value))

    def action_cycle_sort(self) -> None:
        self._sort_index = (self._sort_index + 1) % len(COLUMNS)
        self._sort_by(COLUMNS[self._sort_index][0])

    def _sort_by(self, key: str) -> None:
        self._reverse = not self._reverse if getattr(self, "_last_key", None) == key else False
        self._last_key = key
        value = next(column[4] for column in COLUMNS if column[0] == key)

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
        head.append(display.safe_text(f"{_where(option)} {_machine(option)}", style="bold"))
        head.append(f" ({_pricing(option)})")
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
        plt.xlabel(f"time, {unit} (p50)")
        plt.ylabel("cost USD (p50)")
        plt.title("cost vs time")
        self.refresh()
